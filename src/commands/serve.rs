//! `k3sdoctor serve`: watches what `check` reads, runs `check`'s analysers when it changes
//! (debounced) and publishes the verdicts for Prometheus. Watch failures are logged, counted
//! and retried by the watcher; only a bad kubeconfig or an address that cannot be bound ends
//! the process early.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::time::Instant;

use super::Ui;
use super::load::{explicit_distro, runtime};
use super::termination::Termination;
use crate::cli::{GlobalArgs, ServeArgs};
use crate::cluster::ClusterState;
use crate::cluster::cluster_watch::{ClusterWatch, WatchNews, WatchScope};
use crate::cluster::connect::{ConnectOptions, connect};
use crate::cluster::live;
use crate::cluster::watch_failure::WatchFailure;
use crate::diagnose::check::analyse_check;
use crate::diagnose::finding::{FindingCode, Severity};
use crate::diagnose::leases::analyse_leases;
use crate::distro::Distro;
use crate::exit::{Exit, Failure};
use crate::monitor::{Exporter, endpoints, log};
use crate::render::{self, OutputFormat};
use crate::report::{CheckReport, Now, NowSource};

/// Changes arrive in bursts (a takeover touches both locks and their ConfigMaps); one
/// evaluation after the first change of a burst covers them and keeps change → metric short.
const DEBOUNCE: Duration = Duration::from_millis(250);

/// Time alone changes verdicts (a lock expires without any event): this often the locks are
/// judged again from memory (microseconds, no request), and everything is evaluated again when
/// their verdict moved.
const REJUDGE_EVERY: Duration = Duration::from_secs(5);

/// The shortest read timeout of serve's connection: the server ends each watch a little before
/// it (after at most 290 s) and the watcher resumes it, so a shorter `--request-timeout` would
/// only make every quiet watch restart more often.
const SHORTEST_READ_TIMEOUT: Duration = Duration::from_secs(320);

/// The snapshot rules have a clock too (a CR older than a minute without the controller's
/// finalizer): a full evaluation at least this often, whatever changed.
const EVALUATE_AT_LEAST_EVERY: Duration = Duration::from_secs(60);

pub fn run(global: &GlobalArgs, args: &ServeArgs, _ui: &mut Ui) -> anyhow::Result<Exit> {
    if !global.from_file.is_empty() {
        return Err(Failure::Refused(
            "serve watches a live cluster: a dump never changes; drop --from-file (or run check on it)"
                .into(),
        )
        .into());
    }
    if global.now.is_some() {
        return Err(Failure::Refused(
            "serve judges freshness on the API server's clock as time passes; drop --now".into(),
        )
        .into());
    }
    if global.output != OutputFormat::Table {
        return Err(Failure::Refused(
            "-o: serve prints no report (GET /report has the CheckReport); use --log-format json for JSON logs"
                .into(),
        )
        .into());
    }
    log::init(args.log_format);
    runtime()?.block_on(serve(global, args))
}

async fn serve(global: &GlobalArgs, args: &ServeArgs) -> anyhow::Result<Exit> {
    let mut termination = Termination::catch();
    let listener = TcpListener::bind(args.listen).await.map_err(|e| {
        Failure::Refused(format!(
            "serve: cannot listen on {}: {e}; choose another --listen address",
            args.listen
        ))
    })?;
    let address = listener.local_addr().unwrap_or(args.listen);
    let read_timeout = global
        .request_timeout
        .0
        .map(|t| t.max(SHORTEST_READ_TIMEOUT));
    let conn = connect(&ConnectOptions {
        kubeconfig: global.kubeconfig.clone(),
        context: global.single_context().map(str::to_string),
        request_timeout: read_timeout,
    })
    .await?;
    // Serving first: the liveness probe answers while the API server is still being asked.
    let exporter = Arc::new(Exporter::new(env!("CARGO_PKG_VERSION")));
    let open_files = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|l| endpoints::open_files_limit(&l));
    let http = tokio::spawn(endpoints::serve(
        listener,
        exporter.clone(),
        endpoints::connection_limit(open_files),
    ));
    tracing::info!(
        address = %address,
        apiserver = %conn.server,
        "serving /metrics, /healthz, /readyz and /report on http://{address}"
    );
    // An API server that does not answer must not hold up a SIGTERM (the pod is stopping).
    let server_time = tokio::select! {
        () = termination.received() => return Ok(stopped(http)),
        time = live::server_time(&conn, &|_| {}) => time,
    };
    if let Some(time) = server_time {
        exporter.set_server_clock(time);
    }

    let explicit = explicit_distro(global);
    let scope = WatchScope {
        distros: explicit.map_or(Distro::ALL.to_vec(), |d| vec![d]),
        snapshots: true,
    };
    let mut watch = ClusterWatch::start(&conn, &scope);
    let mut evaluator = Evaluator {
        exporter: &exporter,
        explicit,
        clock: if server_time.is_some() {
            NowSource::ApiServerClock
        } else {
            NowSource::LocalClock
        },
        verdict: None,
        lease_verdict: Vec::new(),
        evaluated: None,
    };
    let mut failing: BTreeMap<String, String> = BTreeMap::new();
    let mut due: Option<Instant> = None;
    let mut rejudge = tokio::time::interval_at(Instant::now() + REJUDGE_EVERY, REJUDGE_EVERY);
    loop {
        let deadline = due.unwrap_or_else(|| Instant::now() + REJUDGE_EVERY);
        tokio::select! {
            () = termination.received() => break,
            news = watch.next() => {
                let changed = match news {
                    WatchNews::Changed => true,
                    WatchNews::Unchanged => false,
                    // Every 2 s per lock: the renewal ages follow, the verdicts cannot have
                    // moved (an evaluation over thousands of snapshots would cost more).
                    WatchNews::Renewed => {
                        exporter.metrics.refresh_renewals(|lock| watch.lease_renewed(lock));
                        false
                    }
                    WatchNews::Failed(failure) => {
                        exporter.metrics.count_watch_error(&failure);
                        report_failure(&mut failing, failure);
                        true
                    }
                };
                // A watch that works again makes `k3sdoctor_up` 1 again, whatever it brought.
                let recovered = report_recoveries(&mut failing, &watch);
                if changed || recovered {
                    due.get_or_insert_with(|| Instant::now() + DEBOUNCE);
                }
            }
            () = tokio::time::sleep_until(deadline), if due.is_some() => {
                due = None;
                evaluator.evaluate(&watch);
            }
            _ = rejudge.tick() => {
                if evaluator.stale(&watch) {
                    due.get_or_insert_with(Instant::now);
                }
            }
        }
    }
    Ok(stopped(http))
}

