//! One candidate's view of one lock, stepped like client-go's `LeaderElector`
//! (`tryAcquireOrRenew`): validity is judged on when *this* candidate last saw the record
//! change, a candidate that finds its own identity in the record renews it as its own, and a
//! leader that cannot renew within the renew deadline stops leading (which k3s turns into a
//! fatal exit).

use std::time::{Duration, Instant, SystemTime};

use super::LockStyle;
use super::record::{self, Record};
use crate::support::fake_api::FakeApi;

#[derive(Default)]
pub(crate) struct Elector {
    observed_raw: Option<String>,
    observed_at: Option<Instant>,
    pub leader: bool,
    pub last_renew: Option<Instant>,
}

pub(crate) enum Step {
    /// Not the leader (someone else holds a valid record, or we lost a race).
    Follower,
    /// We hold the lock; `newly` on the step that acquired it.
    Leading { newly: bool },
    /// We were leading and could not renew within the renew deadline.
    Lost,
}

pub(crate) struct Timing {
    pub lease: Duration,
    pub renew_deadline: Duration,
}

impl Elector {
    pub(crate) fn step(
        &mut self,
        fake: &FakeApi,
        style: LockStyle,
        name: &str,
        me: &str,
        timing: &Timing,
        now: Instant,
    ) -> Step {
        let ok = self.try_acquire_or_renew(fake, style, name, me, timing, now);
        if ok {
            let newly = !self.leader;
            self.leader = true;
            self.last_renew = Some(now);
            return Step::Leading { newly };
        }
        if self.leader
            && self
                .last_renew
                .is_some_and(|t| now.duration_since(t) > timing.renew_deadline)
        {
            self.leader = false;
            return Step::Lost;
        }
        if self.leader {
            // Still within the renew deadline: keep leading, keep trying.
            return Step::Leading { newly: false };
        }
        Step::Follower
    }

    fn try_acquire_or_renew(
        &mut self,
        fake: &FakeApi,
        style: LockStyle,
        name: &str,
        me: &str,
        timing: &Timing,
        now: Instant,
    ) -> bool {
        let wall = SystemTime::now();
        let objects = record::read(fake, style, name);
        let fresh = Record {
            holder: me.to_string(),
            lease_seconds: timing.lease.as_secs() as i64,
            acquire: wall,
            renew: wall,
            transitions: 0,
        };
        let Some((old, raw)) = objects.record(style) else {
            let written = objects.write(fake, style, name, &fresh);
            return self.remember_if(written, now);
        };
        if self.observed_raw.as_deref() != Some(raw.as_str()) {
            self.observed_raw = Some(raw);
            self.observed_at = Some(now);
        }
        let valid_until =
            self.observed_at.unwrap_or(now) + Duration::from_secs(old.lease_seconds.max(0) as u64);
        if !old.holder.is_empty() && old.holder != me && valid_until > now {
            return false;
        }
        let mut next = fresh;
        if old.holder == me {
            next.acquire = old.acquire;
            next.transitions = old.transitions;
        } else {
            next.transitions = old.transitions + 1;
        }
        let written = objects.write(fake, style, name, &next);
        self.remember_if(written, now)
    }

    /// After our own write the next read differs from what we last saw; that is not someone
    /// else's change, and for a leader it only restarts a clock it does not consult.
    fn remember_if(&mut self, written: bool, now: Instant) -> bool {
        if written {
            self.observed_raw = None;
            self.observed_at = Some(now);
        }
        written
    }
}
