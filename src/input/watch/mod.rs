//! Keeping what the analysers read current through watches instead of re-reading it:
//! kube-system Leases, Nodes, the distro's ConfigMaps (one watch each, by name) and, for
//! `serve`, ETCDSnapshotFiles and the `kubernetes` Service's Endpoints and EndpointSlices. Watch errors (a 403, a dropped connection, an expired
//! resourceVersion, a CRD that is not installed) come back as news to report while
//! kube-runtime's watcher retries with backoff; they never end the watch.

use std::sync::Arc;

use futures::stream::StreamExt;
use kube::runtime::watcher::{self, Event};

pub(crate) use self::streams::watch_timeout;
use self::streams::{Update, Updates, configmap_names, streams};
use self::watch_failure::{WatchFailure, WatchFailureReason, action, describe, reason};
use self::watched_objects::{Change, WatchedObjects};
use super::connect::Connection;
use super::live::snapshot_file_object::SnapshotFileObject;
use crate::distro::Distro;
use crate::model::apiserver_endpoints::{ApiserverEndpoints, SERVICE_NAMESPACE};
use crate::model::configmap::ConfigMapFacts;
use crate::model::kinds::Kind;
use crate::model::lease::LeaseFacts;
use crate::model::node::NodeFacts;
use crate::model::snapshot_file::SnapshotFile;

/// What to watch.
#[derive(Debug, Clone)]
pub(crate) struct WatchScope {
    /// Whose ConfigMaps to watch: one distro, or both while it is not known.
    pub distros: Vec<Distro>,
    /// Also the snapshot and extra-metadata ConfigMaps, the ETCDSnapshotFiles and the
    /// `kubernetes` Endpoints and EndpointSlices: everything `check` reads.
    pub snapshots: bool,
}

/// What one step of the watches brought.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WatchNews {
    /// The watched objects changed (or a watch finished its first list).
    Changed,
    /// An event that changed nothing visible (a relist that found the same objects).
    Unchanged,
    /// A lock renewed by its holder and nothing else: freshness moved on, no verdict did.
    Renewed,
    /// A watch failed; it is being retried with backoff.
    Failed(WatchFailure),
}

/// How one watch is doing, for readiness and metrics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WatchHealth {
    pub resource: String,
    /// Listed once (or found absent, for a CRD that is not installed).
    pub synced: bool,
    /// Its last attempt failed and no event has arrived since.
    pub failing: Option<WatchFailureReason>,
    /// The resource is not served (the ETCDSnapshotFile CRD is not installed) or, for the
    /// `kubernetes` Endpoints and EndpointSlices, not allowed (403): synced, and the check that
    /// needs it is not run.
    pub absent: bool,
}

/// Indexes into `ClusterWatch::health`.
const LEASES: usize = 0;
const NODES: usize = 1;
const SNAPSHOT_FILES: usize = 2;
const ENDPOINTS: usize = 3;
const ENDPOINT_SLICES: usize = 4;
/// The first ConfigMap watch; one slot per ConfigMap from here.
const CONFIGMAPS: usize = 5;

pub(crate) struct ClusterWatch {
    updates: Updates,
    server: String,
    leases: WatchedObjects<LeaseFacts>,
    nodes: WatchedObjects<NodeFacts>,
    /// One watch per ConfigMap (a `metadata.name` field selector, which a role limited by
    /// resourceNames allows), so one watch's relist never hides another's object.
    configmaps: Vec<WatchedObjects<ConfigMapFacts>>,
    /// Which of `configmaps` are lock copies (the rest hold snapshot records).
    lock_configmaps: Vec<bool>,
    snapshot_files: Option<WatchedObjects<Arc<SnapshotFile>>>,
    /// The ETCDSnapshotFile CRD answered 404: not installed (releases before Oct 2023).
    snapshot_crd_missing: bool,
    /// `Endpoints default/kubernetes` and the `kubernetes` EndpointSlices, when in scope.
    endpoints: Option<WatchedObjects<ApiserverEndpoints>>,
    endpoint_slices: Option<WatchedObjects<ApiserverEndpoints>>,
    /// Why they are not read: the API server refused them (403).
    endpoints_not_read: Option<String>,
    /// Leases, Nodes, ETCDSnapshotFiles (present or not), Endpoints, EndpointSlices, then one
    /// per ConfigMap.
    health: Vec<WatchHealth>,
}

