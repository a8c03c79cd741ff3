//! The apply half of `serve --heal on`: everything read and judged again right before the
//! write, every gate again, then `leases follow --fix`'s own write (`follow_write::apply`,
//! preconditioned on the judged resourceVersions) and verification, then a check that the
//! `-etcd` controllers work again; the outcome goes to the policy, the log, the metrics and
//! an Event.

use std::time::Duration;

use super::follow_write::{Applied, apply};
use super::load::{read_live, read_live_snapshots};
use super::lock_writes::check_permissions;
use super::serve_heal::{ASKED_BY, Healer};
use super::termination::Termination;
use crate::commands::takeover_watch::{Progress, verify_takeover};
use crate::diagnose::check::analyse_check;
use crate::diagnose::finding::{FindingCode, Severity};
use crate::events::repair_event::EventReason;
use crate::follow::follow_event::lock_move_event;
use crate::follow::follow_plan::{FollowPlan, FollowRequest, LockCopy};
use crate::follow::lock_objects::WrittenCopy;
use crate::heal::guardrail_record::MovePair;
use crate::heal::heal_gates::{Outside, SplitCandidate, heal_candidate};
use crate::heal::heal_metrics::HealOutcome;
use crate::input::live::own_access_review::WriterRole;
use crate::input::narrator::{Narrator, Silent};

/// How long the `-etcd` controllers have to show they work after a verified move, and how
/// often that is looked at.
const CONTROLLERS_DEADLINE: Duration = Duration::from_secs(120);
const CONTROLLERS_POLL: Duration = Duration::from_secs(3);

/// What a move wrote, and the sentence for the log and the Event.
type MoveReport = (Vec<(LockCopy, WrittenCopy)>, String);

impl Healer {
    /// Everything read and judged again right before the write: the same move must still be
    /// planned with every gate open, at the fresh read's own time (the evaluation's `now` can
    /// be a move or two old, and a lock that expired since must not look fresh to the last
    /// gate). `None`: not started, and the log says why.
    async fn recheck(&self, pair: &MovePair) -> Option<(Box<FollowPlan>, jiff::Timestamp)> {
        let fresh = match read_live(&self.conn, self.judging, &Silent).await {
            Ok(fresh) => fresh,
            Err(e) => {
                tracing::warn!(
                    "heal of {} not started: cannot read the cluster again: {e}",
                    pair.lock
                );
                return None;
            }
        };
        let outside = Outside {
            paused: self.read_pause().await,
            reboot_lock: self.read_reboot_lock().await,
        };
        let now = fresh.now.time;
        let again = heal_candidate(&fresh.state, fresh.distro, now, &outside);
        let plan = match again {
            Some(c) if MovePair::of(&c) == *pair => {
                if let (Some(plan), true) = (c.plan, c.blocked.is_empty()) {
                    plan
                } else {
                    let gates: Vec<String> = c
                        .blocked
                        .iter()
                        .map(|b| format!("{}: {}", b.gate.label(), b.why))
                        .collect();
                    let why = if gates.is_empty() {
                        "no move could be planned".to_string()
                    } else {
                        gates.join("; ")
                    };
                    tracing::warn!(
                        "heal of {} not started: the re-check before the write is blocked: {why}",
                        pair.lock
                    );
                    return None;
                }
            }
            _ => {
                tracing::info!(
                    "heal of {} not started: the locks changed since the evaluation",
                    pair.lock
                );
                return None;
            }
        };
        Some((plan, now))
    }

    /// The move: everything read and judged again, every gate again, then follow's own write
    /// and verification, then the `-etcd` controllers.
    pub(super) async fn heal(&mut self, judged: &SplitCandidate) {
        let pair = MovePair::of(judged);
        let started = std::time::Instant::now();
        let Some((plan, now)) = self.recheck(&pair).await else {
            return;
        };
        if !self.election.borrow().is_leader() {
            tracing::info!(
                "heal of {} not started: this replica no longer holds the heal Lease",
                pair.lock
            );
            return;
        }
        // Recorded on the heal Lease before anything is written: a replica killed mid-move
        // leaves its cooldown for the next one.
        let previous = self.policy.heal_started(now);
        if let Err(e) = self.record_guardrails().await {
            self.policy.heal_not_needed(previous);
            tracing::warn!(
                "heal of {} not started: cannot record it on the heal Lease first: {}",
                pair.lock,
                e.blocked().why
            );
            return;
        }
        if let Some(m) = &self.exporter.metrics.heal {
            m.heal_started(now);
        }
        tracing::warn!(
            lock = %pair.lock,
            from = %pair.from,
            to = %pair.to,
            "healing: moving {} from {} to {} ({})",
            pair.lock,
            pair.from,
            pair.to,
            plan.why
        );
        let outcome = self.move_lock(&plan, &Silent).await;
        let (reason, moved, line, written) = match outcome {
            Ok(Some((written, line))) => (EventReason::LockMoved, true, line, written),
            Ok(None) => {
                self.policy.heal_not_needed(previous);
                let _ = self.record_guardrails().await;
                tracing::info!(
                    "heal of {}: it names {} already (moved meanwhile): nothing written",
                    pair.lock,
                    pair.to
                );
                return;
            }
            Err((written, line)) => (EventReason::LockMoveFailed, false, line, written),
        };
        if moved {
            tracing::info!(lock = %pair.lock, outcome = "moved", "heal of {}: {line}", pair.lock);
        } else {
            tracing::error!(lock = %pair.lock, outcome = "failed", "heal of {} failed: {line}; not retried for {} -> {} until the locks change or a person runs leases follow --fix", pair.lock, pair.from, pair.to);
        }
        // Verification can take minutes: the cooldown starts when the move ended.
        let now = jiff::SignedDuration::try_from(started.elapsed())
            .ok()
            .and_then(|took| now.checked_add(took).ok())
            .unwrap_or(now);
        let event = lock_move_event(reason, &plan, &written, &line, ASKED_BY);
        self.record(&event, now).await;
        self.count(if moved {
            HealOutcome::Moved
        } else {
            HealOutcome::Failed
        });
        self.policy.heal_done(now, &pair, moved);
        if let Err(e) = self.record_guardrails().await {
            tracing::warn!(
                "heal of {}: the outcome could not be recorded on the heal Lease (the start is): {}",
                pair.lock,
                e.blocked().why
            );
        }
    }

