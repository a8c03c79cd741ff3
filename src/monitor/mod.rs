//! `serve`: what the long-running exporter publishes (metrics, readiness, the latest report)
//! and the HTTP endpoints that publish it. The watch loop that feeds it is in
//! `commands::serve`.

pub(crate) mod access;
pub(crate) mod contact;
pub(crate) mod datastore_growth;
pub(crate) mod datastore_latency;
mod datastore_metrics;
pub(crate) mod endpoints;
mod fleet_metrics;
pub(crate) mod listener;
pub(crate) mod log;
mod metrics;
mod request_head;
pub(crate) mod review_budget;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use jiff::Timestamp;

use crate::report::CheckReport;
use contact::{Contact, ContactChange, ProbeOutcome, ServerClock};
use fleet_metrics::FleetMetrics;
use metrics::Metrics;

/// Shared between the watch loop (which writes) and the endpoints (which read).
pub(crate) struct Exporter {
    pub metrics: Metrics,
    /// The latest `CheckReport`, serialized when `/report` asks: held as JSON text it was
    /// 20.8 MB at 50,000 missing snapshots, and building that text doubled it.
    report: Mutex<Option<Arc<CheckReport>>>,
    /// `serve --heal`'s state (mode, split, gates, last heal), added to `/report` as `heal`.
    heal: Mutex<Option<serde_json::Value>>,
    ready: AtomicBool,
    /// Contact with the API server and its clock, so ages are judged as `check` judges them
    /// (the local clock read once at start until the server has answered).
    contact: Mutex<Contact>,
    /// `serve --rancher-clusters`: the per-cluster metrics, published instead of `metrics`,
    /// and the latest `FleetReport` as JSON text for `/report`.
    fleet: Option<FleetMetrics>,
    fleet_report: Mutex<Option<String>>,
}

impl Exporter {
    pub(crate) fn new(version: &str) -> Exporter {
        Exporter {
            metrics: Metrics::new(version),
            report: Mutex::new(None),
            heal: Mutex::new(None),
            ready: AtomicBool::new(false),
            // The only read of the local wall clock: from here on time moves with the
            // monotonic clock, and the API server's `Date` headers correct it.
            contact: Mutex::new(Contact::new(
                ServerClock::anchored(Instant::now(), Timestamp::now()),
                false,
                Instant::now(),
            )),
            fleet: None,
            fleet_report: Mutex::new(None),
        }
    }

    /// The exporter of `serve --rancher-clusters`: every series carries a `cluster` label.
    pub(crate) fn for_fleet(version: &str) -> Exporter {
        Exporter {
            fleet: Some(FleetMetrics::new(version)),
            ..Exporter::new(version)
        }
    }

    /// The exposition text of whichever metrics this exporter publishes.
    pub(crate) fn encode_metrics(&self) -> String {
        match &self.fleet {
            Some(fleet) => fleet.encode(),
            None => self.metrics.encode(self.scrape_now()),
        }
    }

    /// One round of `serve --rancher-clusters`: its metrics and its report; ready from the
    /// first. `None`: the management cluster could not be read, the last round is held.
    pub(crate) fn publish_fleet(
        &self,
        report: Option<&crate::report::FleetReport<CheckReport>>,
        took: std::time::Duration,
        at: Timestamp,
    ) {
        let Some(fleet) = &self.fleet else {
            return;
        };
        match report {
            Some(report) => {
                fleet.record(report, took, at);
                let json = crate::render::json_exactly_sized(report).ok();
                *self.fleet_report.lock().unwrap_or_else(|p| p.into_inner()) = json;
                self.set_ready(true);
            }
            None => fleet.mark_unreadable(),
        }
    }

    fn contact(&self) -> std::sync::MutexGuard<'_, Contact> {
        self.contact.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes in one contact probe (see [`Contact::observe`]); `k3sdoctor_stale` follows it.
    pub(crate) fn observe_probe(
        &self,
        outcome: &ProbeOutcome,
        sent: Instant,
        received: Instant,
    ) -> ContactChange {
        let mut contact = self.contact();
        let change = contact.observe(outcome, sent, received);
        if contact.lost() {
            self.metrics.mark_stale(true);
        }
        change
    }

    /// Whether contact with the API server is lost (the published verdict is held, stale).
    pub(crate) fn contact_lost(&self) -> bool {
        self.contact().lost()
    }

    /// Whether "now" is the API server's clock.
    pub(crate) fn on_server_clock(&self) -> bool {
        self.contact().server_clock()
    }

    /// The time to judge freshness at: now, but never past the server's last answer.
    pub(crate) fn judged_now(&self) -> Timestamp {
        self.contact().judged_now(Instant::now())
    }

    /// The time ages are shown at on `/metrics`: now while in contact, the last contact once
    /// it is lost (a renewal may well have happened since, unseen).
    pub(crate) fn scrape_now(&self) -> Timestamp {
        let contact = self.contact();
        if contact.lost() {
            contact.last_contact()
        } else {
            contact.now(Instant::now())
        }
    }

    /// The report of a complete evaluation (marked fresh again).
    pub(crate) fn publish_report(&self, report: Arc<CheckReport>) {
        *self.report.lock().unwrap_or_else(|p| p.into_inner()) = Some(report);
        self.metrics.mark_stale(false);
    }

    /// `serve --heal`'s state for `/report`.
    pub(crate) fn publish_heal(&self, heal: serde_json::Value) {
        *self.heal.lock().unwrap_or_else(|p| p.into_inner()) = Some(heal);
    }

    /// The latest report; while contact is lost it is held and says so: `"stale": true` and
    /// `"lastContact"` (the API server's time of its last answer). With `--heal`, `"heal"`
    /// holds the heal's state.
    pub(crate) fn report(&self) -> Option<String> {
        if self.fleet.is_some() {
            return self
                .fleet_report
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
        }
        let latest = self
            .report
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()?;
        let json = crate::render::json_exactly_sized(&*latest).ok()?;
        let contact = self.contact().clone();
        let heal = self.heal.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if !contact.lost() && heal.is_none() {
            return Some(json);
        }
        let Ok(serde_json::Value::Object(mut report)) = serde_json::from_str(&json) else {
            return Some(json);
        };
        if contact.lost() {
            report.insert("stale".into(), true.into());
            report.insert(
                "lastContact".into(),
                contact.last_contact().to_string().into(),
            );
        }
        if let Some(heal) = heal {
            report.insert("heal".into(), heal);
        }
        Some(crate::render::json_escape::to_string_pretty(&report).unwrap_or(json))
    }

    pub(crate) fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::Relaxed);
    }

    pub(crate) fn ready(&self) -> bool {
        self.ready.load(Ordering::Relaxed)
    }
}
