//! The watched objects seen as the `ClusterState` the analysers read: all of it for `check`, or
//! only what the lease analysers need, which leaves the large snapshot objects out.

use super::ClusterWatch;
use crate::input::watch::watched_objects::WatchedObjects;
use crate::model::apiserver_endpoints::{ApiserverEndpoints, PublishedAddresses};
use crate::model::cluster_state::{ClusterState, Origin};
use crate::model::collected::Collected;

impl ClusterWatch {
    /// The watched objects as the state the analysers read.
    pub(crate) fn state(&self) -> ClusterState {
        ClusterState {
            snapshot_files: self
                .snapshot_files
                .as_ref()
                .map(|f| f.values().cloned().collect()),
            snapshot_crd_missing: self.snapshot_crd_missing,
            apiserver_addresses: self.apiserver_addresses(),
            ..self.state_with_configmaps(|_| true)
        }
    }

    /// The `kubernetes` Service's addresses as watched, or why the API server refuses them.
    fn apiserver_addresses(&self) -> Collected<PublishedAddresses> {
        if let Some(why) = &self.endpoints_not_read {
            return Collected::Refused(why.clone());
        }
        let read = |set: &Option<WatchedObjects<ApiserverEndpoints>>| {
            set.as_ref().map(|s| s.values().cloned().collect())
        };
        let (endpoints, slices) = (read(&self.endpoints), read(&self.endpoint_slices));
        if endpoints.is_none() && slices.is_none() {
            return Collected::NotAsked;
        }
        Collected::Read(PublishedAddresses { endpoints, slices })
    }

    /// What the lease analysers read: without the (possibly thousands of) snapshot files and
    /// the snapshot ConfigMaps (up to 1 MiB each).
    pub(crate) fn lease_state(&self) -> ClusterState {
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
    pub(crate) fn lease_renewed(&self, name: &str) -> Option<jiff::Timestamp> {
        self.leases
            .values()
            .find(|l| l.name == name)
            .and_then(|l| l.record.renew_time)
    }
}