    /// Permission, write, takeover, controllers. `Ok(Some)`: moved; `Ok(None)`: the lock names
    /// the target already (someone else moved it), no heal; `Err`: what failed. Both carry what
    /// was written and the sentence for the log and the Event.
    async fn move_lock(
        &self,
        plan: &FollowPlan,
        ui: &dyn Narrator,
    ) -> Result<Option<MoveReport>, MoveReport> {
        let conn = &*self.conn;
        if let Err(e) = check_permissions(conn, &plan.lock, &plan.writes, WriterRole::Heal).await {
            return Err((Vec::new(), e.message));
        }
        let mut term = Termination::catch();
        let request = FollowRequest::default();
        let written = match apply(conn, self.judging, plan, &request, ui, &mut term).await {
            Ok(Applied::Written(written)) => written,
            Ok(Applied::AlreadyAligned) => return Ok(None),
            Err(e) => return Err((e.written, e.failure.to_string())),
        };
        let phase = |_: &str| {};
        let note = |line: &str| tracing::info!("{line}");
        let progress = Progress {
            phase: &phase,
            note: &note,
        };
        let verification = verify_takeover(
            conn,
            &plan.lock,
            &written,
            &plan.from_holder,
            &plan.to_identity,
            plan.timing.verify_timeout(),
            &progress,
        )
        .await;
        if !verification.verified {
            return Err((written, verification.message));
        }
        match self.controllers_working(ui).await {
            Ok(line) => Ok(Some((written, format!("{}; {line}", verification.message)))),
            Err(line) => Err((written, format!("{}; but {line}", verification.message))),
        }
    }

    /// After the takeover, the `-etcd` controllers must work again: no CR left without the
    /// snapshot controller's finalizer, no snapshot missing from the ConfigMap — where the
    /// cluster has snapshots at all.
    async fn controllers_working(&self, ui: &dyn Narrator) -> Result<String, String> {
        let started = tokio::time::Instant::now();
        loop {
            let loaded = read_live_snapshots(&self.conn, self.judging, ui).await;
            if let Ok(loaded) = &loaded {
                if loaded
                    .state
                    .snapshot_files
                    .as_ref()
                    .is_none_or(Vec::is_empty)
                {
                    return Ok("no ETCDSnapshotFiles to show the -etcd controllers at work".into());
                }
                let waiting: Vec<String> =
                    analyse_check(&loaded.state, loaded.distro, loaded.now.time)
                        .all_findings()
                        .into_iter()
                        .filter(|f| {
                            f.severity == Severity::Error
                                && matches!(
                                    f.code,
                                    FindingCode::SnapshotControllerIdle
                                        | FindingCode::SnapshotMissingFromConfigmap
                                )
                        })
                        .map(|f| f.code.as_str().to_string())
                        .collect();
                if waiting.is_empty() {
                    return Ok(format!(
                        "the -etcd controllers work again (ETCDSnapshotFiles carry the controller's finalizer and reach the ConfigMap, {} s after the takeover)",
                        started.elapsed().as_secs()
                    ));
                }
                if started.elapsed() >= CONTROLLERS_DEADLINE {
                    return Err(format!(
                        "the -etcd controllers did not come back within {} s ({} remain)",
                        CONTROLLERS_DEADLINE.as_secs(),
                        waiting.join(", ")
                    ));
                }
            } else if let (Err(e), true) = (&loaded, started.elapsed() >= CONTROLLERS_DEADLINE) {
                return Err(format!(
                    "the snapshots could not be read to see the -etcd controllers at work within {} s (last: {e})",
                    CONTROLLERS_DEADLINE.as_secs()
                ));
            }
            tokio::time::sleep(CONTROLLERS_POLL).await;
        }
    }
}