fn stopped(http: tokio::task::JoinHandle<()>) -> Exit {
    http.abort();
    tracing::info!("stopping: SIGTERM or SIGINT received");
    Exit::Healthy
}

/// One warning per distinct failure of a watch; the watcher retries every few seconds.
fn report_failure(failing: &mut BTreeMap<String, String>, failure: WatchFailure) {
    if failing.get(&failure.resource) != Some(&failure.line) {
        tracing::warn!(
            resource = %failure.resource,
            reason = failure.reason.label(),
            "{}",
            failure.line
        );
        failing.insert(failure.resource, failure.line);
    }
}

/// Logs the watches that failed and work again; whether there were any.
fn report_recoveries(failing: &mut BTreeMap<String, String>, watch: &ClusterWatch) -> bool {
    if failing.is_empty() {
        return false;
    }
    let mut recovered = false;
    for health in watch.health() {
        if health.failing.is_none() && !health.absent && failing.remove(&health.resource).is_some()
        {
            tracing::info!(resource = %health.resource, "watch {} works again", health.resource);
            recovered = true;
        }
    }
    recovered
}

struct Evaluator<'a> {
    exporter: &'a Exporter,
    explicit: Option<Distro>,
    clock: NowSource,
    /// The finding codes of the last evaluation, to log when they change.
    verdict: Option<Vec<String>>,
    /// The lease findings of the last evaluation, to tell when time alone changed them.
    lease_verdict: Vec<(FindingCode, Severity, String)>,
    evaluated: Option<std::time::Instant>,
}

impl Evaluator<'_> {
    fn distro(&self, state: &ClusterState) -> Distro {
        self.explicit
            .or_else(|| state.detect_distro())
            .unwrap_or(Distro::K3s)
    }

    /// The lease verdict as of now, from memory.
    fn judge_leases(&self, watch: &ClusterWatch) -> Vec<(FindingCode, Severity, String)> {
        let state = watch.lease_state();
        analyse_leases(&state, self.distro(&state), self.exporter.now())
            .findings
            .into_iter()
            .map(|f| (f.code, f.severity, f.object))
            .collect()
    }

    /// Whether time alone has made the last evaluation wrong (or it is simply old).
    fn stale(&self, watch: &ClusterWatch) -> bool {
        match self.evaluated {
            None => true,
            Some(at) if at.elapsed() >= EVALUATE_AT_LEAST_EVERY => true,
            Some(_) => watch.synced() && self.judge_leases(watch) != self.lease_verdict,
        }
    }

    fn evaluate(&mut self, watch: &ClusterWatch) {
        let metrics = &self.exporter.metrics;
        metrics.record_watches(watch.health());
        if !watch.synced() {
            // Half a picture would report healthy locks as missing.
            metrics.mark_incomplete();
            return;
        }
        self.exporter.set_ready(true);
        let started = std::time::Instant::now();
        let state = watch.state();
        let distro = self.distro(&state);
        let now = self.exporter.now();
        self.evaluated = Some(started);
        self.lease_verdict = self.judge_leases(watch);
        let analysis = analyse_check(&state, distro, now);
        let report = CheckReport::new(
            Now {
                time: now,
                source: self.clock,
            },
            analysis,
        );
        let complete = watch.health().all(|h| h.failing.is_none());
        metrics.record_evaluation(&report, complete, started.elapsed(), now);
        let mut json = Vec::new();
        if render::write_structured(&mut json, OutputFormat::Json, &report).is_ok() {
            self.exporter
                .publish_report(String::from_utf8_lossy(&json).into_owned());
        }
        self.log_verdict_change(&report);
    }

    fn log_verdict_change(&mut self, report: &CheckReport) {
        let findings = report.analysis.all_findings();
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
