//! The requests in flight, so that the command layer can show what a slow read is waiting
//! for. Bookkeeping only: nothing here prints.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Default)]
pub(crate) struct Activity {
    in_flight: Arc<Mutex<InFlightRequests>>,
}

#[derive(Debug, Default)]
struct InFlightRequests {
    next_id: u64,
    /// (id, what is being read, when it was sent)
    requests: Vec<(u64, String, Instant)>,
}

/// Marks a request as in flight until dropped (also when its future is cancelled).
pub(crate) struct InFlight {
    activity: Activity,
    id: u64,
}

impl Activity {
    pub(crate) fn begin(&self, what: &str) -> InFlight {
        let mut state = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        let id = state.next_id;
        state.next_id += 1;
        state.requests.push((id, what.to_string(), Instant::now()));
        InFlight {
            activity: self.clone(),
            id,
        }
    }

    /// The request waiting longest, and for how long, as of `now`.
    pub(crate) fn longest_waiting(&self, now: Instant) -> Option<(String, Duration)> {
        let state = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        state
            .requests
            .iter()
            .min_by_key(|(_, _, sent)| *sent)
            .map(|(_, what, sent)| (what.clone(), now.saturating_duration_since(*sent)))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut state = self
            .activity
            .in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        state.requests.retain(|(id, ..)| *id != self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_request_in_flight_is_reported_until_it_ends() {
        let activity = Activity::default();
        assert!(activity.longest_waiting(Instant::now()).is_none());
        let first = activity.begin("list nodes");
        let second = activity.begin("list leases in kube-system");
        let later = Instant::now() + Duration::from_secs(2);
        let (what, waited) = activity.longest_waiting(later).unwrap();
        assert_eq!(what, "list nodes");
        assert!(waited >= Duration::from_secs(2));
        drop(first);
        assert_eq!(
            activity.longest_waiting(later).unwrap().0,
            "list leases in kube-system"
        );
        drop(second);
        assert!(activity.longest_waiting(later).is_none());
    }
}
