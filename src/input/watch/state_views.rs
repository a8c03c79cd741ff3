//! The watched objects seen as the `ClusterState` the analysers read: all of it for `check`, or
//! only what the lease analysers need, which leaves the large snapshot objects out.

use super::ClusterWatch;
use crate::input::watch::watched_objects::WatchedObjects;
use crate::model::apiserver_endpoints::ApiserverEndpoints;
use crate::model::cluster_state::{ClusterState, Origin};

impl ClusterWatch {
    /// The watched objects as the state the analysers read.
    pub fn state(&self) -> ClusterState {
        ClusterState {
            snapshot_files: self
                .snapshot_files
                .as_ref()
                .map(|f| f.values().cloned().collect()),
            snapshot_crd_missing: self.snapshot_crd_missing,
            kubernetes_endpoints: self.endpoints_read(&self.endpoints),
            kubernetes_endpoint_slices: self.endpoints_read(&self.endpoint_slices),
            endpoints_not_read: self.endpoints_not_read.clone(),
            ..self.state_with_configmaps(|_| true)
        }
    }

    /// A watched set as read, or `None` while the API server refuses it.
    pub(super) fn endpoints_read(
        &self,
        set: &Option<WatchedObjects<ApiserverEndpoints>>,
    ) -> Option<Vec<ApiserverEndpoints>> {
        if self.endpoints_not_read.is_some() {
            return None;
        }
        set.as_ref().map(|s| s.values().cloned().collect())
    }

    /// What the lease analysers read: without the (possibly thousands of) snapshot files and
    /// the snapshot ConfigMaps (up to 1 MiB each).
    pub fn lease_state(&self) -> ClusterState {
        self.state_with_configmaps(|index| self.lock_configmaps[index])
    }

    pub(super) fn state_with_configmaps(&self, wanted: impl Fn(usize) -> bool) -> ClusterState {
        ClusterState {
            origin: Origin::Live {
                server: self.server.clone(),
            },
            leases: Some(self.leases.values().cloned().collect()),
            nodes: Some(self.nodes.values().cloned().collect()),
            configmaps: Some(
                self.configmaps
                    .iter()
                    .enumerate()
                    .filter(|(index, _)| wanted(*index))
                    .flat_map(|(_, c)| c.values().cloned())
                    .collect(),
            ),
            ..ClusterState::default()
        }
    }

    /// When the Lease `name` was last renewed, as watched.
    pub fn lease_renewed(&self, name: &str) -> Option<jiff::Timestamp> {
        self.leases
            .values()
            .find(|l| l.name == name)
            .and_then(|l| l.record.renew_time)
    }
}
