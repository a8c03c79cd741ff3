//! The I/O half of `leases follow`'s verification: watch the written lock copies from the
//! resourceVersions our writes returned, and fall back to polling when the watch is refused or
//! breaks. What the copies say is judged by [`super::takeover_judge`].

use std::time::Duration;

use futures::stream::{self, BoxStream, SelectAll, StreamExt};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, WatchParams};
use tokio::time::Instant;

use super::lock_writes::read_lock_objects;
use crate::distro::LOCK_NAMESPACE;
use crate::follow::follow_plan::LockCopy;
use crate::follow::lock_objects::{Verification, WrittenCopy};
use crate::follow::takeover_judge::{
    TakeoverJudge, WatchStep, configmap_step, lease_step, polling_note,
};
use crate::input::ReadError;
use crate::input::connect::Connection;
use crate::input::watch::watch_timeout;
use crate::model::lock::LockRecord;

/// How often the lock is read when it cannot be watched, and the least time between two
/// watches of one copy: a server that ends every watch at once costs no more than polling.
const POLL_INTERVAL: Duration = Duration::from_millis(250);

/// Where verification tells the user what it is doing.
#[derive(Clone, Copy)]
pub(super) struct Progress<'a> {
    /// The spinner's line (the phase and the time waited).
    pub phase: &'a (dyn Fn(&str) + Sync),
    /// The one line that says the watch was given up for polling.
    pub note: &'a (dyn Fn(&str) + Sync),
}

/// Waits until the target renews the lock itself (`renewTime` past what we wrote while every
/// copy names the target), another server takes it, or `timeout` passes.
pub(super) async fn verify_takeover(
    conn: &Connection,
    lock: &str,
    written: &[(LockCopy, WrittenCopy)],
    from_holder: &str,
    target: &str,
    timeout: Duration,
    progress: &Progress<'_>,
) -> Verification {
    let Progress { phase, note } = *progress;
    let started = Instant::now();
    let mut judge = TakeoverJudge::new(
        lock,
        from_holder,
        target,
        written.iter().map(|(_, w)| w.renew_time).collect(),
    );
    // The watch starts after our writes, so its events are changes to what we wrote.
    let mut records = judge.as_written();
    judge.observe(&records);
    phase(&judge.waiting_phase(started.elapsed()));
    let watch = TakeoverWatch {
        conn,
        lock,
        copies: written.iter().map(|(c, _)| *c).collect(),
        started,
        timeout,
    };
    let resource_versions = written
        .iter()
        .map(|(_, w)| w.resource_version.clone())
        .collect();
    match watch
        .run(&mut judge, &mut records, resource_versions, phase)
        .await
    {
        Watched::Decided(verification) => verification,
        Watched::Broken { copy, reason } => {
            note(&polling_note(&watch_action(copy, lock), &reason));
            watch.poll(&mut judge, phase).await
        }
    }
}

/// How watching ended.
enum Watched {
    /// The takeover was verified, refuted, or the time ran out.
    Decided(Verification),
    /// The watch of `copy` was refused or broke; polling takes over.
    Broken { copy: LockCopy, reason: String },
}

/// One copy's events, tagged with its index; `None` once that watch has ended (its
/// `timeoutSeconds`, or the connection closed at an event boundary).
type CopyEvents = BoxStream<'static, (usize, Option<Result<WatchStep, kube::Error>>)>;

struct TakeoverWatch<'a> {
    conn: &'a Connection,
    lock: &'a str,
    copies: Vec<LockCopy>,
    started: Instant,
    timeout: Duration,
}

