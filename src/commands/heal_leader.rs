//! Several `serve --heal` replicas: only the holder of the coordination Lease `k3sdoctor-heal`
//! (in serve's own namespace) heals, through kube-lease-manager's election. Losing the Lease
//! mid-move cannot double-move: every gate is judged again right before the write and the
//! write carries the resourceVersion it judged, so a second replica's move is a 409 judged
//! again (and found done), never a blind write.

use std::sync::Arc;
use std::time::Duration;

use kube_lease_manager::LeaseManagerBuilder;
use tokio::sync::watch;

use crate::cluster::connect::Connection;
use crate::distro::LOCK_NAMESPACE;
use crate::repair::event_apply::this_instance;

/// The coordination Lease the replicas elect a healer with.
pub const HEAL_LEASE: &str = "k3sdoctor-heal";

/// The heal Lease's duration and how long before its expiry the holder renews it.
const LEASE_SECONDS: u64 = 15;
const GRACE_SECONDS: u64 = 5;

/// How long to wait before trying again when the Lease cannot be used (403, no answer).
const RETRY: Duration = Duration::from_secs(15);

/// How long a stopping serve waits for the Lease to be released, so that another replica
/// takes over at once rather than after the Lease's duration.
const RELEASE_LIMIT: Duration = Duration::from_secs(3);

/// The Pod's namespace (its service account's), else kube-system.
pub fn heal_lease_namespace() -> String {
    std::fs::read_to_string("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
        .ok()
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| LOCK_NAMESPACE.to_string())
}

/// Whether this replica holds the heal Lease, as it changes (starts `false`), and the task
/// that ends, the Lease released, once every receiver is dropped.
pub fn elect(conn: &Arc<Connection>) -> (watch::Receiver<bool>, tokio::task::JoinHandle<()>) {
    let (tx, rx) = watch::channel(false);
    let client = conn.client.clone();
    let namespace = heal_lease_namespace();
    // Unique per process: two replicas on one host (tests) must not share an identity.
    let identity = format!("{}_{}", this_instance(), std::process::id());
    let task = tokio::spawn(async move {
        let mut warned = false;
        loop {
            let built = LeaseManagerBuilder::new(client.clone(), HEAL_LEASE)
                .with_namespace(namespace.clone())
                .with_identity(identity.clone())
                .with_duration(LEASE_SECONDS)
                .with_grace(GRACE_SECONDS)
                .build()
                .await;
            let manager = match built {
                Ok(manager) => manager,
                Err(e) => {
                    if !warned {
                        tracing::warn!(
                            "heal: cannot use the Lease {namespace}/{HEAL_LEASE} to elect the replica that heals: {e}; \
                             not healing (gate not-leader) until it can; the heal role needs get, create and patch on it"
                        );
                        warned = true;
                    }
                    tokio::select! {
                        () = tokio::time::sleep(RETRY) => continue,
                        () = tx.closed() => return,
                    }
                }
            };
            // Working again: the next failure episode is worth a line of its own.
            warned = false;
            let (mut leader, task) = manager.watch().await;
            loop {
                let now = *leader.borrow_and_update();
                if tx.send(now).is_err() {
                    break;
                }
                tracing::info!(
                    identity = %identity,
                    "heal: {} the Lease {namespace}/{HEAL_LEASE}",
                    if now { "holding" } else { "not holding" }
                );
                tokio::select! {
                    changed = leader.changed() => if changed.is_err() { break },
                    () = tx.closed() => break,
                }
            }
            if tx.is_closed() {
                // serve is stopping: dropping the receiver makes the election release the Lease.
                drop(leader);
                let _ = tokio::time::timeout(RELEASE_LIMIT, task).await;
                return;
            }
            // The election task ended (an API error it gave up on): not the leader any more.
            let _ = task.await;
            let _ = tx.send(false);
            tokio::select! {
                () = tokio::time::sleep(RETRY) => {}
                () = tx.closed() => return,
            }
        }
    });
    (rx, task)
}
