//! serve's evaluations: `check`'s analysers over what the watches hold, the verdict published
//! and logged when it changes, and the lock state handed to the heal task.

use std::time::Duration;

use super::control_plane_poll::Polled;
use crate::commands::serve_heal::HealInput;
use crate::diagnose::check::analyse_check;
use crate::diagnose::finding::{FindingCode, Severity};
use crate::diagnose::leases::analyse_leases;
use crate::diagnose::suppression::Suppressions;
use crate::distro::Distro;
use crate::input::watch::ClusterWatch;
use crate::model::cluster_state::ClusterState;
use crate::model::collected::Collected;
use crate::monitor::Exporter;
use crate::monitor::datastore_growth::SizeHistory;
use crate::monitor::datastore_latency::{IntervalLatencies, IntervalP99};
use crate::report::{CheckReport, Now, NowSource};

/// The snapshot rules have a clock too (a CR older than a minute without the controller's
/// finalizer): a full evaluation at least this often, whatever changed.
const EVALUATE_AT_LEAST_EVERY: Duration = Duration::from_secs(60);

pub(super) struct Evaluator<'a> {
    pub(super) exporter: &'a Exporter,
    explicit: Option<Distro>,
    /// The finding codes of the last evaluation, to log when they change.
    verdict: Option<Vec<String>>,
    /// The lease findings of the last evaluation, to tell when time alone changed them.
    lease_verdict: Vec<(FindingCode, Severity, String)>,
    evaluated: Option<std::time::Instant>,
    /// `--ignore` and the config file: applied to every evaluation.
    suppressions: Suppressions,
    /// Each server's latency histograms at the last poll, and the p99s since the one before.
    latencies: IntervalLatencies,
    latency_poll: Option<u64>,
    p99s: Vec<IntervalP99>,
    /// Each server's sizes over the last hour's polls, for the pace towards its quota.
    sizes: SizeHistory,
}

impl<'a> Evaluator<'a> {
    pub(super) fn new(
        exporter: &'a Exporter,
        explicit: Option<Distro>,
        suppressions: Suppressions,
    ) -> Evaluator<'a> {
        Evaluator {
            exporter,
            explicit,
            verdict: None,
            lease_verdict: Vec::new(),
            evaluated: None,
            suppressions,
            latencies: IntervalLatencies::default(),
            latency_poll: None,
            p99s: Vec::new(),
            sizes: SizeHistory::default(),
        }
    }

    fn distro(&self, state: &ClusterState) -> Distro {
        self.explicit
            .or_else(|| state.detect_distro())
            .unwrap_or(Distro::K3s)
    }

    /// The lease verdict as of now, from memory.
    fn judge_leases(&self, watch: &ClusterWatch) -> Vec<(FindingCode, Severity, String)> {
        let state = watch.lease_state();
        analyse_leases(&state, self.distro(&state), self.exporter.judged_now())
            .findings
            .into_iter()
            .map(|f| (f.code, f.severity, f.object))
            .collect()
    }

    /// Whether time alone has made the last evaluation wrong (or it is simply old).
    pub(super) fn stale(&self, watch: &ClusterWatch) -> bool {
        match self.evaluated {
            None => true,
            Some(at) if at.elapsed() >= EVALUATE_AT_LEAST_EVERY => true,
            Some(_) => watch.synced() && self.judge_leases(watch) != self.lease_verdict,
        }
    }

    /// `polled`: the latest minute-by-minute read of what is not watched, added to the
    /// watched state. Returns the state judged, when there was an evaluation.
    pub(super) fn evaluate(
        &mut self,
        watch: &ClusterWatch,
        polled: Option<&Polled>,
    ) -> Option<ClusterState> {
        let metrics = &self.exporter.metrics;
        metrics.record_watches(watch.health());
        if self.exporter.contact_lost() {
            // What is in memory may be minutes old: the last verdict stays, marked stale.
            return None;
        }
        if !watch.synced() {
            // Half a picture would report healthy locks as missing.
            metrics.mark_incomplete();
            return None;
        }
        self.exporter.set_ready(true);
        let started = std::time::Instant::now();
        let mut state = watch.state();
        if let Some(polled) = polled {
            polled.fill(&mut state);
        }
        let distro = self.distro(&state);
        let now = self.exporter.judged_now();
        if let Collected::Read(reads) = &mut state.server_metrics {
            // Evaluations come oftener than polls: an interval ends only at a new poll.
            if let Some(polled) = polled
                && self.latency_poll != Some(polled.poll)
            {
                self.latency_poll = Some(polled.poll);
                self.p99s = self.latencies.observe(reads, now);
                self.sizes.record(reads, now);
            }
            self.sizes.annotate(reads);
        }
        let reads = state
            .server_metrics
            .as_read()
            .map(Vec::as_slice)
            .unwrap_or_default();
        self.evaluated = Some(started);
        self.lease_verdict = self.judge_leases(watch);
        let analysis = self.suppressions.apply(analyse_check(&state, distro, now));
        let report = CheckReport::new(
            Now {
                time: now,
                source: if self.exporter.on_server_clock() {
                    NowSource::ApiServerClock
                } else {
                    NowSource::LocalClock
                },
            },
            analysis,
        );
        let complete = watch.health().all(|h| h.failing.is_none());
        metrics.record_evaluation(&report, complete, started.elapsed(), now);
        metrics
            .datastore
            .record(&report.analysis.datastore, reads, &self.p99s);
        // Kept as it is and serialized when `/report` asks.
        let report = std::sync::Arc::new(report);
        self.exporter.publish_report(std::sync::Arc::clone(&report));
        self.log_verdict_change(&report);
        Some(state)
    }

    /// One evaluation for the heal task: the lock state from memory and the server's time.
    pub(super) fn send_to_healer(
        &self,
        watch: &ClusterWatch,
        inputs: Option<&tokio::sync::watch::Sender<Option<HealInput>>>,
    ) {
        let Some(inputs) = inputs else { return };
        if self.exporter.contact_lost() || !watch.synced() {
            return;
        }
        let state = watch.lease_state();
        inputs.send_replace(Some(HealInput {
            distro: self.distro(&state),
            state,
            now: self.exporter.judged_now(),
        }));
    }

    fn log_verdict_change(&mut self, report: &CheckReport) {
        // Ignored findings are no verdict: the log, like the alerting metric, leaves them out.
        let findings: Vec<_> = report
            .analysis
            .all_findings()
            .into_iter()
            .filter(|f| !f.ignored)
            .collect();
        let codes: Vec<String> = findings
            .iter()
            .map(|f| format!("{}/{}", f.code.as_str(), f.severity.as_str()))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        if self.verdict.as_ref() == Some(&codes) {
            return;
        }
        let summary = &report.summary;
        if codes.is_empty() {
            tracing::info!(findings = "", "verdict: healthy, no findings");
        } else {
            tracing::info!(
                findings = %codes.join(","),
                errors = summary.errors,
                warnings = summary.warnings,
                "verdict: {}",
                findings
                    .iter()
                    .map(|f| format!("{} {}", f.code.as_str(), f.object))
                    .collect::<Vec<_>>()
                    .join("; ")
            );
        }
        self.verdict = Some(codes);
    }
}
