//! Keeping what the lease analysers read current through watches instead of re-reading it:
//! kube-system Leases, the two lock ConfigMaps of the distro, and Nodes. Watch errors (a 403, a
//! dropped connection, an expired resourceVersion) come back as lines to report while
//! kube-runtime's watcher retries with backoff; they never end the watch.

use std::pin::Pin;
use std::time::Duration;

use futures::stream::{self, Stream, StreamExt};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Node};
use kube::api::Api;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};

use super::connect::Connection;
use super::watched_objects::WatchedObjects;
use super::{ClusterState, Origin, ReadError};
use crate::distro::{Distro, LOCK_NAMESPACE};
use crate::model::configmap::ConfigMapFacts;
use crate::model::lease::LeaseFacts;
use crate::model::node::NodeFacts;

/// The apiserver ends a watch after `timeoutSeconds` and the watcher resumes it from the last
/// resourceVersion (no relist). It must end before the client's read timeout fires on a quiet
/// watch, or every quiet stretch would surface as an error.
const LONGEST_WATCH: Duration = Duration::from_secs(290);

/// What one step of the watches brought.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchNews {
    /// The watched objects changed (or a watch finished its first list).
    Changed,
    /// An event that changed nothing visible (a bookmark-like relist, a repeated object).
    Unchanged,
    /// A watch failed; it is being retried with backoff.
    Failed(String),
}

/// Boxed: a Node event is kilobytes, and most events are small Lease renewals.
enum Update {
    Lease(Box<Result<Event<Lease>, watcher::Error>>),
    Node(Box<Result<Event<Node>, watcher::Error>>),
    ConfigMap(usize, Box<Result<Event<ConfigMap>, watcher::Error>>),
}

type Updates = Pin<Box<dyn Stream<Item = Update> + Send>>;

pub struct LeaseWatch {
    updates: Updates,
    server: String,
    lock_configmap_names: Vec<String>,
    leases: WatchedObjects<LeaseFacts>,
    nodes: WatchedObjects<NodeFacts>,
    /// One watch per lock ConfigMap (a `metadata.name` field selector, which a role limited by
    /// resourceNames allows), so one watch's relist never hides the other's object.
    configmaps: Vec<WatchedObjects<ConfigMapFacts>>,
}

impl LeaseWatch {
    /// Starts the watches; nothing is read until [`LeaseWatch::next`] is polled.
    /// `request_timeout` is the connection's read timeout (`None`: no limit).
    pub fn start(
        conn: &Connection,
        distro: Distro,
        request_timeout: Option<Duration>,
    ) -> LeaseWatch {
        let config = watcher::Config::default().timeout(watch_timeout(request_timeout));
        let leases = watcher(
            Api::<Lease>::namespaced(conn.client.clone(), LOCK_NAMESPACE),
            config.clone(),
        )
        .map(|event| Update::Lease(Box::new(event)));
        let nodes = watcher(Api::<Node>::all(conn.client.clone()), config.clone())
            .map(|event| Update::Node(Box::new(event)));
        let names = vec![distro.core_lock(), distro.etcd_lock()];
        let mut updates: Vec<Updates> = vec![Box::pin(leases), Box::pin(nodes)];
        for (index, name) in names.iter().enumerate() {
            let api = Api::<ConfigMap>::namespaced(conn.client.clone(), LOCK_NAMESPACE);
            let one = config.clone().fields(&format!("metadata.name={name}"));
            updates.push(Box::pin(
                watcher(api, one).map(move |event| Update::ConfigMap(index, Box::new(event))),
            ));
        }
        LeaseWatch {
            updates: Box::pin(stream::select_all(updates)),
            server: conn.server.clone(),
            configmaps: names.iter().map(|_| WatchedObjects::default()).collect(),
            lock_configmap_names: names,
            leases: WatchedObjects::default(),
            nodes: WatchedObjects::default(),
        }
    }

    /// Waits for the next watch event and applies it.
    pub async fn next(&mut self) -> WatchNews {
        let Some(update) = self.updates.next().await else {
            // The watcher streams never end; this is only reachable if that changes.
            return WatchNews::Failed("every watch ended".into());
        };
        let changed = match update {
            Update::Lease(event) => match *event {
                Ok(event) => self.leases.apply(event, object_name, LeaseFacts::from_api),
                Err(e) => return self.failed(&e, "watch leases in kube-system"),
            },
            Update::Node(event) => match *event {
                Ok(event) => self.nodes.apply(event, object_name, NodeFacts::from_api),
                Err(e) => return self.failed(&e, "watch nodes"),
            },
            Update::ConfigMap(index, event) => match *event {
                Ok(event) => {
                    self.configmaps[index].apply(event, object_name, ConfigMapFacts::from_api)
                }
                Err(e) => {
                    let action = format!(
                        "watch configmap kube-system/{}",
                        self.lock_configmap_names[index]
                    );
                    return self.failed(&e, &action);
                }
            },
        };
        if changed {
            WatchNews::Changed
        } else {
            WatchNews::Unchanged
        }
    }

    /// Whether every watch has listed its objects once.
    pub fn synced(&self) -> bool {
        self.leases.synced() && self.nodes.synced() && self.configmaps.iter().all(|c| c.synced())
    }

    /// The watched objects as the state the analysers read.
    pub fn state(&self) -> ClusterState {
        ClusterState {
            origin: Origin::Live {
                server: self.server.clone(),
            },
            leases: Some(self.leases.values().cloned().collect()),
            nodes: Some(self.nodes.values().cloned().collect()),
            configmaps: Some(
                self.configmaps
                    .iter()
                    .flat_map(|c| c.values().cloned())
                    .collect(),
            ),
            ..ClusterState::default()
        }
    }

    fn failed(&self, error: &watcher::Error, action: &str) -> WatchNews {
        WatchNews::Failed(format!(
            "{}; retrying",
            describe(error, action, &self.server)
        ))
    }
}

fn watcher<K>(
    api: Api<K>,
    config: watcher::Config,
) -> impl Stream<Item = Result<Event<K>, watcher::Error>> + Send
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug + Send + 'static,
{
    watcher::watcher(api, config).default_backoff()
}

fn object_name<K: kube::Resource>(object: &K) -> String {
    object.meta().name.clone().unwrap_or_default()
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

/// A watch error in the words the one-shot reads use (`ReadError::from_kube`).
fn describe(error: &watcher::Error, action: &str, server: &str) -> String {
    match error {
        watcher::Error::InitialListFailed(e)
        | watcher::Error::WatchStartFailed(e)
        | watcher::Error::WatchFailed(e) => ReadError::from_kube(e, action, server).message,
        watcher::Error::WatchError(status) => format!(
            "{action}: the API server ended the watch: {} ({})",
            status.message, status.code
        ),
        watcher::Error::NoResourceVersion => {
            format!("{action}: {server} sent no resourceVersion to resume from")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_watches_end_before_the_read_timeout_would_fail_them() {
        assert_eq!(watch_timeout(Some(Duration::from_secs(30))), 25);
        assert_eq!(watch_timeout(Some(Duration::from_secs(3))), 1);
        assert_eq!(watch_timeout(Some(Duration::from_secs(3600))), 290);
        assert_eq!(watch_timeout(None), 290);
    }
}
