//! Who is in the cluster: node counts by role, versions, and the lock style they imply.

use crate::model::datastore::Datastore;
use std::collections::BTreeMap;

use serde::Serialize;

use crate::distro::Distro;
use crate::model::cluster_state::ClusterState;
use crate::model::node::Readiness;
use crate::version::{LockStyle, ProductVersion};

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ClusterSummary {
    pub distro: Distro,
    /// False when the state has no Nodes (a dump without them).
    pub nodes_known: bool,
    pub servers: usize,
    pub agents: usize,
    pub etcd_members: usize,
    /// Etcd members whose Node is Ready.
    pub etcd_members_ready: usize,
    /// Kubelet versions, oldest first, with the nodes that run each.
    pub versions: Vec<VersionGroup>,
    /// How the oldest server writes its locks; `None` when no server version is known.
    pub lock_style: Option<LockStyle>,
    /// What the servers keep their state in, as far as the Nodes tell.
    pub datastore: Datastore,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct VersionGroup {
    pub version: String,
    pub nodes: Vec<String>,
    pub servers: usize,
}

impl ClusterSummary {
    pub(crate) fn build(state: &ClusterState, distro: Distro) -> ClusterSummary {
        let nodes = state.nodes();
        let mut groups: BTreeMap<(Option<ProductVersion>, String), VersionGroup> = BTreeMap::new();
        for node in nodes {
            let group = groups
                .entry((node.version.clone(), node.kubelet_version.clone()))
                .or_insert_with(|| VersionGroup {
                    version: if node.kubelet_version.is_empty() {
                        "(unknown)".to_string()
                    } else {
                        node.kubelet_version.clone()
                    },
                    nodes: Vec::new(),
                    servers: 0,
                });
            group.nodes.push(node.name.clone());
            group.servers += usize::from(node.is_server());
        }
        let servers = nodes.iter().filter(|n| n.is_server()).count();
        ClusterSummary {
            distro,
            nodes_known: state.nodes.is_some(),
            servers,
            agents: nodes.len() - servers,
            etcd_members: nodes.iter().filter(|n| n.is_etcd_member()).count(),
            etcd_members_ready: nodes
                .iter()
                .filter(|n| n.is_etcd_member() && n.readiness == Readiness::Ready)
                .count(),
            versions: groups.into_values().collect(),
            lock_style: oldest_server_version(state).map(|v| v.lock_style()),
            datastore: Datastore::of(state.nodes.as_deref(), distro),
        }
    }

    /// Distinct versions among servers; more than one means an upgrade is under way.
    pub(crate) fn server_versions(&self) -> Vec<&VersionGroup> {
        self.versions.iter().filter(|g| g.servers > 0).collect()
    }
}

/// The oldest version a server runs: older participants still read the older lock objects.
pub(crate) fn oldest_server_version(state: &ClusterState) -> Option<ProductVersion> {
    state
        .nodes()
        .iter()
        .filter(|n| n.is_server())
        .filter_map(|n| n.version.clone())
        .min()
}
