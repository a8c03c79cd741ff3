//! Answers that come as errors: a watch the API server refuses or does not serve is not always a
//! failure. These decide which refusals mean "not there" or "not allowed here" (a check that does
//! not run) rather than a watch to retry and report.

use kube::runtime::watcher;

use super::{ClusterWatch, ENDPOINT_SLICES, ENDPOINTS, SERVICE_NAMESPACE, SNAPSHOT_FILES};
use crate::input::watch::watched_objects::WatchedObjects;

impl ClusterWatch {
    /// A 403 on the `kubernetes` Endpoints or EndpointSlices is an answer, not a failure: a
    /// role granted before these checks existed lacks the Role in `default`, and only
    /// `apiserver-endpoint-stale` goes unchecked. A 404 on the EndpointSlices (servers before
    /// Kubernetes 1.21) means there are none. The watcher keeps asking, so rights granted later
    /// are picked up.
    /// The ClusterRole's `list` of EndpointSlices (for the admission webhooks' Services) lets
    /// the list through without the Role's `watch`: a refused watch is the same answer.
    pub(super) fn endpoints_refused(&mut self, slot: usize, error: &watcher::Error) -> bool {
        let (status, verb) = match error {
            watcher::Error::InitialListFailed(kube::Error::Api(status)) => (status.code, "list"),
            watcher::Error::WatchStartFailed(kube::Error::Api(status)) => (status.code, "watch"),
            _ => return false,
        };
        match status {
            403 => {
                self.endpoints_not_read = Some(format!(
                    "this user may not {verb} {} in {SERVICE_NAMESPACE} (grant the Role k3sdoctor-read-only in \
                     {SERVICE_NAMESPACE}: `k3sdoctor rbac read-only` prints it)",
                    self.health[slot].resource
                ));
            }
            404 if slot == ENDPOINT_SLICES => {
                self.endpoint_slices = Some(WatchedObjects::default());
            }
            _ => return false,
        }
        let health = &mut self.health[slot];
        health.synced = true;
        health.absent = true;
        true
    }

    /// Clears a refusal once both watches list again; `true` when one was cleared.
    pub(super) fn endpoints_allowed_again(&mut self, slot: usize) -> bool {
        if !matches!(slot, ENDPOINTS | ENDPOINT_SLICES) || !self.health[slot].absent {
            return false;
        }
        let listed = match slot {
            ENDPOINTS => self.endpoints.as_ref().is_some_and(WatchedObjects::synced),
            _ => self
                .endpoint_slices
                .as_ref()
                .is_some_and(WatchedObjects::synced),
        };
        if !listed {
            return false;
        }
        self.health[slot].absent = false;
        if !self.health[ENDPOINTS].absent && !self.health[ENDPOINT_SLICES].absent {
            self.endpoints_not_read = None;
        }
        true
    }

    /// A 404 for the whole group is an answer, not a failure: the CRD is not installed
    /// (releases before Oct 2023), there are no snapshot files, and the snapshot check is
    /// skipped. The watcher keeps asking, so a CRD installed later is picked up.
    pub(super) fn snapshot_crd_absent(&mut self, error: &watcher::Error) -> bool {
        let absent = matches!(
            error,
            watcher::Error::InitialListFailed(kube::Error::Api(status)) if status.code == 404
        );
        if absent {
            self.snapshot_crd_missing = true;
            self.snapshot_files = Some(WatchedObjects::default());
            let health = &mut self.health[SNAPSHOT_FILES];
            health.synced = true;
            health.absent = true;
        }
        absent
    }
}
