//! `serve`: what the long-running exporter publishes (metrics, readiness, the latest report)
//! and the HTTP endpoints that publish it. The watch loop that feeds it is in
//! `commands::serve`.

pub mod endpoints;
pub mod log;
pub mod metrics;

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use jiff::Timestamp;

use metrics::Metrics;

/// Shared between the watch loop (which writes) and the endpoints (which read).
pub struct Exporter {
    pub metrics: Metrics,
    /// The latest `CheckReport`, as `/report` serves it.
    report: Mutex<Option<String>>,
    ready: AtomicBool,
    /// The API server's clock minus ours in milliseconds, so ages are judged as `check`
    /// judges them (0 until the server has been asked).
    clock_offset_ms: AtomicI64,
}

impl Exporter {
    pub fn new(version: &str) -> Exporter {
        Exporter {
            metrics: Metrics::new(version),
            report: Mutex::new(None),
            ready: AtomicBool::new(false),
            clock_offset_ms: AtomicI64::new(0),
        }
    }

    /// Judge time on the API server's clock, which was `server` a moment ago.
    pub fn set_server_clock(&self, server: Timestamp) {
        let offset = server.duration_since(Timestamp::now()).as_millis();
        self.clock_offset_ms
            .store(i64::try_from(offset).unwrap_or(0), Ordering::Relaxed);
    }

    /// Now, on the API server's clock.
    pub fn now(&self) -> Timestamp {
        let local = Timestamp::now();
        let offset =
            jiff::SignedDuration::from_millis(self.clock_offset_ms.load(Ordering::Relaxed));
        local.checked_add(offset).unwrap_or(local)
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
