//! `serve --rancher-clusters`: every cluster Rancher manages, checked in rounds (`--interval`)
//! through Rancher's proxy with one Rancher context's credentials, each series of the metrics
//! labelled with its `cluster`. Rounds, not watches: 200 clusters × 6 watches would hold 1,200
//! streams open through Rancher for verdicts that move in minutes. The management cluster is
//! read once a round for all of them; a round that cannot read it holds the last verdicts.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;

use super::fleet::FleetCommand;
use super::fleet_members::{self, Members};
use super::load::Loaded;
use super::termination::Termination;
use crate::diagnose::check::analyse_check;
use crate::diagnose::finding::FailOn;
use crate::diagnose::fleet::FleetOutcome;
use crate::diagnose::suppression::Suppressions;
use crate::exit::Exit;
use crate::input::live::token_access_review::{Reviewer, review_rights_warning};
use crate::input::rancher::rancher_fleet::{Management, connect_management, members_of};
use crate::monitor::access::{Access, MetricsAuth};
use crate::monitor::{Exporter, endpoints};
use crate::report::{CheckReport, FleetReport};
use crate::settings::ServeOptions;
use crate::settings::{FleetSelection, Settings};

const DEFAULT_INTERVAL: Duration = Duration::from_secs(60);

pub(super) async fn serve_fleet(
    settings: &Settings,
    opts: &ServeOptions,
    fleet: &FleetSelection,
    suppressions: Suppressions,
) -> anyhow::Result<Exit> {
    let mut termination = Termination::catch();
    let listener = endpoints::bind(opts.listen)?;
    let address = listener.local_addr().unwrap_or(opts.listen);
    let exporter = Arc::new(Exporter::for_fleet(env!("CARGO_PKG_VERSION")));
    let access = Arc::new(Access::new(opts.metrics_auth));
    let http = endpoints::spawn(listener, &exporter, &access);
    let interval = opts.interval.unwrap_or(DEFAULT_INTERVAL);
    tracing::info!(
        address = %address,
        "serving /metrics, /healthz, /readyz and /report on http://{address} for every cluster \
         Rancher manages, a round every {} s",
        interval.as_secs()
    );
    let base = fleet_members::rancher_context(settings, fleet);
    let analyse = |loaded: Loaded| {
        let analysis =
            suppressions.apply(analyse_check(&loaded.state, loaded.distro, loaded.now.time));
        CheckReport::new(loaded.now, analysis).failing_on(FailOn::Error)
    };
    let write_member = |_: &mut dyn std::io::Write, _: &CheckReport, _| Ok(());
    let command = FleetCommand {
        snapshots: true,
        fail_on: FailOn::Error,
        analyse: &analyse,
        write_member: &write_member,
    };
    let mut management: Option<Management> = None;
    let mut rounds = tokio::time::interval(interval);
    rounds.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = termination.received() => break,
            _ = rounds.tick() => {}
        }
        let round = one_round(settings, fleet, &base, &mut management, &access, &command);
        tokio::select! {
            () = termination.received() => break,
            published = round => match published {
                Ok((report, took)) => {
                    exporter.publish_fleet(Some(&report), took, jiff::Timestamp::now());
                    log_round(&report, took);
                }
                Err(why) => {
                    // The connection may be what broke: the next round connects afresh.
                    management = None;
                    exporter.publish_fleet(None, Duration::ZERO, jiff::Timestamp::now());
                    tracing::warn!(
                        "cannot read Rancher's management cluster: {why}; the last round's \
                         verdicts are held and k3sdoctor_up is 0"
                    );
                }
            }
        }
    }
    http.abort();
    tracing::info!("stopping: SIGTERM or SIGINT received");
    Ok(Exit::Healthy)
}

/// Reads the management cluster, then every cluster at most `--parallel` at once.
async fn one_round(
    settings: &Settings,
    fleet: &FleetSelection,
    base: &crate::input::connect::ConnectOptions,
    management: &mut Option<Management>,
    access: &Access,
    command: &FleetCommand<'_, CheckReport>,
) -> Result<(FleetReport<CheckReport>, Duration), String> {
    let started = Instant::now();
    let trace = |line: &str| tracing::debug!("{line}");
    let connected = match management {
        Some(connected) => &*connected,
        None => {
            let connected = connect_management(base, fleet.parallel)
                .await
                .map_err(|e| e.message)?;
            // Tokens sent to /metrics and /report are reviewed by the management cluster.
            access.connected(Reviewer::new(
                connected.conn.client.clone(),
                &connected.conn.server,
            ));
            if access.mode() == MetricsAuth::Kubernetes
                && let Some(warning) = review_rights_warning(&connected.conn).await
            {
                tracing::warn!("{warning}");
            }
            &*management.insert(connected)
        }
    };
    let pattern = fleet
        .rancher_clusters
        .as_ref()
        .ok_or("no --rancher-clusters")?;
    let listed = members_of(connected, pattern, true, fleet.parallel, &trace)
        .await
        .map_err(|e| e.message)?;
    let members = Members::Rancher {
        local: connected.conn.server.clone(),
        members: listed,
    };
    let entries: Vec<_> = futures_util::stream::iter(0..members.len())
        .map(|index| fleet_members::read_one(&members, index, settings, fleet, command, &trace))
        .buffer_unordered(fleet.parallel)
        .map(|(entry, _notes)| entry)
        .collect()
        .await;
    Ok((
        FleetReport::new(entries, FailOn::Error, true),
        started.elapsed(),
    ))
}

fn log_round(report: &FleetReport<CheckReport>, took: Duration) {
    let unreachable: Vec<&str> = report
        .entries
        .iter()
        .filter(|e| e.outcome != FleetOutcome::Checked)
        .map(|e| e.context.as_str())
        .collect();
    tracing::info!(
        clusters = report.entries.len(),
        unreachable = unreachable.len(),
        took_ms = took.as_millis() as u64,
        "checked {} clusters in {} ms{}",
        report.entries.len(),
        took.as_millis(),
        if unreachable.is_empty() {
            String::new()
        } else {
            format!("; not read: {}", unreachable.join(", "))
        }
    );
}
