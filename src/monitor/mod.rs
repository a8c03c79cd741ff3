//! `serve`: what the long-running exporter publishes (metrics, readiness, the latest report)
//! and the HTTP endpoints that publish it. The watch loop that feeds it is in
//! `commands::serve`.

pub mod endpoints;
pub mod log;
pub mod metrics;

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use jiff::Timestamp;

use metrics::Metrics;

/// Shared between the watch loop (which writes) and the endpoints (which read).
pub struct Exporter {
    pub metrics: Metrics,
    /// The latest `CheckReport`, as `/report` serves it.
    report: Mutex<Option<String>>,
    ready: AtomicBool,
    /// The API server's clock minus ours, so ages are judged as `check` judges them.
    clock_offset: jiff::SignedDuration,
}

impl Exporter {
    pub fn new(version: &str, clock_offset: jiff::SignedDuration) -> Exporter {
        Exporter {
            metrics: Metrics::new(version),
            report: Mutex::new(None),
            ready: AtomicBool::new(false),
            clock_offset,
        }
    }

    /// Now, on the API server's clock.
    pub fn now(&self) -> Timestamp {
        let local = Timestamp::now();
        local.checked_add(self.clock_offset).unwrap_or(local)
    }

    pub fn publish_report(&self, json: String) {
        *self.report.lock().unwrap_or_else(|p| p.into_inner()) = Some(json);
    }

    pub fn report(&self) -> Option<String> {
        self.report
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::Relaxed);
    }

    pub fn ready(&self) -> bool {
        self.ready.load(Ordering::Relaxed)
    }
}
