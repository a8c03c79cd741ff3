//! How many tokens serve asks the API server about that it has not seen lately. Every unseen
//! token costs a TokenReview, and a client sending random tokens made serve send 57,869 of
//! them in 20 s; the cache cannot help, since each token is new. Reviews of unseen tokens take
//! from a bucket of [`BURST`] refilled at [`PER_SECOND`]; a token allowed in the last
//! [`VOUCHED_FOR`] does not, so Prometheus' own scrapes go on through a flood.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Reviews of unseen tokens at once.
pub(crate) const BURST: f64 = 10.0;
/// Reviews of unseen tokens a second after the burst.
pub(crate) const PER_SECOND: f64 = 5.0;
/// How long a token once allowed is reviewed again without waiting for the bucket.
pub(crate) const VOUCHED_FOR: Duration = Duration::from_secs(600);

/// The bucket, and the tokens (their SHA-256) allowed lately; both bounded.
pub(crate) struct ReviewBudget {
    left: f64,
    filled_at: Instant,
    vouched: HashMap<[u8; 32], Instant>,
    capacity: usize,
}

impl ReviewBudget {
    pub(crate) fn new(now: Instant, capacity: usize) -> ReviewBudget {
        ReviewBudget {
            left: BURST,
            filled_at: now,
            vouched: HashMap::new(),
            capacity: capacity.max(1),
        }
    }

    /// Whether the token hashed to `token` may be reviewed now, taking from the bucket unless
    /// it was allowed lately.
    pub(crate) fn may_review(&mut self, token: &[u8; 32], now: Instant) -> bool {
        if self.vouched.get(token).is_some_and(|until| now < *until) {
            return true;
        }
        let elapsed = now.saturating_duration_since(self.filled_at).as_secs_f64();
        self.left = (self.left + elapsed * PER_SECOND).min(BURST);
        self.filled_at = now;
        if self.left < 1.0 {
            return false;
        }
        self.left -= 1.0;
        true
    }

    /// Remembers that the API server allowed `token`; when full, the expired go first, and
    /// a new one waits for room rather than pushing out another.
    pub(crate) fn vouch(&mut self, token: [u8; 32], now: Instant) {
        if self.vouched.len() >= self.capacity && !self.vouched.contains_key(&token) {
            self.vouched.retain(|_, until| now < *until);
            if self.vouched.len() >= self.capacity {
                return;
            }
        }
        self.vouched.insert(token, now + VOUCHED_FOR);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_of_unseen_tokens_gets_a_burst_then_a_steady_rate() {
        let start = Instant::now();
        let mut budget = ReviewBudget::new(start, 8);
        let granted = (0..100u8)
            .filter(|n| budget.may_review(&[*n; 32], start))
            .count();
        assert_eq!(granted, BURST as usize);
        // Two seconds later, ten more.
        let later = start + Duration::from_secs(2);
        let granted = (100..200u8)
            .filter(|n| budget.may_review(&[*n; 32], later))
            .count();
        assert_eq!(granted, (2.0 * PER_SECOND) as usize);
    }

    #[test]
    fn a_token_allowed_lately_is_reviewed_through_a_flood() {
        let start = Instant::now();
        let mut budget = ReviewBudget::new(start, 8);
        budget.vouch([7; 32], start);
        for n in 0..50u8 {
            budget.may_review(&[n + 100; 32], start);
        }
        assert!(!budget.may_review(&[1; 32], start));
        assert!(budget.may_review(&[7; 32], start));
    }

    #[test]
    fn the_vouched_tokens_never_grow_past_the_bound() {
        let start = Instant::now();
        let mut budget = ReviewBudget::new(start, 4);
        for n in 0..100u8 {
            budget.vouch([n; 32], start);
        }
        assert_eq!(budget.vouched.len(), 4);
    }
}
