//! The metrics of `serve --rancher-clusters`: every cluster Rancher manages, each series with
//! a `cluster` label (Rancher's display name), set from one `FleetReport` per round. Names
//! follow the single-cluster metrics, so one set of alerts covers both; a cluster that is gone
//! from the fleet loses its series.

use std::sync::atomic::AtomicU64;
use std::time::Duration;

use jiff::Timestamp;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::Registry;

use super::metrics::affected;
use crate::diagnose::finding::FindingCode;
use crate::diagnose::fleet::{FleetEntry, FleetOutcome};
use crate::report::{CheckReport, FleetReport};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ClusterLabels {
    cluster: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FindingLabels {
    cluster: String,
    code: String,
    severity: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SplitLabels {
    cluster: String,
    lock: String,
    affected: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StateLabels {
    cluster: String,
    state: String,
}

type FloatGauge = Gauge<f64, AtomicU64>;

pub(super) struct FleetMetrics {
    registry: Registry,
    up: Gauge,
    ready: Gauge,
    cluster_up: Family<ClusterLabels, Gauge>,
    findings: Family<FindingLabels, Gauge>,
    findings_ignored: Family<FindingLabels, Gauge>,
    lease_split: Family<SplitLabels, Gauge>,
    snapshot_entries: Family<StateLabels, Gauge>,
    etcd_members: Family<StateLabels, Gauge>,
    last_evaluation: FloatGauge,
    evaluation_duration: Histogram,
}

impl FleetMetrics {
    pub(super) fn new(version: &str) -> FleetMetrics {
        let mut registry = Registry::default();
        let m = FleetMetrics {
            registry: Registry::default(),
            up: Gauge::default(),
            ready: Gauge::default(),
            cluster_up: Family::default(),
            findings: Family::default(),
            findings_ignored: Family::default(),
            lease_split: Family::default(),
            snapshot_entries: Family::default(),
            etcd_members: Family::default(),
            last_evaluation: FloatGauge::default(),
            // 50 ms to ~7 min: one round reads every cluster.
            evaluation_duration: Histogram::new(exponential_buckets(0.05, 2.0, 14)),
        };
        registry.register(
            "k3sdoctor_up",
            "1 when the last round read Rancher's management cluster",
            m.up.clone(),
        );
        registry.register(
            "k3sdoctor_ready",
            "1 once a round has read every cluster",
            m.ready.clone(),
        );
        registry.register(
            "k3sdoctor_cluster_up",
            "1 when the last round read the cluster through Rancher's proxy, 0 when it could not (Rancher says it is disconnected, or it did not answer)",
            m.cluster_up.clone(),
        );
        registry.register(
            "k3sdoctor_findings",
            "Findings of the last round, per cluster and code",
            m.findings.clone(),
        );
        registry.register(
            "k3sdoctor_findings_ignored",
            "Findings matched by --ignore or the config file, per cluster and code: not in k3sdoctor_findings, so they do not alert",
            m.findings_ignored.clone(),
        );
        registry.register(
            "k3sdoctor_lease_split",
            "1 when <prog> and <prog>-etcd are held by different servers; affected: whether this version loses snapshot entries then",
            m.lease_split.clone(),
        );
        registry.register(
            "k3sdoctor_snapshot_entries",
            "Snapshot ConfigMap entries per state against the ETCDSnapshotFiles",
            m.snapshot_entries.clone(),
        );
        registry.register(
            "k3sdoctor_etcd_members",
            "etcd members by the readiness of their Node",
            m.etcd_members.clone(),
        );
        registry.register(
            "k3sdoctor_last_evaluation_timestamp_seconds",
            "When the last round ended (Unix time)",
            m.last_evaluation.clone(),
        );
        registry.register(
            "k3sdoctor_evaluation_duration_seconds",
            "How long one round over every cluster took",
            m.evaluation_duration.clone(),
        );
        registry.register(
            "k3sdoctor_build",
            "The running k3sdoctor",
            Info::new(vec![("version".to_string(), version.to_string())]),
        );
        FleetMetrics { registry, ..m }
    }

    /// Sets every series from one round's report.
    pub(super) fn record(&self, report: &FleetReport<CheckReport>, took: Duration, at: Timestamp) {
        self.up.set(1);
        self.ready.set(1);
        self.last_evaluation
            .set(at.as_millisecond() as f64 / 1000.0);
        self.evaluation_duration.observe(took.as_secs_f64());
        for family in [&self.findings, &self.findings_ignored] {
            family.clear();
        }
        self.cluster_up.clear();
        self.lease_split.clear();
        self.snapshot_entries.clear();
        self.etcd_members.clear();
        for entry in &report.entries {
            self.record_cluster(entry);
        }
    }

    fn record_cluster(&self, entry: &FleetEntry<CheckReport>) {
        let cluster = entry.context.clone();
        let read = entry.outcome == FleetOutcome::Checked;
        self.cluster_up
            .get_or_create(&ClusterLabels {
                cluster: cluster.clone(),
            })
            .set(i64::from(read));
        let Some(report) = entry.report.as_ref().filter(|_| read) else {
            return;
        };
        let analysis = &report.analysis;
        let findings = analysis.all_findings();
        for finding in &findings {
            let family = if finding.ignored {
                &self.findings_ignored
            } else {
                &self.findings
            };
            family
                .get_or_create(&FindingLabels {
                    cluster: cluster.clone(),
                    code: finding.code.as_str().to_string(),
                    severity: finding.severity.as_str().to_string(),
                })
                .inc();
        }
        let split = findings
            .iter()
            .any(|f| f.code == FindingCode::LeaseSplit && !f.ignored);
        self.lease_split
            .get_or_create(&SplitLabels {
                cluster: cluster.clone(),
                lock: analysis.cluster.distro.core_lock(),
                affected: affected(report).to_string(),
            })
            .set(i64::from(split));
        if let Some(totals) = &analysis.snapshots {
            for (state, count) in totals.by_state() {
                self.state(&self.snapshot_entries, &cluster, state)
                    .set(count as i64);
            }
        }
        let c = &analysis.cluster;
        if c.nodes_known {
            self.state(&self.etcd_members, &cluster, "ready")
                .set(c.etcd_members_ready as i64);
            self.state(&self.etcd_members, &cluster, "not_ready")
                .set(c.etcd_members.saturating_sub(c.etcd_members_ready) as i64);
        }
    }

    /// The management cluster could not be read this round: the verdicts are held.
    pub(super) fn mark_unreadable(&self) {
        self.up.set(0);
    }

    pub(super) fn encode(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }

    fn state<'a>(
        &self,
        family: &'a Family<StateLabels, Gauge>,
        cluster: &str,
        state: &str,
    ) -> impl std::ops::Deref<Target = Gauge> + 'a {
        family.get_or_create(&StateLabels {
            cluster: cluster.to_string(),
            state: state.to_string(),
        })
    }
}
