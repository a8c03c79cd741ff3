//! The pure half of `leases follow`'s verification: judging what the lock copies say after our
//! write, whether that came from a watch event or a poll. No clock, no network: the caller
//! passes the elapsed time, so every verdict is a unit test.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::WatchEvent;

use super::lock_edit::configmap_record;
use super::lock_objects::Verification;
use crate::model::lock::LockRecord;

/// What one look at the lock copies decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Judgement {
    /// Every copy names the target and one has a `renewTime` past what we wrote: the target's
    /// own elector renewed it.
    Verified,
    /// A copy names someone else (the identity shown, `(released)` for an empty one).
    TakenBy(String),
    /// Still the record we wrote (or a copy is missing): keep waiting.
    Waiting,
}

/// Judges the takeover: the copies written (in write order), what we wrote into each, and
/// the distinct holders seen so far.
#[derive(Debug, Clone)]
pub(crate) struct TakeoverJudge {
    lock: String,
    target: String,
    /// `renewTime` in what we wrote, per copy; the target must renew past it.
    written_renew: Vec<Option<Timestamp>>,
    holders: Vec<String>,
}

impl TakeoverJudge {
    pub(crate) fn new(
        lock: &str,
        from_holder: &str,
        target: &str,
        written_renew: Vec<Option<Timestamp>>,
    ) -> TakeoverJudge {
        TakeoverJudge {
            lock: lock.to_string(),
            target: target.to_string(),
            written_renew,
            holders: vec![shown(from_holder)],
        }
    }

    /// The copies as our writes left them: the target, with the `renewTime` we wrote. A watch
    /// that starts at the resourceVersions of our writes only reports what came after them.
    pub(crate) fn as_written(&self) -> Vec<Option<LockRecord>> {
        self.written_renew
            .iter()
            .map(|renew| {
                Some(LockRecord {
                    holder_identity: self.target.clone(),
                    lease_duration_seconds: None,
                    acquire_time: None,
                    renew_time: *renew,
                    transitions: None,
                })
            })
            .collect()
    }

    /// One look at every copy (`None`: the copy is absent or has no readable record), in the
    /// order they were written. Records the holders in the order they appear.
    pub(crate) fn observe(&mut self, records: &[Option<LockRecord>]) -> Judgement {
        for r in records.iter().flatten() {
            let holder = shown(&r.holder_identity);
            if self.holders.last() != Some(&holder) {
                self.holders.push(holder);
            }
        }
        let all_target = records
            .iter()
            .all(|r| r.as_ref().is_some_and(|r| r.holder_identity == self.target));
        let renewed = self.written_renew.iter().zip(records).any(|(written, r)| {
            r.as_ref()
                .and_then(|r| r.renew_time)
                .is_some_and(|t| written.is_none_or(|old| t > old))
        });
        if all_target && renewed {
            return Judgement::Verified;
        }
        match records
            .iter()
            .flatten()
            .find(|r| r.holder_identity != self.target)
        {
            Some(other) => Judgement::TakenBy(shown(&other.holder_identity)),
            None => Judgement::Waiting,
        }
    }

    #[cfg(test)]
    pub(crate) fn holders(&self) -> &[String] {
        &self.holders
    }

    /// The spinner's line while waiting.
    pub(crate) fn waiting_phase(&self, elapsed: Duration) -> String {
        format!(
            "waiting for {} to renew {} ({:.0}s)",
            self.target,
            self.lock,
            elapsed.as_secs_f64()
        )
    }

    pub(crate) fn verified(&self, elapsed: Duration) -> Verification {
        let secs = elapsed.as_secs_f64();
        Verification {
            verified: true,
            seconds: Some(secs),
            observed_holders: self.holders.clone(),
            message: format!(
                "{} renewed {} itself {secs:.1}s after the write",
                self.target, self.lock
            ),
        }
    }

    pub(crate) fn taken_by(&self, other: &str) -> Verification {
        Verification {
            verified: false,
            seconds: None,
            message: format!(
                "{other} took {} instead of {}; holders seen: {}",
                self.lock,
                self.target,
                self.holders.join(" -> ")
            ),
            observed_holders: self.holders.clone(),
        }
    }

    /// The verdict when `timeout` has passed; `last_error` when the last read failed.
    pub(crate) fn timed_out(&self, timeout: Duration, last_error: Option<&str>) -> Verification {
        let why = match last_error {
            Some(e) => format!("could not read the lock at the end: {e}"),
            None => format!("{} did not renew it", self.target),
        };
        Verification {
            verified: false,
            seconds: None,
            message: format!(
                "takeover of {} not verified within {}s: {why}; holders seen: {}",
                self.lock,
                timeout.as_secs(),
                self.holders.join(" -> ")
            ),
            observed_holders: self.holders.clone(),
        }
    }

    /// The verdict for a judgement that ends the wait, `None` for [`Judgement::Waiting`].
    pub(crate) fn decide(&self, judgement: &Judgement, elapsed: Duration) -> Option<Verification> {
        match judgement {
            Judgement::Verified => Some(self.verified(elapsed)),
            Judgement::TakenBy(other) => Some(self.taken_by(other)),
            Judgement::Waiting => None,
        }
    }
}

/// What one watch event says about one lock copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WatchStep {
    /// The copy as it is now (`None`: deleted, or no readable record), and the
    /// resourceVersion to resume from.
    Seen {
        record: Option<LockRecord>,
        resource_version: Option<String>,
    },
    /// Nothing changed; the watch has reached this resourceVersion (a bookmark).
    Progress(String),
    /// The server ended the watch with an error event (410 Gone: the resourceVersion we asked
    /// for is compacted away); the reason in words.
    Ended(String),
}

pub(crate) fn lease_step(event: WatchEvent<Lease>) -> WatchStep {
    step(event, |lease| {
        (
            Some(LockRecord::from_lease(lease)),
            lease.metadata.resource_version.clone(),
        )
    })
}

pub(crate) fn configmap_step(event: WatchEvent<ConfigMap>) -> WatchStep {
    step(event, |cm| {
        (configmap_record(cm), cm.metadata.resource_version.clone())
    })
}

fn step<K>(
    event: WatchEvent<K>,
    read: impl Fn(&K) -> (Option<LockRecord>, Option<String>),
) -> WatchStep {
    match event {
        WatchEvent::Added(object) | WatchEvent::Modified(object) => {
            let (record, resource_version) = read(&object);
            WatchStep::Seen {
                record,
                resource_version,
            }
        }
        // A deleted copy reads like a missing one: nobody holds it, and it is not the target's.
        WatchEvent::Deleted(object) => WatchStep::Seen {
            record: None,
            resource_version: read(&object).1,
        },
        WatchEvent::Bookmark(bookmark) => WatchStep::Progress(bookmark.metadata.resource_version),
        WatchEvent::Error(status) => WatchStep::Ended(format!(
            "the API server ended the watch: {} ({})",
            status.message, status.code
        )),
    }
}

/// The note printed when verification falls back from watching to polling. `message` is a
/// read error's line for `action` ("cannot watch lease kube-system/k3s: …") or a reason of
/// our own; either way the line names the object once.
pub(crate) fn polling_note(action: &str, message: &str) -> String {
    let prefix = format!("cannot {action}");
    let reason = message
        .strip_prefix(&prefix)
        .map(|rest| rest.trim_start_matches(':').trim_start())
        .unwrap_or(message);
    format!("note: {prefix} ({reason}); polling instead")
}

fn shown(holder: &str) -> String {
    if holder.is_empty() {
        "(released)".to_string()
    } else {
        holder.to_string()
    }
}

#[cfg(test)]
mod tests;
