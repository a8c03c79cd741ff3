//! Whether `serve` is in contact with the API server, and what time it is there. Pure: the
//! watch loop feeds it the outcome of each contact probe (a short `GET /version`) with the
//! monotonic instants it was sent and answered, and asks it for "now" at an instant.
//!
//! Why a probe: a blackholed connection (sockets open, nothing flowing) keeps every watch
//! quiet without an error until the read timeout (minutes), which looks exactly like a quiet
//! cluster; only a request that must answer soon tells the two apart.
//!
//! Why an anchor on the monotonic clock: a board without an RTC has its wall clock stepped by
//! NTP (tens of seconds at once). Time on the API server is kept as "the server said T at
//! instant I", and now is T plus the monotonic time since I, so a step of the local wall clock
//! changes nothing; every probe's `Date` header corrects the anchor when the server's own clock
//! moved.

use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};

/// How long after the last answered probe contact counts as lost. Probes start every 5 s and
/// give up after 5 s, so a blackhole is noticed 15–20 s after it begins.
pub(crate) const CONTACT_LOST_AFTER: Duration = Duration::from_secs(15);

/// The API server's clock, as an anchor on this machine's monotonic clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ServerClock {
    at: Instant,
    server: Timestamp,
}

impl ServerClock {
    /// A clock that reads `server` at instant `at`.
    pub(crate) fn anchored(at: Instant, server: Timestamp) -> ServerClock {
        ServerClock { at, server }
    }

    /// The server's time at instant `at` (an instant before the anchor reads earlier).
    pub(crate) fn at(&self, at: Instant) -> Timestamp {
        let elapsed = match at.checked_duration_since(self.at) {
            Some(after) => SignedDuration::try_from(after).unwrap_or(SignedDuration::MAX),
            None => -SignedDuration::try_from(self.at - at).unwrap_or(SignedDuration::MAX),
        };
        self.server.checked_add(elapsed).unwrap_or(self.server)
    }

    /// Takes in a `Date` header (`date`, whole seconds) of a response to a request sent at
    /// `sent` and received at `received`. The server wrote it between the two, so its clock read
    /// between `date` and `date + 1 s + round trip` on arrival: a reading outside that window
    /// means one of the clocks stepped, and the anchor moves to the nearest edge of the window
    /// (the smallest correction that agrees with what the server said). Inside the window the
    /// anchor stays, so "now" never jitters with the header's one-second resolution.
    pub(crate) fn observe(&mut self, date: Timestamp, sent: Instant, received: Instant) {
        let round_trip = received.saturating_duration_since(sent);
        let latest = date
            .checked_add(Duration::from_secs(1) + round_trip)
            .unwrap_or(date);
        let predicted = self.at(received);
        if predicted < date {
            *self = ServerClock::anchored(received, date);
        } else if predicted > latest {
            *self = ServerClock::anchored(received, latest);
        }
    }

    /// The first anchor from one `Date` header: the middle of its possible window.
    pub(crate) fn first(date: Timestamp, sent: Instant, received: Instant) -> ServerClock {
        let round_trip = received.saturating_duration_since(sent);
        let middle = date
            .checked_add((Duration::from_secs(1) + round_trip) / 2)
            .unwrap_or(date);
        ServerClock::anchored(received, middle)
    }
}

/// What one probe brought.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ProbeOutcome {
    /// Answered, with the `Date` header if there was a usable one.
    Answered(Option<Timestamp>),
    /// No answer (timed out, refused, reset, an error status): why, in one line.
    Failed(String),
}

/// What changed with one probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ContactChange {
    None,
    /// No answer for [`CONTACT_LOST_AFTER`]: the line says why.
    Lost {
        why: String,
        silent_for: Duration,
    },
    /// Answered again after contact was lost.
    Regained {
        after: Duration,
    },
}

/// Contact with the API server: the last answered probe and the server's clock.
#[derive(Debug, Clone)]
pub(crate) struct Contact {
    clock: ServerClock,
    /// Whether `clock` came from the API server (else from the local clock at start).
    server_clock: bool,
    last_answer: Instant,
    lost_since: Option<Instant>,
}

impl Contact {
    /// Contact as of `at`, with the server's clock if it is known.
    pub(crate) fn new(clock: ServerClock, server_clock: bool, at: Instant) -> Contact {
        Contact {
            clock,
            server_clock,
            last_answer: at,
            lost_since: None,
        }
    }

    /// Takes in one probe sent at `sent`, finished at `received`.
    pub(crate) fn observe(
        &mut self,
        outcome: &ProbeOutcome,
        sent: Instant,
        received: Instant,
    ) -> ContactChange {
        match outcome {
            ProbeOutcome::Answered(date) => {
                if let Some(date) = *date {
                    if self.server_clock {
                        self.clock.observe(date, sent, received);
                    } else {
                        self.clock = ServerClock::first(date, sent, received);
                        self.server_clock = true;
                    }
                }
                self.last_answer = self.last_answer.max(received);
                match self.lost_since.take() {
                    Some(since) => ContactChange::Regained {
                        after: received.saturating_duration_since(since),
                    },
                    None => ContactChange::None,
                }
            }
            ProbeOutcome::Failed(why) => {
                let silent_for = received.saturating_duration_since(self.last_answer);
                if self.lost_since.is_none() && silent_for >= CONTACT_LOST_AFTER {
                    self.lost_since = Some(received);
                    ContactChange::Lost {
                        why: why.clone(),
                        silent_for,
                    }
                } else {
                    ContactChange::None
                }
            }
        }
    }

