//! `k3sdoctor serve`: watches what `check` reads, runs `check`'s analysers when it changes
//! (debounced) and publishes the verdicts for Prometheus. Watch failures are logged, counted
//! and retried by the watcher; a probe of the API server every few seconds tells a silent
//! connection from a quiet cluster and keeps its clock current (`monitor::contact`). Only a
//! bad kubeconfig or an address that cannot be bound ends the process early.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

mod control_plane_poll;
mod evaluator;
mod failure_episodes;

use control_plane_poll::ControlPlanePoll;
use evaluator::Evaluator;
use failure_episodes::{FailureEpisode, report_failure, report_recoveries};

use super::Ui;
use super::load::runtime;
use super::serve_heal::{HEAL_STOP_LIMIT, HealInput, start_healer};
use super::termination::Termination;
use crate::diagnose::suppression::Suppressions;
use crate::distro::Distro;
use crate::exit::{Exit, Failure};
use crate::heal::heal_policy::HealMode;
use crate::input::ReadError;
use crate::input::connect::{ConnectOptions, Connection, Prepared, prepare};
use crate::input::live;
use crate::input::live::contact_probe;
use crate::input::live::token_access_review::{self, Reviewer};
use crate::input::watch::{ClusterWatch, WatchNews, WatchScope};
use crate::monitor::access::{Access, MetricsAuth};
use crate::monitor::contact::{ContactChange, ProbeOutcome};
use crate::monitor::{Exporter, endpoints, log};
use crate::settings::ServeOptions;
use crate::settings::Settings;

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

/// How often the API server is asked whether it answers (and what time it is there), and how
/// long an answer may take: a blackholed connection is noticed within
/// `monitor::contact::CONTACT_LOST_AFTER` plus one probe.
const PROBE_EVERY: Duration = Duration::from_secs(5);
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

pub(crate) fn run(settings: &Settings, opts: &ServeOptions, _ui: &mut Ui) -> anyhow::Result<Exit> {
    // A bad config file is refused before anything is served, not found at the first evaluation.
    let suppressions = super::suppressions::suppressions(&opts.suppress)?;
    log::init(
        opts.log_format,
        super::verbosity::request_trace_level(settings.output.verbose),
    );
    if let Some(fleet) = &settings.fleet {
        return runtime()?.block_on(super::serve_fleet::serve_fleet(
            settings,
            opts,
            fleet,
            suppressions,
        ));
    }
    runtime()?.block_on(serve(settings, opts, suppressions))
}

async fn serve(
    settings: &Settings,
    opts: &ServeOptions,
    suppressions: Suppressions,
) -> anyhow::Result<Exit> {
    let mut termination = Termination::catch();
    let serving = start_serving(settings, opts).await?;
    let Some(conn) = first_contact(
        serving.prepared,
        &serving.access,
        &serving.exporter,
        &mut termination,
    )
    .await
    else {
        return Ok(stopped(serving.http));
    };
    let conn = match conn {
        Ok(conn) => conn,
        Err(e) => {
            serving.http.abort();
            return Err(Failure::Read(e).into());
        }
    };
    let exporter = serving.exporter;
    let explicit = settings.judging.distro;
    let scope = WatchScope {
        distros: explicit.map_or(Distro::ALL.to_vec(), |d| vec![d]),
        snapshots: true,
    };
    let mut evaluator = Evaluator::new(&exporter, explicit, suppressions);
    let (heal_inputs, heal_task) = start_healer(opts, settings.judging, &conn, &exporter);
    watch_until_stopped(
        &mut termination,
        &conn,
        &scope,
        &mut evaluator,
        heal_inputs.as_ref(),
    )
    .await;
    drop(heal_inputs);
    if let Some(task) = heal_task {
        // A move under way finishes its write (and says what it wrote) before serve ends.
        if tokio::time::timeout(HEAL_STOP_LIMIT, task).await.is_err() {
            tracing::warn!(
                "stopping: the heal under way did not finish within {} s",
                HEAL_STOP_LIMIT.as_secs()
            );
        }
    }
    Ok(stopped(serving.http))
}

/// The endpoints, answering before the API server is reached.
struct Serving {
    prepared: Prepared,
    exporter: Arc<Exporter>,
    access: Arc<Access>,
    http: tokio::task::JoinHandle<()>,
}

/// Binds `--listen`, reads the kubeconfig and starts answering: the liveness probe answers
/// while the API server is still being asked, and while a credential plugin runs.
async fn start_serving(settings: &Settings, opts: &ServeOptions) -> anyhow::Result<Serving> {
    let listener = endpoints::bind(opts.listen)?;
    let address = listener.local_addr().unwrap_or(opts.listen);
    let options = settings.live("serve")?.clone();
    let request_timeout = options.request_timeout;
    let mut prepared = prepare(&ConnectOptions {
        request_timeout: request_timeout.map(|t| t.max(SHORTEST_READ_TIMEOUT)),
        ..options
    })
    .await?;
    // The credential plugin answers within --request-timeout, not the watches' longer limit.
    prepared.plugin_timeout = request_timeout;
    if let Some(notice) = &prepared.notice {
        tracing::info!("{notice}");
    }
    let mut exporter = Exporter::new(env!("CARGO_PKG_VERSION"));
    if opts.heal != HealMode::Off {
        exporter.metrics.enable_heal();
    }
    let exporter = Arc::new(exporter);
    let access = Arc::new(Access::new(opts.metrics_auth));
    let http = endpoints::spawn(listener, &exporter, &access);
    tracing::info!(
        address = %address,
        apiserver = %prepared.server,
        metrics_auth = access.mode().label(),
        "serving /metrics, /healthz, /readyz and /report on http://{address} ({})",
        match access.mode() {
            MetricsAuth::Kubernetes =>
                "/metrics and /report answer bearer tokens allowed to get them",
            MetricsAuth::None => "/metrics and /report answer anyone: --metrics-auth=none",
        }
    );
    Ok(Serving {
        prepared,
        exporter,
        access,
        http,
    })
}

