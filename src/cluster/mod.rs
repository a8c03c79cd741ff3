//! Getting objects: from a live API server (`live`) or from `kubectl get -o yaml|json`
//! output (`dump`). Both fill the same `ClusterState`, which the rest of the tool reads.

pub mod connect;
pub mod dump;
pub mod dump_coverage;
pub mod live;
mod read_error;

use std::path::PathBuf;

use jiff::Timestamp;

use crate::distro::Distro;
use crate::model::configmap::ConfigMapFacts;
use crate::model::lease::LeaseFacts;
use crate::model::node::NodeFacts;
use crate::model::snapshot_file::SnapshotFile;

pub use read_error::ReadError;

/// Everything k3sdoctor read. A collection is `None` when it was not read (a dump that lacks
/// it), which is different from read and empty: checks that need it must say so rather than
/// report a healthy result.
#[derive(Debug, Clone, Default)]
pub struct ClusterState {
    pub origin: Origin,
    pub nodes: Option<Vec<NodeFacts>>,
    /// Leases in kube-system.
    pub leases: Option<Vec<LeaseFacts>>,
    /// ConfigMaps in kube-system that k3sdoctor reads (lock copies, snapshot records).
    pub configmaps: Option<Vec<ConfigMapFacts>>,
    /// ETCDSnapshotFiles; `None` when not read (not asked for, or not in the dump).
    pub snapshot_files: Option<Vec<SnapshotFile>>,
    /// The API server does not serve `k3s.cattle.io/v1` ETCDSnapshotFiles (CRD not installed).
    pub snapshot_crd_missing: bool,
    /// The newest time found in the objects: the default `now` for a dump.
    pub newest_timestamp: Option<Timestamp>,
    /// The API server's clock when it was read (its `Date` header): the default `now` live.
    pub server_time: Option<Timestamp>,
    /// Things worth telling the user about how the state was read (duplicates, skipped objects).
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Origin {
    #[default]
    Unknown,
    Live {
        server: String,
    },
    Dump {
        paths: Vec<PathBuf>,
    },
}

impl Origin {
    pub fn is_dump(&self) -> bool {
        matches!(self, Origin::Dump { .. })
    }
}

impl ClusterState {
    pub fn lease(&self, name: &str) -> Option<&LeaseFacts> {
        self.leases.as_ref()?.iter().find(|l| l.name == name)
    }

    pub fn configmap(&self, name: &str) -> Option<&ConfigMapFacts> {
        self.configmaps.as_ref()?.iter().find(|c| c.name == name)
    }

    pub fn nodes(&self) -> &[NodeFacts] {
        self.nodes.as_deref().unwrap_or_default()
    }

    /// `--distro auto`: the lock names first (a cluster has the locks of the product that
    /// runs it), then the ConfigMap-only locks of old versions, then the node versions.
    pub fn detect_distro(&self) -> Option<Distro> {
        let from_leases = self
            .leases
            .iter()
            .flatten()
            .find_map(|l| Distro::owning_lock(&l.name));
        let from_configmaps = || {
            self.configmaps
                .iter()
                .flatten()
                .filter(|c| c.leader_record().is_some())
                .find_map(|c| Distro::owning_lock(&c.name))
        };
        let from_nodes = || {
            self.nodes()
                .iter()
                .filter(|n| n.is_server())
                .chain(self.nodes())
                .find_map(|n| n.version.as_ref()?.distro())
        };
        from_leases.or_else(from_configmaps).or_else(from_nodes)
    }
}