    pub(crate) fn lost(&self) -> bool {
        self.lost_since.is_some()
    }

    /// Whether "now" is the API server's clock (else this machine's, read once at start).
    pub(crate) fn server_clock(&self) -> bool {
        self.server_clock
    }

    /// The server's time at `at`.
    pub(crate) fn now(&self, at: Instant) -> Timestamp {
        self.clock.at(at)
    }

    /// The server's time when it last answered: nothing seen since can be newer.
    pub(crate) fn last_contact(&self) -> Timestamp {
        self.clock.at(self.last_answer)
    }

    /// The time freshness is judged at, at instant `at`: the server's now, but never later than
    /// its last answer, so a silent connection never ages a lock that may well have been
    /// renewed (k3s renews every 2 s; the probe answers every 5 s while in contact).
    pub(crate) fn judged_now(&self, at: Instant) -> Timestamp {
        self.now(at).min(self.last_contact())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn the_server_clock_advances_with_the_monotonic_clock_only() {
        let start = Instant::now();
        let clock = ServerClock::anchored(start, ts("2026-12-01T10:00:00Z"));
        assert_eq!(
            clock.at(start + Duration::from_secs(90)),
            ts("2026-12-01T10:01:30Z")
        );
        // No wall clock is read at all: a step of the local clock cannot show here.
    }

    #[test]
    fn a_date_inside_its_window_leaves_the_anchor_alone() {
        let start = Instant::now();
        let mut clock = ServerClock::anchored(start, ts("2026-12-01T10:00:00.400Z"));
        let sent = start + Duration::from_secs(5);
        let received = sent + Duration::from_millis(20);
        clock.observe(ts("2026-12-01T10:00:05Z"), sent, received);
        assert_eq!(clock.at(received), ts("2026-12-01T10:00:05.42Z"));
    }

    #[test]
    fn a_server_clock_that_stepped_forward_or_back_is_followed_at_the_next_date() {
        let start = Instant::now();
        let mut clock = ServerClock::anchored(start, ts("2026-12-01T10:00:00.500Z"));
        let at = start + Duration::from_secs(5);
        // The server's clock stepped +40 s.
        clock.observe(ts("2026-12-01T10:00:45Z"), at, at);
        assert_eq!(clock.at(at), ts("2026-12-01T10:00:45Z"));
        // And back by 40 s.
        let later = at + Duration::from_secs(5);
        clock.observe(ts("2026-12-01T10:00:10Z"), later, later);
        assert_eq!(clock.at(later), ts("2026-12-01T10:00:11Z"));
    }

    #[test]
    fn the_first_date_anchors_at_the_middle_of_its_window() {
        let sent = Instant::now();
        let received = sent + Duration::from_millis(200);
        let clock = ServerClock::first(ts("2026-12-01T10:00:00Z"), sent, received);
        assert_eq!(clock.at(received), ts("2026-12-01T10:00:00.6Z"));
    }

    fn contact(start: Instant) -> Contact {
        Contact::new(
            ServerClock::anchored(start, ts("2026-12-01T10:00:00Z")),
            true,
            start,
        )
    }

    #[test]
    fn contact_is_lost_only_after_the_probes_have_failed_for_a_while() {
        let start = Instant::now();
        let mut contact = contact(start);
        let failed = ProbeOutcome::Failed("no answer within 5 s".into());
        let at = |s| start + Duration::from_secs(s);
        assert_eq!(contact.observe(&failed, at(5), at(10)), ContactChange::None);
        assert!(!contact.lost());
        assert_eq!(
            contact.observe(&failed, at(10), at(15)),
            ContactChange::Lost {
                why: "no answer within 5 s".into(),
                silent_for: Duration::from_secs(15)
            }
        );
        assert!(contact.lost());
        // Once per episode.
        assert_eq!(
            contact.observe(&failed, at(15), at(20)),
            ContactChange::None
        );
        assert_eq!(
            contact.observe(&ProbeOutcome::Answered(None), at(40), at(41)),
            ContactChange::Regained {
                after: Duration::from_secs(26)
            }
        );
        assert!(!contact.lost());
    }

    #[test]
    fn freshness_is_never_judged_past_the_last_answer() {
        let start = Instant::now();
        let mut contact = contact(start);
        let at = |s| start + Duration::from_secs(s);
        contact.observe(&ProbeOutcome::Answered(None), at(5), at(5));
        assert_eq!(contact.now(at(7)), ts("2026-12-01T10:00:07Z"));
        assert_eq!(contact.judged_now(at(7)), ts("2026-12-01T10:00:05Z"));
        assert_eq!(contact.judged_now(at(600)), ts("2026-12-01T10:00:05Z"));
        assert_eq!(contact.last_contact(), ts("2026-12-01T10:00:05Z"));
    }

    #[test]
    fn a_date_from_a_server_that_had_none_replaces_the_local_clock() {
        let start = Instant::now();
        let mut contact = Contact::new(
            ServerClock::anchored(start, ts("2026-12-01T09:00:00Z")),
            false,
            start,
        );
        contact.observe(
            &ProbeOutcome::Answered(Some(ts("2026-12-01T10:00:00Z"))),
            start,
            start,
        );
        assert!(contact.server_clock());
        assert_eq!(contact.now(start), ts("2026-12-01T10:00:00.5Z"));
    }
}
