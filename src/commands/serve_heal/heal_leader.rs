//! Several `serve --heal` replicas: only the holder of the coordination Lease `k3sdoctor-heal`
//! (in serve's own namespace) heals, through kube-lease-manager's election. Losing the Lease
//! mid-move cannot double-move: every gate is judged again right before the write and the
//! write carries the resourceVersion it judged, so a second replica's move is a 409 judged
//! again (and found done), never a blind write.
//!
//! The election is driven here (`LeaseManager::changed`), not by the crate's `watch()`, which
//! logs its API errors itself (a `Status { .. }` debug dump) and only ever reports "not the
//! leader": a replica the API server refuses the Lease (403) must say so, naming the verbs it
//! lacks and the heal role, not claim another replica holds the Lease.

use std::sync::Arc;
use std::time::Duration;

use kube_lease_manager::{LeaseManager, LeaseManagerBuilder, LeaseManagerError};
use tokio::sync::watch;

use crate::distro::LOCK_NAMESPACE;
use crate::events::event_apply::this_instance;
use crate::heal::heal_gates::{Blocked, Gate};
use crate::input::ReadError;
use crate::input::connect::Connection;
use crate::input::live::own_access_review::may_in;

/// The coordination Lease the replicas elect a healer with.
pub(crate) const HEAL_LEASE: &str = "k3sdoctor-heal";

/// The heal Lease's duration and how long before its expiry the holder renews it.
const LEASE_SECONDS: u64 = 15;
const GRACE_SECONDS: u64 = 5;

/// How long to wait before trying again when the Lease cannot be used (403, no answer).
const RETRY: Duration = Duration::from_secs(15);

/// How long a stopping serve waits for the Lease to be released, so that another replica
/// takes over at once rather than after the Lease's duration.
const RELEASE_LIMIT: Duration = Duration::from_secs(3);

/// What the heal role grants on the heal Lease, and why: the election gets, creates and
/// patches it; the guardrails (`heal_guardrails`) are written with a conditioned update.
const LEASE_VERBS: [&str; 4] = ["get", "create", "patch", "update"];

/// Where this replica stands in the election.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Election {
    /// The first answer has not come yet.
    Starting,
    /// Another replica holds the Lease.
    Follower,
    Leader,
    /// The API server refused this replica the Lease (403): the sentence to show.
    Denied(String),
    /// The Lease could not be used for another reason (no answer, 5xx): the sentence.
    Unavailable(String),
}

impl Election {
    pub(crate) fn is_leader(&self) -> bool {
        *self == Election::Leader
    }

    /// Why this replica may not heal now; `None` when it holds the Lease.
    pub(crate) fn blocked(&self, namespace: &str) -> Option<Blocked> {
        let lease = format!("{namespace}/{HEAL_LEASE}");
        let (gate, why) = match self {
            Election::Leader => return None,
            Election::Starting => (
                Gate::NotLeader,
                format!(
                    "the election of the replica that heals (Lease {lease}) has not answered yet"
                ),
            ),
            Election::Follower => (
                Gate::NotLeader,
                format!("another replica holds the heal Lease {lease}"),
            ),
            Election::Denied(why) => (Gate::ElectionDenied, why.clone()),
            Election::Unavailable(why) => (Gate::NotLeader, why.clone()),
        };
        Some(Blocked { gate, why })
    }
}

/// The Pod's namespace (its service account's), else kube-system.
pub(crate) fn heal_lease_namespace() -> String {
    std::fs::read_to_string("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
        .ok()
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| LOCK_NAMESPACE.to_string())
}

/// This process's identity in the election: unique per process, as two replicas on one host
/// (tests) must not share one.
pub(crate) fn heal_identity() -> String {
    format!("{}_{}", this_instance(), std::process::id())
}

