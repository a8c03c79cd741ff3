//! When `serve --heal` acts: a pure state machine over the evaluations. A split must persist
//! for `--heal-after` on the API server's clock *and* across at least three evaluations (one
//! evaluation of a half-written takeover is not a split); every gate must hold; one heal per
//! cooldown, doubled on each recurrence up to a day and reset after a day without a split; a
//! move that failed is never tried again for the same lock, holder and target until the state
//! changes. The caller does the I/O and reports each heal's outcome back.

use std::collections::BTreeSet;

use jiff::{SignedDuration, Timestamp};

use super::guardrail_record::{Guardrails, MovePair, friendly};
use crate::heal::heal_gates::{Blocked, Gate, SplitCandidate};

/// Evaluations a split must be seen in before it is healed.
pub(crate) const MIN_EVALUATIONS: u32 = 3;

/// The longest cooldown, and how long without a split resets it.
pub(crate) const DAY: SignedDuration = SignedDuration::from_hours(24);

/// `--heal off|dry-run|on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HealMode {
    Off,
    DryRun,
    On,
}

impl HealMode {
    pub fn label(self) -> &'static str {
        match self {
            HealMode::Off => "off",
            HealMode::DryRun => "dry-run",
            HealMode::On => "on",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HealSettings {
    pub mode: HealMode,
    pub heal_after: SignedDuration,
    pub cooldown: SignedDuration,
}

/// One split, from the first evaluation that saw it (this lock, holder and target).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Episode {
    pub pair: MovePair,
    pub since: Timestamp,
    pub evaluations: u32,
    /// `dry-run`: the episode's one `WouldMoveLock` Event is recorded.
    pub would_move_recorded: bool,
}

/// What to do after an evaluation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    NoSplit,
    /// Gates hold it back (every one that blocks).
    Blocked(Vec<Blocked>),
    /// Not persisted long enough yet.
    Waiting {
        since: Timestamp,
        evaluations: u32,
    },
    /// `dry-run`: everything but the write; `record` once per episode.
    WouldMove {
        record: bool,
    },
    /// `on`: move now, then call [`HealPolicy::heal_done`].
    Move,
}

#[derive(Debug, Clone)]
pub(crate) struct HealPolicy {
    pub settings: HealSettings,
    pub episode: Option<Episode>,
    pub last_heal: Option<Timestamp>,
    /// The cooldown in force (doubles on recurrences).
    pub cooldown: SignedDuration,
    last_split: Option<Timestamp>,
    failed: BTreeSet<MovePair>,
    /// A last heal read back from the heal Lease that this replica has seen no split after:
    /// the first split it sees may be the very one that heal was about (a replica killed
    /// mid-move) rather than a new one, so it is no recurrence. Without this, whether the
    /// cooldown doubled would depend on whether the read-back or the first sighting came first.
    restored_heal_unseen: bool,
}

impl HealPolicy {
    pub(crate) fn new(settings: HealSettings) -> HealPolicy {
        HealPolicy {
            cooldown: settings.cooldown,
            settings,
            episode: None,
            last_heal: None,
            last_split: None,
            failed: BTreeSet::new(),
            restored_heal_unseen: false,
        }
    }

    /// One evaluation at `now` (the API server's clock). `election`: why this replica may not
    /// heal (not the leader, the election denied, the guardrails unread); `None`: it may.
    pub(crate) fn evaluate(
        &mut self,
        now: Timestamp,
        candidate: Option<&SplitCandidate>,
        election: Option<Blocked>,
    ) -> Decision {
        if self.last_split.is_some_and(|seen| since(seen, now) >= DAY) {
            self.cooldown = self.settings.cooldown;
            self.last_split = None;
        }
        let Some(candidate) = candidate else {
            // The state changed: a failed move may be tried again when the split comes back.
            self.episode = None;
            self.failed.clear();
            return Decision::NoSplit;
        };
        let pair = MovePair::of(candidate);
        self.failed.retain(|p| *p == pair);
        let in_cooldown = self.in_cooldown(now);
        let episode = match self.episode.take() {
            Some(episode) if episode.pair == pair => self.episode.insert(episode),
            _ => {
                let restored_heal_unseen = std::mem::take(&mut self.restored_heal_unseen);
                if in_cooldown && !restored_heal_unseen {
                    // A split back within the cooldown: a storm; wait longer next time.
                    self.cooldown = (self.cooldown * 2).min(DAY);
                }
                self.episode.insert(Episode {
                    pair: pair.clone(),
                    since: now,
                    evaluations: 0,
                    would_move_recorded: false,
                })
            }
        };
        episode.evaluations += 1;
        let (episode_since, evaluations) = (episode.since, episode.evaluations);
        self.last_split = Some(now);

        let mut blocked = candidate.blocked.clone();
        if self.failed.contains(&pair) {
            blocked.push(Blocked {
                gate: Gate::FailedBefore,
                why: format!(
                    "moving {} from {} to {} failed before; not retried until the locks change or a person runs \
                     leases follow --fix",
                    pair.lock, pair.from, pair.to
                ),
            });
        }
        if let Some(last) = self.cooling_down_since(now) {
            blocked.push(Blocked {
                gate: Gate::Cooldown,
                why: format!(
                    "the last heal was at {last}; the cooldown is {} (doubled on each recurrence, at most 24h)",
                    friendly(self.cooldown)
                ),
            });
        }
        blocked.extend(election);
        if !blocked.is_empty() {
            blocked.sort_by(|a, b| a.gate.cmp(&b.gate));
            return Decision::Blocked(blocked);
        }
        if since(episode_since, now) < self.settings.heal_after || evaluations < MIN_EVALUATIONS {
            return Decision::Waiting {
                since: episode_since,
                evaluations,
            };
        }
        match self.settings.mode {
            HealMode::Off => Decision::Waiting {
                since: episode_since,
                evaluations,
            },
            HealMode::DryRun => {
                // One WouldMoveLock per episode, not one per evaluation.
                let record = self
                    .episode
                    .as_mut()
                    .is_some_and(|e| !std::mem::replace(&mut e.would_move_recorded, true));
                Decision::WouldMove { record }
            }
            HealMode::On => Decision::Move,
        }
    }

