//! The machines' plan Secrets on Rancher's management cluster, an opt-in read (`k3sdoctor
//! rbac rancher` prints its Role): a plan holds the node's join token, so each Secret is
//! reduced to its plan's hash and the agent's checksums as its page is parsed, and nothing of
//! its data is kept, logged or put in an error.

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ListParams};

use crate::input::ReadError;
use crate::input::connect::Connection;
use crate::input::live::{Trace, list_cached};
use crate::model::rancher::machine_plan::{MachinePlan, PLAN_SECRET_TYPE};

/// What the machine-plan check says when the opt-in Role is not granted.
pub(crate) const NEEDS_ROLE: &str = "needs list secrets in the workspace: the opt-in Role \
     k3sdoctor-rancher-machine-plans (`k3sdoctor rbac rancher` prints it)";

/// `LIST secrets` of type `rke.cattle.io/machine-plan` in `workspace` (of one cluster when
/// `cluster` names it), each reduced to a [`MachinePlan`] at once, from the watch cache.
pub(super) async fn read_machine_plans(
    conn: &Connection,
    workspace: &str,
    cluster: Option<&str>,
    trace: Trace<'_>,
) -> Result<Vec<MachinePlan>, ReadError> {
    let api: Api<Secret> = Api::namespaced(conn.client.clone(), workspace);
    let mut params = ListParams::default().fields(&format!("type={PLAN_SECRET_TYPE}"));
    let mut action = format!("list secrets of type {PLAN_SECRET_TYPE} in {workspace}");
    if let Some(cluster) = cluster {
        params = params.labels(&format!("rke.cattle.io/cluster-name={cluster}"));
        action.push_str(&format!(" labelled rke.cattle.io/cluster-name={cluster}"));
    }
    let keep = |secret: Secret| {
        let json = serde_json::to_value(&secret).unwrap_or_default();
        drop(secret);
        let plan = MachinePlan::from_secret_json(&json);
        drop(json);
        plan
    };
    let plans = list_cached(&api, &action, conn, trace, keep, params)
        .await
        .map_err(|e| without_data(e, &action))?;
    Ok(plans.into_iter().flatten().collect())
}

/// A failure to read plan Secrets, with nothing a decoder may have quoted from an answer: the
/// API server's own refusal (a status code) is kept, anything else is named by its action only.
fn without_data(error: ReadError, action: &str) -> ReadError {
    if error.http_status.is_some() {
        return ReadError {
            detail: None,
            ..error
        };
    }
    ReadError {
        message: format!("could not {action}: its answer could not be read"),
        detail: None,
        ..error
    }
}