impl ClusterWatch {
    /// Starts the watches; nothing is read until [`ClusterWatch::next`] is polled.
    pub(crate) fn start(conn: &Connection, scope: &WatchScope) -> ClusterWatch {
        let names = configmap_names(scope);
        let updates = streams(conn, scope, &names);
        let health = [
            "leases",
            "nodes",
            Kind::SnapshotFile.row().plural,
            "endpoints/kubernetes",
            "endpointslices",
        ]
        .into_iter()
        .map(str::to_string)
        .chain(names.iter().map(|n| format!("configmaps/{n}")))
        .map(|resource| WatchHealth {
            resource,
            synced: false,
            failing: None,
            absent: false,
        })
        .collect::<Vec<_>>();
        let mut watch = ClusterWatch {
            updates,
            server: conn.server.clone(),
            configmaps: names.iter().map(|_| WatchedObjects::default()).collect(),
            lock_configmaps: names
                .iter()
                .map(|n| {
                    scope
                        .distros
                        .iter()
                        .any(|d| *n == d.core_lock() || *n == d.etcd_lock())
                })
                .collect(),
            leases: WatchedObjects::default(),
            nodes: WatchedObjects::default(),
            snapshot_files: scope.snapshots.then(WatchedObjects::default),
            snapshot_crd_missing: false,
            endpoints: scope.snapshots.then(WatchedObjects::default),
            endpoint_slices: scope.snapshots.then(WatchedObjects::default),
            endpoints_not_read: None,
            health,
        };
        // Not watched, so never waited for.
        for slot in [SNAPSHOT_FILES, ENDPOINTS, ENDPOINT_SLICES] {
            watch.health[slot].synced = !scope.snapshots;
        }
        watch
    }

    /// Waits for the next watch event and applies it.
    pub(crate) async fn next(&mut self) -> WatchNews {
        let Some(update) = self.updates.next().await else {
            // The watcher streams never end; this is only reachable if that changes.
            return WatchNews::Failed(WatchFailure {
                resource: "all".into(),
                reason: WatchFailureReason::Other,
                line: "every watch ended".into(),
            });
        };
        // A watch works again once it has listed its objects (or delivered a change after
        // that), not when a fresh list merely starts: that list may fail too.
        let listing = update.starts_a_list();
        let (slot, result) = self.apply(update);
        match result {
            Ok(change) => {
                if !listing {
                    self.health[slot].failing = None;
                }
                let was_refused = self.endpoints_allowed_again(slot);
                self.health[slot].synced |= self.synced_at(slot);
                match change {
                    _ if was_refused && self.synced_at(slot) => WatchNews::Changed,
                    Change::Changed => WatchNews::Changed,
                    Change::Renewal => WatchNews::Renewed,
                    Change::None => WatchNews::Unchanged,
                }
            }
            Err(error) if slot == SNAPSHOT_FILES && self.snapshot_crd_absent(&error) => {
                WatchNews::Failed(WatchFailure {
                    resource: self.health[slot].resource.clone(),
                    reason: WatchFailureReason::NotFound,
                    line: format!(
                        "etcdsnapshotfiles.k3s.cattle.io is not served by {} (the CRD is not installed, as before \
                         Oct 2023): the snapshot check is skipped; asking again with backoff",
                        self.server
                    ),
                })
            }
            Err(error)
                if matches!(slot, ENDPOINTS | ENDPOINT_SLICES)
                    && self.endpoints_refused(slot, &error) =>
            {
                WatchNews::Failed(WatchFailure {
                    resource: self.health[slot].resource.clone(),
                    reason: WatchFailureReason::Forbidden,
                    line: format!(
                        "{} answered 403 for the kubernetes {} in {SERVICE_NAMESPACE}: apiserver-endpoint-stale is not \
                         checked (grant the Role k3sdoctor-read-only in {SERVICE_NAMESPACE}: `k3sdoctor rbac read-only` prints it); asking again \
                         with backoff",
                        self.server, self.health[slot].resource
                    ),
                })
            }
            Err(error) => self.failed(slot, &error),
        }
    }

