//! Recording a repair's Event (`repair_event`) in kube-system. The Event is the trail, not
//! the repair: a failure to record it (most often a 403 for a role without `create` on
//! events.k8s.io events) is a line for the operator, never a failed repair, and it is never
//! retried.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, PostParams};

use super::repair_event::{RepairEvent, reporting_instance};
use crate::apply::FIELD_MANAGER;
use crate::distro::LOCK_NAMESPACE;
use crate::input::ReadError;
use crate::input::connect::Connection;

/// An Event must not hold up the report of a repair that is done.
const RECORD_LIMIT: Duration = Duration::from_secs(10);

/// Creates the Event at `now`; `Err` is the line to show (or log) when it could not be.
pub(crate) async fn record_event(
    conn: &Connection,
    event: &RepairEvent,
    now: Timestamp,
) -> Result<String, String> {
    let object = event.to_event(now, &this_instance());
    let name = object.metadata.name.clone().unwrap_or_default();
    let api: Api<Event> = Api::namespaced(conn.client.clone(), LOCK_NAMESPACE);
    let params = PostParams {
        dry_run: false,
        field_manager: Some(FIELD_MANAGER.to_string()),
    };
    let action = "create events.events.k8s.io in kube-system";
    let failed = |why: String| {
        format!(
            "could not record the {} Event on {} {}/{}: {why}; the repair itself is not affected (the repair \
             and heal roles have create on events.k8s.io events: `k3sdoctor rbac repair`, `k3sdoctor rbac heal`)",
            event.reason.as_str(),
            event.regarding.kind,
            LOCK_NAMESPACE,
            event.regarding.name
        )
    };
    match tokio::time::timeout(RECORD_LIMIT, api.create(&params, &object)).await {
        Ok(Ok(_)) => Ok(name),
        Ok(Err(e)) => Err(failed(
            ReadError::from_kube(&e, action, &conn.server).message,
        )),
        Err(_) => Err(failed(format!(
            "no answer within {} s",
            RECORD_LIMIT.as_secs()
        ))),
    }
}

/// This process's `reportingInstance`: the host name, and the Pod's when the downward API
/// gives it (deploy/ sets `NODE_NAME` and `POD_NAME`).
pub(crate) fn this_instance() -> String {
    let env = |name: &str| std::env::var(name).ok();
    reporting_instance(
        &host_name(),
        env("NODE_NAME").as_deref(),
        env("POD_NAME").as_deref(),
    )
}

fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at most that much.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "unknown-host".to_string();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let name = String::from_utf8_lossy(&buf[..end]).into_owned();
    if name.is_empty() {
        "unknown-host".to_string()
    } else {
        name
    }
}
