//! `serve`'s contact probe as a task of its own: `GET /version` every few seconds, so that a
//! probe waiting for its answer never holds up the watches. Its findings go to the watch loop
//! through a channel; `monitor::contact` judges them.

use std::time::Duration;

use tokio::time::Instant;

use crate::input::live;
/// One probe of the API server, as the probe task saw it.
pub(crate) struct Probe {
    /// The server's clock from the answer's `Date` header, or why there was no answer.
    pub outcome: Result<Option<jiff::Timestamp>, String>,
    pub sent: std::time::Instant,
    pub received: std::time::Instant,
}

/// Probes `server` through `client` every `every`, each given `limit` to answer; ends when the
/// receiver is dropped.
pub(crate) fn spawn(
    client: &kube::Client,
    server: &str,
    every: Duration,
    limit: Duration,
) -> tokio::sync::mpsc::Receiver<Probe> {
    let (send, receive) = tokio::sync::mpsc::channel(4);
    let (client, server) = (client.clone(), server.to_string());
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval_at(Instant::now() + every, every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let sent = std::time::Instant::now();
            let outcome = live::probe_version(&client, &server, limit).await;
            let probe = Probe {
                outcome,
                sent,
                received: std::time::Instant::now(),
            };
            if send.send(probe).await.is_err() {
                return;
            }
        }
    });
    receive
}