/// Where this replica stands, as it changes, and the task that ends, the Lease released,
/// once every receiver is dropped.
pub(crate) fn elect(
    conn: &Arc<Connection>,
    namespace: String,
    identity: String,
) -> (watch::Receiver<Election>, tokio::task::JoinHandle<()>) {
    let (tx, rx) = watch::channel(Election::Starting);
    let conn = conn.clone();
    let task = tokio::spawn(async move {
        let mut reported: Option<Election> = None;
        loop {
            let built = LeaseManagerBuilder::new(conn.client.clone(), HEAL_LEASE)
                .with_namespace(namespace.clone())
                .with_identity(identity.clone())
                .with_duration(LEASE_SECONDS)
                .with_grace(GRACE_SECONDS)
                .build()
                .await;
            let failure = match built {
                Ok(manager) => {
                    // The Lease exists (or was just created): held by another replica, or
                    // about to be taken by this one (`changed` answers as soon as it is).
                    reported = None;
                    if tx.send(Election::Follower).is_err() {
                        return;
                    }
                    match follow(&manager, &tx, &identity, &namespace).await {
                        Followed::Stopped => {
                            let _ = tokio::time::timeout(RELEASE_LIMIT, manager.release()).await;
                            return;
                        }
                        Followed::Failed(e) => e,
                    }
                }
                Err(e) => e,
            };
            let state = judge_failure(&conn, &namespace, &failure).await;
            // One line per kind of failure, not one every retry.
            if reported.as_ref() != Some(&state) {
                if let Election::Denied(why) | Election::Unavailable(why) = &state {
                    tracing::warn!("heal: {why}");
                }
                reported = Some(state.clone());
            }
            if tx.send(state).is_err() {
                return;
            }
            tokio::select! {
                () = tokio::time::sleep(RETRY) => {}
                () = tx.closed() => return,
            }
        }
    });
    (rx, task)
}

enum Followed {
    /// serve is stopping.
    Stopped,
    Failed(LeaseManagerError),
}

/// Runs the election until it fails or serve stops, sending each change.
async fn follow(
    manager: &LeaseManager,
    tx: &watch::Sender<Election>,
    identity: &str,
    namespace: &str,
) -> Followed {
    loop {
        tokio::select! {
            changed = manager.changed() => match changed {
                Ok(leader) => {
                    tracing::info!(
                        identity = %identity,
                        "heal: {} the Lease {namespace}/{HEAL_LEASE}",
                        if leader { "holding" } else { "not holding" }
                    );
                    let state = if leader { Election::Leader } else { Election::Follower };
                    if tx.send(state).is_err() {
                        return Followed::Stopped;
                    }
                }
                Err(e) => return Followed::Failed(e),
            },
            () = tx.closed() => return Followed::Stopped,
        }
    }
}

/// A failed election step in one line: a 403 names the verbs the heal role grants on the
/// Lease that this user lacks (asked with SelfSubjectAccessReviews), anything else what
/// failed; never the API error's debug form.
async fn judge_failure(
    conn: &Connection,
    namespace: &str,
    failure: &LeaseManagerError,
) -> Election {
    let lease = format!("lease {namespace}/{HEAL_LEASE}");
    let kube = match failure {
        LeaseManagerError::KubeError(e) => e,
        other => {
            return Election::Unavailable(format!(
                "cannot use the {lease} to elect the replica that heals: {other}; not healing until it can"
            ));
        }
    };
    let read = ReadError::from_kube(kube, &format!("use the {lease}"), &conn.server);
    if read.http_status != Some(403) {
        return Election::Unavailable(format!(
            "{}; not healing until the election works (gate not-leader)",
            read.message
        ));
    }
    let mut denied = Vec::new();
    for verb in LEASE_VERBS {
        let name = (verb != "create").then_some(HEAL_LEASE);
        match may_in(conn, namespace, "coordination.k8s.io", "leases", verb, name).await {
            Ok(true) => {}
            Ok(false) => denied.push(verb),
            // The review itself failed: say what the API server said about the Lease.
            Err(_) => {
                denied.clear();
                break;
            }
        }
    }
    let what = if denied.is_empty() {
        let status = match kube {
            kube::Error::Api(status) => status
                .message
                .lines()
                .next()
                .unwrap_or_default()
                .trim()
                .to_string(),
            _ => String::new(),
        };
        format!("the API server refused this replica the {lease} (403 Forbidden: {status})")
    } else {
        format!(
            "the API server refused this replica the {lease}: not allowed to {} leases.coordination.k8s.io \"{HEAL_LEASE}\" in {namespace}",
            denied.join(", ")
        )
    };
    Election::Denied(format!(
        "{what}; not healing; bind the heal role to this account (`k3sdoctor rbac heal` prints it)"
    ))
}