impl TakeoverWatch<'_> {
    fn deadline(&self) -> Instant {
        self.started + self.timeout
    }

    /// Watches every copy by name from the resourceVersion its write returned: no event between
    /// the write and the watch is missed, and nothing needs listing first.
    ///
    /// `Api::watch` rather than kube-runtime's watcher: the watcher always starts with a list
    /// (or a streaming list) instead of a given resourceVersion, relists on 410, and retries a
    /// 403 forever with backoff, while here a refused or broken watch should give way to
    /// polling at once, within the same deadline. The one thing the watcher would add, resuming
    /// a watch the server ended, is the loop below.
    async fn run(
        &self,
        judge: &mut TakeoverJudge,
        records: &mut [Option<LockRecord>],
        mut resource_versions: Vec<String>,
        phase: &(dyn Fn(&str) + Sync),
    ) -> Watched {
        let mut events: SelectAll<CopyEvents> = SelectAll::new();
        for (index, version) in resource_versions.iter().enumerate() {
            match self.open(index, version).await {
                Opened::Events(stream) => events.push(stream),
                Opened::Broken(broken) => return broken,
                Opened::TimedOut => return self.timed_out(judge),
            }
        }
        let mut tick = tokio::time::interval(POLL_INTERVAL);
        loop {
            let next = tokio::select! {
                _ = tokio::time::sleep_until(self.deadline()) => return self.timed_out(judge),
                _ = tick.tick() => {
                    phase(&judge.waiting_phase(self.started.elapsed()));
                    continue;
                }
                next = events.next() => next,
            };
            let Some((index, event)) = next else {
                // Every stream ends with its `None` first, which reopens it; not reached.
                return self.broken(0, "every watch ended".into());
            };
            match event {
                Some(Ok(WatchStep::Seen {
                    record,
                    resource_version,
                })) => {
                    if let Some(version) = resource_version {
                        resource_versions[index] = version;
                    }
                    records[index] = record;
                    let judgement = judge.observe(records);
                    if let Some(decided) = judge.decide(&judgement, self.started.elapsed()) {
                        return Watched::Decided(decided);
                    }
                }
                Some(Ok(WatchStep::Progress(version))) => resource_versions[index] = version,
                Some(Ok(WatchStep::Ended(reason))) => return self.broken(index, reason),
                Some(Err(e)) => {
                    let action = watch_action(self.copies[index], self.lock);
                    let reason = ReadError::from_kube(&e, &action, &self.conn.server).message;
                    return self.broken(index, reason);
                }
                None => {
                    // The server ended the watch (its timeout) or the connection closed between
                    // events: resume from the last resourceVersion seen.
                    let resume = tokio::time::sleep(POLL_INTERVAL);
                    if tokio::time::timeout_at(self.deadline(), resume)
                        .await
                        .is_err()
                    {
                        return self.timed_out(judge);
                    }
                    match self.open(index, &resource_versions[index]).await {
                        Opened::Events(stream) => events.push(stream),
                        Opened::Broken(broken) => return broken,
                        Opened::TimedOut => return self.timed_out(judge),
                    }
                }
            }
        }
    }

    /// Starts the watch of one copy, within the deadline.
    async fn open(&self, index: usize, resource_version: &str) -> Opened {
        // The server ends the watch a little after our deadline, or before the client's read
        // timeout would fail a quiet one (then it is resumed).
        let remaining = self.deadline().saturating_duration_since(Instant::now());
        let seconds = u32::try_from(remaining.as_secs() + 1)
            .unwrap_or(u32::MAX)
            .min(watch_timeout(self.conn.read_timeout));
        let params = WatchParams::default()
            .fields(&format!("metadata.name={}", self.lock))
            .timeout(seconds);
        let client = self.conn.client.clone();
        let started = async {
            match self.copies[index] {
                LockCopy::Lease => {
                    let api: Api<Lease> = Api::namespaced(client, LOCK_NAMESPACE);
                    api.watch(&params, resource_version)
                        .await
                        .map(|s| tagged(index, s.map(|e| e.map(lease_step))))
                }
                LockCopy::ConfigMap => {
                    let api: Api<ConfigMap> = Api::namespaced(client, LOCK_NAMESPACE);
                    api.watch(&params, resource_version)
                        .await
                        .map(|s| tagged(index, s.map(|e| e.map(configmap_step))))
                }
            }
        };
        match tokio::time::timeout_at(self.deadline(), started).await {
            Err(_) => Opened::TimedOut,
            Ok(Ok(events)) => Opened::Events(events),
            Ok(Err(e)) => {
                let action = watch_action(self.copies[index], self.lock);
                let reason = ReadError::from_kube(&e, &action, &self.conn.server).message;
                Opened::Broken(self.broken(index, reason))
            }
        }
    }

    fn broken(&self, index: usize, reason: String) -> Watched {
        Watched::Broken {
            copy: self.copies[index],
            reason,
        }
    }

    fn timed_out(&self, judge: &TakeoverJudge) -> Watched {
        Watched::Decided(judge.timed_out(self.timeout, None))
    }

    /// Reads the copies every [`POLL_INTERVAL`] until the judge decides or the deadline passes
    /// (after at least one read). A failed read is retried: the API server may be briefly
    /// unreachable while the old holder restarts.
    async fn poll(&self, judge: &mut TakeoverJudge, phase: &(dyn Fn(&str) + Sync)) -> Verification {
        loop {
            let last_error = match read_lock_objects(self.conn, self.lock, &self.copies).await {
                Ok(objects) => {
                    let records: Vec<Option<LockRecord>> =
                        self.copies.iter().map(|c| objects.record(*c)).collect();
                    let judgement = judge.observe(&records);
                    if let Some(verdict) = judge.decide(&judgement, self.started.elapsed()) {
                        return verdict;
                    }
                    phase(&judge.waiting_phase(self.started.elapsed()));
                    None
                }
                Err(e) => {
                    phase(&format!(
                        "cannot read {} ({}); retrying",
                        self.lock, e.message
                    ));
                    Some(e.message)
                }
            };
            if self.started.elapsed() >= self.timeout {
                return judge.timed_out(self.timeout, last_error.as_deref());
            }
            tokio::time::sleep(POLL_INTERVAL).await;
        }
    }
}

enum Opened {
    Events(CopyEvents),
    Broken(Watched),
    TimedOut,
}

fn tagged(
    index: usize,
    events: impl futures::Stream<Item = Result<WatchStep, kube::Error>> + Send + 'static,
) -> CopyEvents {
    events
        .map(move |e| (index, Some(e)))
        .chain(stream::once(async move { (index, None) }))
        .boxed()
}

/// The action in a watch error's words: `watch lease kube-system/k3s`.
fn watch_action(copy: LockCopy, lock: &str) -> String {
    let kind = match copy {
        LockCopy::Lease => "lease",
        LockCopy::ConfigMap => "configmap",
    };
    format!("watch {kind} {LOCK_NAMESPACE}/{lock}")
}
