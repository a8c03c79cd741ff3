//! The Prometheus metrics of `serve`, set from a `CheckReport` and the watches' health. No
//! I/O: the endpoint encodes what is recorded here. Names and labels are stable (README
//! "Monitoring"); a series whose subject is gone (a finding fixed, a holder moved) is removed,
//! not left at its last value.

use std::sync::Mutex;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use jiff::Timestamp;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::Registry;

use crate::diagnose::finding::FindingCode;
use crate::diagnose::version_advice::VersionStatus;
use crate::input::watch::WatchHealth;
use crate::input::watch::watch_failure::WatchFailure;
use crate::report::CheckReport;

/// The content type of what [`Metrics::encode`] writes (OpenMetrics text).
pub(super) const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FindingLabels {
    code: String,
    severity: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SplitLabels {
    lock: String,
    affected: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HolderLabels {
    lock: String,
    holder: String,
    node: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LockLabels {
    lock: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StateLabels {
    state: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResourceLabels {
    resource: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct WatchErrorLabels {
    resource: String,
    reason: String,
}

type FloatGauge = Gauge<f64, AtomicU64>;

pub(crate) struct Metrics {
    registry: Registry,
    up: Gauge,
    stale: Gauge,
    ready: Gauge,
    findings: Family<FindingLabels, Gauge>,
    findings_ignored: Family<FindingLabels, Gauge>,
    lease_split: Family<SplitLabels, Gauge>,
    holder_info: Family<HolderLabels, Gauge>,
    renew_age: Family<LockLabels, FloatGauge>,
    snapshot_entries: Family<StateLabels, Gauge>,
    etcd_members: Family<StateLabels, Gauge>,
    last_evaluation: FloatGauge,
    evaluation_duration: Histogram,
    watch_synced: Family<ResourceLabels, Gauge>,
    watch_errors: Family<WatchErrorLabels, Counter>,
    /// The last renewal of each lock: the age is worked out when scraped, so it grows between
    /// evaluations as it does on the server.
    renewals: Mutex<Vec<(String, Timestamp)>>,
    /// Each server's datastore: sizes, quota, latencies over the last interval.
    pub datastore: super::datastore_metrics::DatastoreMetrics,
    /// `serve --heal`'s metrics, when it is on or dry-run.
    pub heal: Option<crate::heal::heal_metrics::HealMetrics>,
}

impl Metrics {
    pub(crate) fn new(version: &str) -> Metrics {
        let mut registry = Registry::default();
        let metrics = Metrics {
            up: Gauge::default(),
            stale: Gauge::default(),
            ready: Gauge::default(),
            findings: Family::default(),
            findings_ignored: Family::default(),
            lease_split: Family::default(),
            holder_info: Family::default(),
            renew_age: Family::default(),
            snapshot_entries: Family::default(),
            etcd_members: Family::default(),
            last_evaluation: FloatGauge::default(),
            // 0.5 ms to ~4 s: an evaluation over 5,000 snapshots takes milliseconds.
            evaluation_duration: Histogram::new(exponential_buckets(0.0005, 2.0, 14)),
            watch_synced: Family::default(),
            watch_errors: Family::default(),
            renewals: Mutex::new(Vec::new()),
            datastore: Default::default(),
            heal: None,
            registry: Registry::default(),
        };
        metrics.register_verdict(&mut registry);
        metrics.datastore.register(&mut registry);
        metrics.register_evaluation(&mut registry, version);
        Metrics {
            registry,
            ..metrics
        }
    }

    /// What the last evaluation found: the metrics alerts are written on.
    fn register_verdict(&self, registry: &mut Registry) {
        registry.register(
            "k3sdoctor_up",
            "1 when the last evaluation read everything it needs and the API server answers",
            self.up.clone(),
        );
        registry.register(
            "k3sdoctor_stale",
            "1 while contact with the API server is lost: the findings are the last verdict, held",
            self.stale.clone(),
        );
        registry.register(
            "k3sdoctor_ready",
            "1 once every watch has listed its objects",
            self.ready.clone(),
        );
        registry.register(
            "k3sdoctor_findings",
            "Findings of the last evaluation, per code",
            self.findings.clone(),
        );
        registry.register(
            "k3sdoctor_findings_ignored",
            "Findings of the last evaluation matched by --ignore or the config file, per code: not in k3sdoctor_findings, so they do not alert",
            self.findings_ignored.clone(),
        );
        registry.register(
            "k3sdoctor_lease_split",
            "1 when <prog> and <prog>-etcd are held by different servers; affected: whether this version loses snapshot entries then",
            self.lease_split.clone(),
        );
        registry.register(
            "k3sdoctor_lease_holder_info",
            "The holder of each leader lock and its Node",
            self.holder_info.clone(),
        );
        registry.register(
            "k3sdoctor_lease_renew_age_seconds",
            "Seconds since the lock's holder last renewed it",
            self.renew_age.clone(),
        );
        registry.register(
            "k3sdoctor_snapshot_entries",
            "Snapshot ConfigMap entries per state against the ETCDSnapshotFiles",
            self.snapshot_entries.clone(),
        );
        registry.register(
            "k3sdoctor_etcd_members",
            "etcd members by the readiness of their Node",
            self.etcd_members.clone(),
        );
    }

    /// How the evaluations and the watches behind them go, and which build runs.
    fn register_evaluation(&self, registry: &mut Registry, version: &str) {
        registry.register(
            "k3sdoctor_last_evaluation_timestamp_seconds",
            "When the last evaluation ran (Unix time)",
            self.last_evaluation.clone(),
        );
        registry.register(
            "k3sdoctor_evaluation_duration_seconds",
            "How long one evaluation of the watched objects took",
            self.evaluation_duration.clone(),
        );
        registry.register(
            "k3sdoctor_watch_synced",
            "1 once the watch has listed its objects (or found its CRD absent)",
            self.watch_synced.clone(),
        );
        registry.register(
            "k3sdoctor_watch_errors",
            "Failed watch attempts (each is retried with backoff)",
            self.watch_errors.clone(),
        );
        registry.register(
            "k3sdoctor_build",
            "The running k3sdoctor",
            Info::new(vec![("version".to_string(), version.to_string())]),
        );
    }

    /// Registers the heal metrics (before the exporter is shared).
    pub(crate) fn enable_heal(&mut self) {
        self.heal = Some(crate::heal::heal_metrics::HealMetrics::register(
            &mut self.registry,
        ));
    }

    /// Sets every report-derived metric from one evaluation. `complete`: every watch had
    /// synced and none was failing (what `k3sdoctor_up` says).
    pub(crate) fn record_evaluation(
        &self,
        report: &CheckReport,
        complete: bool,
        took: Duration,
        at: Timestamp,
    ) {
        let analysis = &report.analysis;
        self.up.set(i64::from(complete));
        self.last_evaluation
            .set(at.as_millisecond() as f64 / 1000.0);
        self.evaluation_duration.observe(took.as_secs_f64());

        self.findings.clear();
        self.findings_ignored.clear();
        for finding in analysis.all_findings() {
            let family = if finding.ignored {
                &self.findings_ignored
            } else {
                &self.findings
            };
            family
                .get_or_create(&FindingLabels {
                    code: finding.code.as_str().to_string(),
                    severity: finding.severity.as_str().to_string(),
                })
                .inc();
        }

        let split = analysis
            .all_findings()
            .iter()
            // An ignored split is no alert either: the split alert keys on this series.
            .any(|f| f.code == FindingCode::LeaseSplit && !f.ignored);
        self.lease_split.clear();
        self.lease_split
            .get_or_create(&SplitLabels {
                lock: analysis.cluster.distro.core_lock(),
                affected: affected(report).to_string(),
            })
            .set(i64::from(split));

        self.holder_info.clear();
        let mut renewals = Vec::new();
        for lock in &analysis.locks {
            if let Some(holder) = &lock.holder {
                self.holder_info
                    .get_or_create(&HolderLabels {
                        lock: lock.name.clone(),
                        holder: holder.clone(),
                        node: lock
                            .node
                            .as_ref()
                            .map(|n| n.name.clone())
                            .unwrap_or_default(),
                    })
                    .set(1);
            }
            if let Some(renewed) = lock.renew_time {
                renewals.push((lock.name.clone(), renewed));
            }
        }
        *self.renewals.lock().unwrap_or_else(|p| p.into_inner()) = renewals;

        self.snapshot_entries.clear();
        if let Some(totals) = &analysis.snapshots {
            for (state, count) in totals.by_state() {
                self.entry(&self.snapshot_entries, state).set(count as i64);
            }
        }

        self.etcd_members.clear();
        let cluster = &analysis.cluster;
        if cluster.nodes_known {
            let ready = cluster.etcd_members_ready;
            self.entry(&self.etcd_members, "ready").set(ready as i64);
            self.entry(&self.etcd_members, "not_ready")
                .set(cluster.etcd_members.saturating_sub(ready) as i64);
        }
    }

    /// Readiness and the per-watch sync state.
    pub(crate) fn record_watches<'a>(&self, health: impl Iterator<Item = &'a WatchHealth>) {
        let mut all_synced = true;
        for watch in health {
            all_synced &= watch.synced;
            self.watch_synced
                .get_or_create(&ResourceLabels {
                    resource: watch.resource.clone(),
                })
                .set(i64::from(watch.synced));
        }
        self.ready.set(i64::from(all_synced));
    }

    /// One failed watch attempt; `k3sdoctor_up` drops until an evaluation reads everything.
    pub(crate) fn count_watch_error(&self, failure: &WatchFailure) {
        self.watch_errors
            .get_or_create(&WatchErrorLabels {
                resource: failure.resource.clone(),
                reason: failure.reason.label().to_string(),
            })
            .inc();
    }

    /// Renewals seen since the last evaluation (`renewed(lock)`: the lock's latest renewTime).
    pub(crate) fn refresh_renewals(&self, renewed: impl Fn(&str) -> Option<Timestamp>) {
        let mut renewals = self.renewals.lock().unwrap_or_else(|p| p.into_inner());
        for (lock, at) in renewals.iter_mut() {
            if let Some(newer) = renewed(lock).filter(|t| *t > *at) {
                *at = newer;
            }
        }
    }

    pub(crate) fn mark_incomplete(&self) {
        self.up.set(0);
    }

    /// `stale`: contact with the API server is lost and the findings are held from the last
    /// evaluation before it; `k3sdoctor_up` is 0 for as long.
    pub(crate) fn mark_stale(&self, stale: bool) {
        self.stale.set(i64::from(stale));
        if stale {
            self.up.set(0);
        }
    }

    /// The exposition text, with renewal ages as of `now`.
    pub(crate) fn encode(&self, now: Timestamp) -> String {
        self.renew_age.clear();
        for (lock, renewed) in self
            .renewals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            let age = now.duration_since(*renewed).as_secs_f64().max(0.0);
            self.renew_age
                .get_or_create(&LockLabels { lock: lock.clone() })
                .set(age);
        }
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }

    fn entry<'a>(
        &self,
        family: &'a Family<StateLabels, Gauge>,
        state: &str,
    ) -> impl std::ops::Deref<Target = Gauge> + 'a {
        family.get_or_create(&StateLabels {
            state: state.to_string(),
        })
    }
}

/// Whether a split loses snapshot entries on what the servers run: `true` when any minor
/// line is affected, `false` when every line is known not to be, else `unknown`.
pub(super) fn affected(report: &CheckReport) -> &'static str {
    let advice = &report.analysis.version_advice;
    if advice.iter().any(|a| a.status == VersionStatus::Affected) {
        "true"
    } else if !advice.is_empty()
        && advice
            .iter()
            .all(|a| a.status != VersionStatus::Undetermined)
    {
        "false"
    } else {
        "unknown"
    }
}

#[cfg(test)]
mod tests;
