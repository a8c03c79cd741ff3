//! What `serve` reads every minute instead of watching: the Node Events, the certificates of
//! the connection and of each server, the Secrets' metadata, the packaged charts, the admission
//! webhooks and their Services, and each server's metrics. They change slowly and are judged against the clock (an Event's age, a
//! certificate's end), and a watch of Secrets would bring their data; a minute is well inside
//! every window they are judged by (an hour, 15 minutes, 14 days). Each poll is numbered, so the
//! latencies between two polls are taken once per poll however often serve evaluates.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::input::connect::Connection;
use crate::input::live::ControlPlaneReads;
use crate::model::cluster_state::ClusterState;
use crate::model::collected::Collected;
use crate::model::node::NodeFacts;

pub(super) const POLL_EVERY: Duration = Duration::from_secs(60);
const FIRST_NODES_WAIT: Duration = Duration::from_secs(10);

/// Test-only: the milliseconds between two reads instead of a minute, so a test sees the
/// latencies of an interval without waiting minutes. Not documented for users.
const POLL_EVERY_ENV: &str = "K3SDOCTOR_TEST_POLL_EVERY_MS";

fn poll_every() -> Duration {
    std::env::var(POLL_EVERY_ENV)
        .ok()
        .and_then(|ms| ms.parse().ok())
        .filter(|ms| *ms > 0)
        .map_or(POLL_EVERY, Duration::from_millis)
}

/// The latest read, or why it failed, with the number of the poll that made it.
#[derive(Clone)]
pub(super) struct Polled {
    pub(super) poll: u64,
    pub(super) outcome: PollOutcome,
}

#[derive(Clone)]
pub(super) enum PollOutcome {
    Read(Box<ControlPlaneReads>),
    Failed(String),
}

impl Polled {
    /// Adds what was read to an evaluation's state; a failed read makes its checks say so
    /// instead of judging what is gone as healthy.
    pub(super) fn fill(&self, state: &mut ClusterState) {
        match &self.outcome {
            PollOutcome::Read(reads) => reads.as_ref().clone().fill_polled(state),
            PollOutcome::Failed(why) => {
                let why = format!("the last read failed: {why}");
                state.node_events = Collected::Failed(why.clone());
                state.secret_metadata = Collected::Failed(why.clone());
                state.webhooks = Collected::Failed(why.clone());
                state.packaged_charts = Collected::Failed(why);
            }
        }
    }
}

pub(super) struct ControlPlanePoll {
    pub(super) latest: watch::Receiver<Option<Polled>>,
    /// The servers' Nodes, for the addresses the Endpoints do not publish.
    nodes: watch::Sender<Vec<NodeFacts>>,
    task: tokio::task::JoinHandle<()>,
}

impl ControlPlanePoll {
    pub(super) fn start(conn: &Arc<Connection>) -> ControlPlanePoll {
        let (sender, latest) = watch::channel(None);
        let (nodes, nodes_seen) = watch::channel(Vec::new());
        let conn = Arc::clone(conn);
        let task = tokio::spawn(async move {
            let mut every = tokio::time::interval(poll_every());
            let mut poll = 0;
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            // Whether the last read worked: a failure is a warning when it starts an episode,
            // while one at start-up is left to the watches, which fail the same way and say so.
            let mut worked = false;
            // The first read waits for the first evaluation's Nodes (briefly): without them
            // the servers' addresses that the Endpoints do not publish would go unread for a
            // whole minute.
            let mut nodes_seen = nodes_seen;
            let _ = tokio::time::timeout(FIRST_NODES_WAIT, nodes_seen.changed()).await;
            loop {
                every.tick().await;
                let nodes = nodes_seen.borrow().clone();
                let trace = |line: &str| tracing::debug!("{line}");
                poll += 1;
                let outcome = match ControlPlaneReads::read(&conn, &nodes, &trace).await {
                    Ok(reads) => {
                        worked = true;
                        PollOutcome::Read(Box::new(reads))
                    }
                    Err(e) => {
                        let what = "reading the control plane's Events, certificates, Secrets' \
                                    metadata and charts";
                        if std::mem::take(&mut worked) {
                            tracing::warn!("{what}: {e}");
                        } else {
                            tracing::info!("{what}: {e}");
                        }
                        PollOutcome::Failed(e.to_string())
                    }
                };
                if sender.send(Some(Polled { poll, outcome })).is_err() {
                    return;
                }
            }
        });
        ControlPlanePoll {
            latest,
            nodes,
            task,
        }
    }

    /// The Nodes as last watched, for the next read's handshakes.
    pub(super) fn saw_nodes(&self, state: &ClusterState) {
        self.nodes.send_if_modified(|nodes| {
            let now = state.nodes();
            let changed = nodes.as_slice() != now;
            if changed {
                *nodes = now.to_vec();
            }
            changed
        });
    }
}

impl Drop for ControlPlanePoll {
    fn drop(&mut self) {
        self.task.abort();
    }
}
