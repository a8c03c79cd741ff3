//! `kine-compaction-stalled`: kine (sqlite, MySQL, Postgres) deletes old revisions in batched
//! compactions; when every pass fails (a backlog whose DELETE outruns its 5 s timeout, a
//! revision it cannot parse after an upgrade) the database grows without end. Judged from
//! `kine_compact_total` on the apiserver's `/metrics`: errors and not one success in 15
//! minutes of uptime, by which time at least two passes of the 5-minute interval have run.

use jiff::{SignedDuration, Timestamp};

use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::distro::Distro;
use crate::model::kine_probe::{BEHIND_ENOUGH, KineProbe, ProbeAnswer};
use crate::model::server_metrics::ServerMetrics;

const LEAST_UPTIME_SECONDS: f64 = 15.0 * 60.0;
/// Three 5-minute passes: the pass that should have compacted a revision runs within two.
const PROBED_AT_LEAST: SignedDuration = SignedDuration::from_mins(15);

pub(super) fn kine_findings(
    reads: &[ServerMetrics],
    distro: Distro,
    now: Timestamp,
) -> Vec<Finding> {
    reads
        .iter()
        .filter_map(|read| {
            let scrape = read.apiserver()?;
            let counts = scrape.kine_compactions?;
            let started = scrape.process_start?;
            let uptime = now.as_second() as f64 - started;
            if counts.success > 0.0 || counts.error <= 0.0 || uptime < LEAST_UPTIME_SECONDS {
                return None;
            }
            let up = crate::age::short(jiff::SignedDuration::from_secs(uptime as i64));
            Some(
                Finding::new(
                    Severity::Warning,
                    FindingCode::KineCompactionStalled,
                    read.name(),
                    format!(
                        "kine on {} has failed to compact {:.0} time(s) and not once succeeded in {up} since its \
                         {} started: old revisions are never deleted and the database grows",
                        read.name(),
                        counts.error,
                        distro.prog()
                    ),
                )
                .fix(look_at_compactions(distro)),
            )
        })
        .collect()
}

fn look_at_compactions(distro: Distro) -> String {
    format!(
        "on each server, `journalctl -u {}` shows kine's \"Compact\" errors (a DELETE that outruns its 5 s timeout \
         means a backlog: compact it by hand in the SQL database, or restore from a backup on a newer release)",
        distro.server_unit()
    )
}

/// The live probe's verdict: a revision written long ago and far behind is still served.
/// `Err`: the probe failed, and why (a note, not a finding).
pub(super) fn probe_finding(
    probe: &KineProbe,
    distro: Distro,
    now: Timestamp,
) -> Result<Option<Finding>, String> {
    let written = &probe.written;
    let behind = probe.current.saturating_sub(written.revision);
    let age = now.duration_since(written.at);
    match &probe.answer {
        ProbeAnswer::Failed(why) => return Err(format!("kine compaction probe: {why}")),
        ProbeAnswer::Compacted => return Ok(None),
        ProbeAnswer::Retained if age < PROBED_AT_LEAST || behind < BEHIND_ENOUGH => {
            return Ok(None);
        }
        ProbeAnswer::Retained => {}
    }
    Ok(Some(
        Finding::new(
            Severity::Warning,
            FindingCode::KineCompactionStalled,
            "the datastore",
            format!(
                "the datastore still serves revision {} ({behind} revisions behind the current {}), written {} ago by \
                 {}: kine compacts every 5 minutes and keeps only the newest 1000 revisions, so no compaction has \
                 run since and the database grows (a LIST at that revision answered instead of 410 Expired)",
                written.revision,
                probe.current,
                crate::age::short(age),
                written.object
            ),
        )
        .fix(look_at_compactions(distro)),
    ))
}
