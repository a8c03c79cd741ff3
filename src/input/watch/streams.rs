//! The watches themselves: which resources, with which selectors and timeouts, merged into one
//! stream of updates for `ClusterWatch` to apply.

use std::pin::Pin;
use std::time::Duration;

use futures::stream::{self, Stream, StreamExt};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Endpoints, Node};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::Api;
use kube::runtime::watcher::{self, Event};

use super::WatchScope;
use super::relisting_watcher::watcher;
use crate::distro::LOCK_NAMESPACE;
use crate::input::connect::Connection;
use crate::input::live::snapshot_file_object::SnapshotFileObject;
use crate::model::apiserver_endpoints::{SERVICE_NAME, SERVICE_NAME_LABEL, SERVICE_NAMESPACE};

/// The apiserver ends a watch after `timeoutSeconds` and the watcher resumes it from the last
/// resourceVersion (no relist). It must end before the client's read timeout fires on a quiet
/// watch, or every quiet stretch would surface as an error.
const LONGEST_WATCH: Duration = Duration::from_secs(290);

/// Boxed: a Node event is kilobytes, and most events are small Lease renewals.
pub(super) enum Update {
    Lease(Box<Result<Event<Lease>, watcher::Error>>),
    Node(Box<Result<Event<Node>, watcher::Error>>),
    ConfigMap(usize, Box<Result<Event<ConfigMap>, watcher::Error>>),
    SnapshotFile(Box<Result<Event<SnapshotFileObject>, watcher::Error>>),
    Endpoints(Box<Result<Event<Endpoints>, watcher::Error>>),
    EndpointSlice(Box<Result<Event<EndpointSlice>, watcher::Error>>),
}

impl Update {
    /// `Init` and `InitApply`: a list under way, not yet a working watch.
    pub(super) fn starts_a_list(&self) -> bool {
        fn listing<K>(event: &Result<Event<K>, watcher::Error>) -> bool {
            matches!(event, Ok(Event::Init | Event::InitApply(_)))
        }
        match self {
            Update::Lease(e) => listing(e),
            Update::Node(e) => listing(e),
            Update::ConfigMap(_, e) => listing(e),
            Update::SnapshotFile(e) => listing(e),
            Update::Endpoints(e) => listing(e),
            Update::EndpointSlice(e) => listing(e),
        }
    }
}

pub(super) type Updates = Pin<Box<dyn Stream<Item = Update> + Send>>;

/// Opens the watches `scope` asks for, the ConfigMaps by `names` (one watch each, in order).
pub(super) fn streams(conn: &Connection, scope: &WatchScope, names: &[String]) -> Updates {
    let config = watcher::Config::default().timeout(watch_timeout(conn.read_timeout));
    let leases = watcher(
        Api::<Lease>::namespaced(conn.client.clone(), LOCK_NAMESPACE),
        config.clone(),
    )
    .map(|event| Update::Lease(Box::new(event)));
    let nodes = watcher(Api::<Node>::all(conn.client.clone()), config.clone())
        .map(|event| Update::Node(Box::new(event)));
    let mut updates: Vec<Updates> = vec![Box::pin(leases), Box::pin(nodes)];
    if scope.snapshots {
        // Decoded into the facts as each page or event is parsed, never kept whole
        //; the watcher lists in pages of 500 (its default `page_size`).
        let api = Api::<SnapshotFileObject>::all(conn.client.clone());
        updates.push(Box::pin(
            watcher(api, config.clone()).map(|event| Update::SnapshotFile(Box::new(event))),
        ));
        let endpoints = Api::<Endpoints>::namespaced(conn.client.clone(), SERVICE_NAMESPACE);
        let by_name = config
            .clone()
            .fields(&format!("metadata.name={SERVICE_NAME}"));
        updates.push(Box::pin(
            watcher(endpoints, by_name).map(|event| Update::Endpoints(Box::new(event))),
        ));
        let slices = Api::<EndpointSlice>::namespaced(conn.client.clone(), SERVICE_NAMESPACE);
        let by_label = config
            .clone()
            .labels(&format!("{SERVICE_NAME_LABEL}={SERVICE_NAME}"));
        updates.push(Box::pin(
            watcher(slices, by_label).map(|event| Update::EndpointSlice(Box::new(event))),
        ));
    }
    for (index, name) in names.iter().enumerate() {
        let api = Api::<ConfigMap>::namespaced(conn.client.clone(), LOCK_NAMESPACE);
        let one = config.clone().fields(&format!("metadata.name={name}"));
        updates.push(Box::pin(
            watcher(api, one).map(move |event| Update::ConfigMap(index, Box::new(event))),
        ));
    }
    Box::pin(stream::select_all(updates))
}

/// The ConfigMaps the analysers read, for every distro in scope.
pub(super) fn configmap_names(scope: &WatchScope) -> Vec<String> {
    scope
        .distros
        .iter()
        .flat_map(|d| {
            let mut names = vec![d.core_lock(), d.etcd_lock()];
            if scope.snapshots {
                names.extend([d.snapshots_configmap(), d.extra_metadata_configmap()]);
            }
            names
        })
        .collect()
}

/// Whole seconds, a little under the read timeout, so the server ends a quiet watch first.
pub(crate) fn watch_timeout(request_timeout: Option<Duration>) -> u32 {
    let longest = request_timeout
        .map(|t| {
            t.saturating_sub(Duration::from_secs(5))
                .max(Duration::from_secs(1))
        })
        .map_or(LONGEST_WATCH, |t| t.min(LONGEST_WATCH));
    u32::try_from(longest.as_secs()).unwrap_or(u32::MAX)
}