/// Runs the credential plugin and asks the API server its version once; `None` when a
/// SIGTERM comes first: a plugin waiting for a login, or an API server that does not answer,
/// must not hold up a pod that is stopping (dropping the plugin kills it).
async fn first_contact(
    prepared: Prepared,
    access: &Access,
    exporter: &Exporter,
    termination: &mut Termination,
) -> Option<Result<Arc<Connection>, ReadError>> {
    let conn = tokio::select! {
        () = termination.received() => return None,
        conn = prepared.authenticate() => conn,
    };
    let conn = match conn {
        Ok(conn) => {
            access.connected(Reviewer::new(conn.client.clone(), &conn.server));
            if access.mode() == MetricsAuth::Kubernetes
                && let Some(warning) = token_access_review::review_rights_warning(&conn).await
            {
                tracing::warn!("{warning}");
            }
            Arc::new(conn)
        }
        Err(e) => return Some(Err(e)),
    };
    let sent = Instant::now().into_std();
    let first = tokio::select! {
        () = termination.received() => return None,
        answer = live::probe_version(&conn.client, &conn.server, PROBE_TIMEOUT) => answer,
    };
    exporter.observe_probe(
        &first.map_or_else(ProbeOutcome::Failed, ProbeOutcome::Answered),
        sent,
        std::time::Instant::now(),
    );
    Some(Ok(conn))
}

/// Watches, probes and evaluates until SIGTERM or SIGINT.
async fn watch_until_stopped(
    termination: &mut Termination,
    conn: &Arc<Connection>,
    scope: &WatchScope,
    evaluator: &mut Evaluator<'_>,
    heal_inputs: Option<&tokio::sync::watch::Sender<Option<HealInput>>>,
) {
    let exporter = evaluator.exporter;
    let mut probes = contact_probe::spawn(&conn.client, &conn.server, PROBE_EVERY, PROBE_TIMEOUT);
    let mut watch = ClusterWatch::start(conn, scope);
    let mut polls = ControlPlanePoll::start(conn);
    let mut failing: BTreeMap<String, FailureEpisode> = BTreeMap::new();
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
            Some(probe) = probes.recv() => {
                if contact_regained(exporter, conn, probe) {
                    // The watches' connections may still be stuck in the partition (no
                    // error comes until the read timeout): new watches list anew.
                    watch = ClusterWatch::start(conn, scope);
                }
            }
            Ok(()) = polls.latest.changed() => {
                due.get_or_insert_with(|| Instant::now() + DEBOUNCE);
            }
            () = tokio::time::sleep_until(deadline), if due.is_some() => {
                due = None;
                let polled = polls.latest.borrow_and_update().clone();
                if let Some(state) = evaluator.evaluate(&watch, polled.as_ref()) {
                    polls.saw_nodes(&state);
                }
                evaluator.send_to_healer(&watch, heal_inputs);
            }
            _ = rejudge.tick() => {
                if !exporter.contact_lost() && evaluator.stale(&watch) {
                    due.get_or_insert_with(Instant::now);
                } else {
                    // The heal counts evaluations of a lasting split: one every tick.
                    evaluator.send_to_healer(&watch, heal_inputs);
                }
            }
        }
    }
}

/// Records a probe's answer, logs contact lost and regained; true when contact came back.
fn contact_regained(exporter: &Exporter, conn: &Connection, probe: contact_probe::Probe) -> bool {
    let outcome = probe
        .outcome
        .map_or_else(ProbeOutcome::Failed, ProbeOutcome::Answered);
    match exporter.observe_probe(&outcome, probe.sent, probe.received) {
        ContactChange::None => false,
        ContactChange::Lost { why, silent_for } => {
            tracing::warn!(
                apiserver = %conn.server,
                "lost contact with the API server {}: {why} (no answer for {} s); \
                 k3sdoctor_up is 0 and the findings are the last verdict, held and marked \
                 stale, until it answers again",
                conn.server,
                silent_for.as_secs()
            );
            false
        }
        ContactChange::Regained { after } => {
            tracing::info!(
                apiserver = %conn.server,
                "the API server {} answers again after {} s; listing everything afresh",
                conn.server,
                after.as_secs()
            );
            true
        }
    }
}

fn stopped(http: tokio::task::JoinHandle<()>) -> Exit {
    http.abort();
    tracing::info!("stopping: SIGTERM or SIGINT received");
    Exit::Healthy
}
