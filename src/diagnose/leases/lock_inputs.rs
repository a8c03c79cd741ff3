//! What every step of judging a lock reads: the cluster state, the distro, the time and the
//! lock style (`LockInputs`), how far a holder's clock may lag, and the shape of the holder's
//! Node in every report.

use crate::model::datastore::Datastore;
use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use crate::distro::Distro;
use crate::model::cluster_state::ClusterState;
use crate::model::node::{IdentityMatch, NodeFacts, Readiness};
use crate::version::LockStyle;

/// How far a holder's clock may run behind ours before a lock counts as expired.
pub(crate) const CLOCK_SKEW_ALLOWANCE: SignedDuration = SignedDuration::from_secs(10);

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HolderNode {
    pub name: String,
    pub matched_by: IdentityMatch,
    pub readiness: Readiness,
    pub roles: Vec<String>,
    pub server: bool,
    pub version: String,
}

impl HolderNode {
    /// The one shape a lock holder's Node has in every report.
    pub(crate) fn of(node: &NodeFacts, matched_by: IdentityMatch) -> Self {
        HolderNode {
            name: node.name.clone(),
            matched_by,
            readiness: node.readiness,
            roles: node.roles(),
            server: node.is_server(),
            version: node.kubelet_version.clone(),
        }
    }
}

pub(crate) struct LockInputs<'a> {
    pub state: &'a ClusterState,
    pub distro: Distro,
    pub now: Timestamp,
    pub style: Option<LockStyle>,
    /// Whether the servers elect leaders at all follows from it.
    pub datastore: &'a Datastore,
}
