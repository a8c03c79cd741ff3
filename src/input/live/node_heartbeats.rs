//! The kubelets' heartbeats: each Node's Lease in kube-node-lease, renewed every 10 s. Only
//! the repairs read them, for the gates that must not trust a Ready condition that lags.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, ListParams};

use super::refusal::read_or_refused;
use super::{Connection, PAGE_SIZE, ReadError, Trace, list_with};
use crate::model::cluster_state::ClusterState;
use crate::model::collected::Collected;

pub(super) const NAMESPACE: &str = "kube-node-lease";

/// The heartbeats into `state`: each Node's `renewTime`, or why they were refused.
pub(crate) fn fill_heartbeats(
    read: Collected<BTreeMap<String, Timestamp>>,
    state: &mut ClusterState,
) {
    state.heartbeats = read.map(|beats| {
        for node in state.nodes.iter_mut().flatten() {
            node.heartbeat = beats.get(&node.name).copied();
        }
    });
}

/// `LIST /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases`, paged. A 403 is an
/// answer: the gates then judge by Ready alone and say so.
pub(crate) async fn read_node_heartbeats(
    conn: &Connection,
    trace: Trace<'_>,
) -> Result<Collected<BTreeMap<String, Timestamp>>, ReadError> {
    let api: Api<Lease> = Api::namespaced(conn.client.clone(), NAMESPACE);
    let action = format!("list leases in {NAMESPACE}");
    let params = ListParams::default().limit(PAGE_SIZE);
    let renewed = |lease: Lease| {
        let name = lease.metadata.name?;
        let renew = lease.spec?.renew_time?;
        Some((name, renew.0))
    };
    let beats = list_with(&api, &action, conn, trace, renewed, params)
        .await
        .map(|beats| beats.into_iter().flatten().collect());
    read_or_refused(
        beats,
        trace,
        "the quorum and target gates judge by Ready alone",
        |_| {
            format!(
                "this user may not list leases in {NAMESPACE} (`k3sdoctor rbac read-only` prints the role)"
            )
        },
    )
}
