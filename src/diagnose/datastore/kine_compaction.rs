//! `kine-compaction-stalled`: kine (sqlite, MySQL, Postgres) deletes old revisions in batched
//! compactions; when every pass fails (a backlog whose DELETE outruns its 5 s timeout, a
//! revision it cannot parse after an upgrade) the database grows without end. Judged from
//! `kine_compact_total` on the apiserver's `/metrics`: errors and not one success in 15
//! minutes of uptime, by which time at least two passes of the 5-minute interval have run.

use jiff::Timestamp;

use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::distro::Distro;
use crate::model::server_metrics::ServerMetrics;

const LEAST_UPTIME_SECONDS: f64 = 15.0 * 60.0;

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
                .fix(format!(
                    "on that server, `journalctl -u {}` shows kine's \"Compact\" errors (a DELETE that outruns its 5 s timeout \
                     means a backlog: compact it by hand in the SQL database, or restore from a backup on a newer \
                     release)",
                    distro.server_unit()
                )),
            )
        })
        .collect()
}
