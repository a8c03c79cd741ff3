//! The I/O half of `snapshots backfill`: read the ConfigMap as it is, back it up, and write
//! the planned data with the resourceVersion that was read.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ObjectMeta, PostParams};

use crate::apply::{FIELD_MANAGER, WriteError};
use crate::distro::LOCK_NAMESPACE;
use crate::input::ReadError;
use crate::input::connect::Connection;
use crate::input::live::own_access_review::{WriterRole, denied, may};

pub(super) async fn read_configmap(
    conn: &Connection,
    name: &str,
) -> Result<Option<ConfigMap>, ReadError> {
    let api: Api<ConfigMap> = Api::namespaced(conn.client.clone(), LOCK_NAMESPACE);
    api.get_opt(name).await.map_err(|e| {
        ReadError::from_kube(
            &e,
            &format!("get configmap kube-system/{name}"),
            &conn.server,
        )
    })
}

/// Whether this user may make the one write the plan needs (`update`, or `create` when the
/// ConfigMap does not exist yet; create cannot be limited by name).
pub(super) async fn check_permission(
    conn: &Connection,
    name: &str,
    create: bool,
) -> Result<(), ReadError> {
    let verb = if create { "create" } else { "update" };
    if may(conn, "", "configmaps", verb, (!create).then_some(name)).await? {
        Ok(())
    } else {
        Err(denied(verb, "configmaps", name, WriterRole::Repair))
    }
}

/// Replaces the data (PUT with the read resourceVersion, so a change made since the read is a
/// 409, not overwritten) or creates the ConfigMap.
pub(super) async fn write_configmap(
    conn: &Connection,
    name: &str,
    data: &BTreeMap<String, String>,
    original: Option<&ConfigMap>,
    dry_run: bool,
) -> Result<ConfigMap, WriteError> {
    let api: Api<ConfigMap> = Api::namespaced(conn.client.clone(), LOCK_NAMESPACE);
    let params = PostParams {
        dry_run,
        field_manager: Some(FIELD_MANAGER.to_string()),
    };
    let verb = match (dry_run, original.is_some()) {
        (true, true) => "dry-run update",
        (true, false) => "dry-run create",
        (false, true) => "update",
        (false, false) => "create",
    };
    let fail = |e: kube::Error| {
        WriteError::from_kube(
            &e,
            &format!("{verb} configmap kube-system/{name}"),
            &conn.server,
            dry_run,
        )
    };
    match original {
        Some(cm) => {
            let mut next = cm.clone();
            next.metadata.managed_fields = None;
            next.data = Some(data.clone());
            api.replace(name, &params, &next).await.map_err(fail)
        }
        None => {
            let cm = ConfigMap {
                metadata: ObjectMeta {
                    name: Some(name.to_string()),
                    namespace: Some(LOCK_NAMESPACE.to_string()),
                    ..Default::default()
                },
                data: Some(data.clone()),
                ..Default::default()
            };
            api.create(&params, &cm).await.map_err(fail)
        }
    }
}
