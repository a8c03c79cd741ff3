//! Rancher's side of one downstream cluster, as read from the management cluster or its dump.

use super::machine_plan::MachinePlan;
use super::management::{CapiMachine, ControlPlane, ManagementCluster, ProvisioningCluster};
use super::rancher_version::RancherVersion;
use super::snapshot_record::SnapshotRecord;

/// Rancher's side of one downstream cluster, or why it was not read. Never an error: a
/// management cluster k3sdoctor may not read leaves the downstream verdict as it is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RancherView {
    NotChecked { reason: String },
    Read(Box<RancherState>),
}

/// What was read from the management cluster about one downstream cluster. A collection is
/// `None` when it was not read, as in `ClusterState`.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct RancherState {
    /// Where: the management cluster's URL, or the files.
    pub source: String,
    /// How a suggested `kubectl` reaches the management cluster (`--context local`,
    /// `--server https://…/k8s/clusters/local`), empty when unknown.
    pub kubectl_target: String,
    pub version: Option<RancherVersion>,
    /// Why the version is not known, or how it was guessed.
    pub version_note: Option<String>,
    /// The backpopulate Feature's effective value; `None` when not read.
    pub backpopulate: Option<bool>,
    pub provisioning: ProvisioningCluster,
    pub management: Option<ManagementCluster>,
    /// The records labelled with this cluster's name.
    pub records: Option<Vec<SnapshotRecord>>,
    /// The CAPI Machines of this cluster.
    pub machines: Option<Vec<CapiMachine>>,
    pub control_plane: Option<ControlPlane>,
    /// The machines' plans as their Secrets show them (hashes, never data); `None` when not
    /// read (an opt-in role).
    pub machine_plans: Option<Vec<MachinePlan>>,
    /// Kinds the source lacks, with the command that adds them.
    pub gaps: Vec<String>,
}

impl RancherState {
    /// `kubectl <target> …` for the management cluster.
    pub(crate) fn kubectl(&self, rest: &str) -> String {
        match self.kubectl_target.as_str() {
            "" => format!("kubectl {rest}"),
            target => format!("kubectl {target} {rest}"),
        }
    }
}