    /// An update applied to the watched set it belongs to: its slot, and what it changed.
    fn apply(&mut self, update: Update) -> (usize, Result<Change, watcher::Error>) {
        match update {
            Update::Lease(event) => (
                LEASES,
                event.map(|e| {
                    self.leases.apply_telling_renewals(
                        e,
                        object_name,
                        LeaseFacts::from_api,
                        LeaseFacts::renewed_only,
                    )
                }),
            ),
            Update::Node(event) => (
                NODES,
                event.map(|e| changed(self.nodes.apply(e, object_name, NodeFacts::from_api))),
            ),
            Update::ConfigMap(index, event) => (
                CONFIGMAPS + index,
                event.map(|e| {
                    self.configmaps[index].apply_telling_renewals(
                        e,
                        object_name,
                        ConfigMapFacts::from_api,
                        ConfigMapFacts::renewed_only,
                    )
                }),
            ),
            Update::SnapshotFile(event) => (
                SNAPSHOT_FILES,
                self.apply_snapshot_file(*event).map(changed),
            ),
            Update::Endpoints(event) => (
                ENDPOINTS,
                event.map(|e| {
                    let set = self.endpoints.get_or_insert_with(WatchedObjects::default);
                    changed(set.apply(e, object_name, ApiserverEndpoints::from_endpoints))
                }),
            ),
            Update::EndpointSlice(event) => (
                ENDPOINT_SLICES,
                event.map(|e| {
                    let set = self
                        .endpoint_slices
                        .get_or_insert_with(WatchedObjects::default);
                    changed(set.apply(e, object_name, ApiserverEndpoints::from_slice))
                }),
            ),
        }
    }

    fn apply_snapshot_file(
        &mut self,
        event: Result<Event<SnapshotFileObject>, watcher::Error>,
    ) -> Result<bool, watcher::Error> {
        let files = self
            .snapshot_files
            .get_or_insert_with(WatchedObjects::default);
        let event = event?;
        let was_missing = std::mem::take(&mut self.snapshot_crd_missing);
        self.health[SNAPSHOT_FILES].absent = false;
        let changed = files.apply(event, object_name, |o| o.file.clone());
        Ok(changed || (was_missing && files.synced()))
    }

    fn synced_at(&self, slot: usize) -> bool {
        match slot {
            LEASES => self.leases.synced(),
            NODES => self.nodes.synced(),
            SNAPSHOT_FILES => {
                self.snapshot_crd_missing || self.snapshot_files.as_ref().is_none_or(|f| f.synced())
            }
            ENDPOINTS => {
                self.health[ENDPOINTS].absent || self.endpoints.as_ref().is_none_or(|e| e.synced())
            }
            ENDPOINT_SLICES => {
                self.health[ENDPOINT_SLICES].absent
                    || self.endpoint_slices.as_ref().is_none_or(|e| e.synced())
            }
            configmap => self.configmaps[configmap - CONFIGMAPS].synced(),
        }
    }

    /// Whether every watch has listed its objects once.
    pub(crate) fn synced(&self) -> bool {
        self.health.iter().all(|h| h.synced)
    }

    /// How each watch is doing.
    pub(crate) fn health(&self) -> impl Iterator<Item = &WatchHealth> {
        let files_watched = self.snapshot_files.is_some();
        self.health
            .iter()
            .enumerate()
            .filter(move |(slot, _)| {
                !matches!(*slot, SNAPSHOT_FILES | ENDPOINTS | ENDPOINT_SLICES) || files_watched
            })
            .map(|(_, health)| health)
    }

    fn failed(&mut self, slot: usize, error: &watcher::Error) -> WatchNews {
        let resource = self.health[slot].resource.clone();
        let reason = reason(error);
        self.health[slot].failing = Some(reason);
        WatchNews::Failed(WatchFailure {
            line: format!(
                "{}; retrying",
                describe(error, &action(&resource), &self.server)
            ),
            resource,
            reason,
        })
    }
}

fn changed(yes: bool) -> Change {
    if yes { Change::Changed } else { Change::None }
}

fn object_name<K: kube::Resource>(object: &K) -> String {
    object.meta().name.clone().unwrap_or_default()
}

mod refusals;
mod relisting_watcher;
mod state_views;
pub(crate) mod streams;
#[cfg(test)]
mod tests;
pub(crate) mod watch_failure;
mod watched_objects;