    /// A heal starts at `now`: the cooldown counts from here until [`HealPolicy::heal_done`]
    /// (recorded before the write, so a replica killed mid-move still leaves its cooldown).
    /// Returns the previous last heal, for [`HealPolicy::heal_not_needed`].
    pub(crate) fn heal_started(&mut self, now: Timestamp) -> Option<Timestamp> {
        self.last_heal.replace(now)
    }

    /// The move found the lock already where it should be: nothing was healed.
    pub(crate) fn heal_not_needed(&mut self, previous: Option<Timestamp>) {
        self.last_heal = previous;
    }

    /// What must survive a restart or a failover (`heal::guardrail_record`).
    pub(crate) fn guardrails(&self) -> Guardrails {
        Guardrails {
            last_heal: self.last_heal,
            cooldown: Some(self.cooldown),
            failed: self.failed.clone(),
        }
    }

    /// The guardrails read back from the cluster on start or on takeover, at `now`. Whatever
    /// is stricter wins: the later last heal, every failed move, and the recorded cooldown
    /// (never below the flag's, never above a day). A recorded doubled cooldown resets a day
    /// after this read at the latest, as a day without a split would.
    pub(crate) fn restore(&mut self, recorded: Guardrails, now: Timestamp) {
        // A split already in view was seen before this read: it opened its episode then.
        self.restored_heal_unseen = self.episode.is_none() && recorded.last_heal > self.last_heal;
        self.last_heal = self.last_heal.max(recorded.last_heal);
        self.failed.extend(recorded.failed);
        if let Some(period) = recorded.cooldown {
            let recorded = period.clamp(self.settings.cooldown, DAY.max(self.settings.cooldown));
            self.cooldown = self.cooldown.max(recorded);
        }
        if self.cooldown != self.settings.cooldown && self.last_split.is_none() {
            self.last_split = Some(now);
        }
    }

    /// The guardrails a person edited on the heal Lease while this replica held it: what they
    /// hold now replaces what this replica kept, so removing an annotation (the documented way
    /// to make the heal forget a cooldown or a failed move) takes effect without a failover. A
    /// cooldown below the flag's still counts as the flag's.
    pub(crate) fn adopt_edit(&mut self, edited: Guardrails) {
        self.last_heal = edited.last_heal;
        self.failed = edited.failed;
        self.cooldown = edited.cooldown.map_or(self.settings.cooldown, |period| {
            period.clamp(self.settings.cooldown, DAY.max(self.settings.cooldown))
        });
        self.restored_heal_unseen = false;
    }

    /// The outcome of a heal started at `now`: it counts for the cooldown either way; a failed
    /// one is remembered so that it is not tried again until the state changes.
    pub(crate) fn heal_done(&mut self, now: Timestamp, pair: &MovePair, moved: bool) {
        self.last_heal = Some(now);
        if !moved {
            self.failed.insert(pair.clone());
        }
    }

    fn in_cooldown(&self, now: Timestamp) -> bool {
        self.cooling_down_since(now).is_some()
    }

    /// The last heal, while its cooldown lasts.
    fn cooling_down_since(&self, now: Timestamp) -> Option<Timestamp> {
        self.last_heal
            .filter(|&last| since(last, now) < self.cooldown)
    }
}

/// `now - then`, never negative: a clock stepped back does not make a split older.
fn since(then: Timestamp, now: Timestamp) -> SignedDuration {
    now.duration_since(then).max(SignedDuration::ZERO)
}

#[cfg(test)]
mod tests;
