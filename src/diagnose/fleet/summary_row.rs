//! One cluster of a fleet as a row of the summary table, in words.

use std::collections::BTreeSet;

use super::{FleetEntry, FleetMember, FleetOutcome};
use crate::diagnose::finding::{FindingCode, Severity};
use crate::diagnose::leases::lock_status::{LockState, LockStatus};

/// One row of the human summary table, already in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FleetRow {
    pub context: String,
    pub server: String,
    /// The oldest server version, `+N` when more versions run (an upgrade under way).
    pub version: String,
    /// The one holder of every lock, `split`, `released`, `missing` or `-`.
    pub locks: String,
    /// The severity of the split, to colour `split` with.
    pub split_severity: Option<Severity>,
    /// Snapshot entries missing/stale/orphaned in the ConfigMap (`2/0/1`); `-` when not read.
    pub drift: String,
    /// Etcd members Ready/total; `-` without managed etcd.
    pub etcd: String,
    /// The worst severity, `ok`, or why the cluster could not be read.
    pub status: String,
    pub severity: Option<Severity>,
}

pub(crate) fn summary_row<R: FleetMember>(
    entry: &FleetEntry<R>,
    ignore_unreachable: bool,
) -> FleetRow {
    let severity = entry.severity(ignore_unreachable);
    let Some(report) = &entry.report else {
        return FleetRow {
            context: entry.context.clone(),
            server: entry.server.clone(),
            version: "-".into(),
            locks: "-".into(),
            split_severity: None,
            drift: "-".into(),
            etcd: "-".into(),
            status: unreadable_reason(entry),
            severity,
        };
    };
    let cluster = report.cluster();
    let servers = cluster.server_versions();
    let version = match servers.as_slice() {
        [] => cluster.distro.prog().to_string(),
        [only] => only.version.clone(),
        [oldest, rest @ ..] => format!("{} +{}", oldest.version, rest.len()),
    };
    let split_severity = report
        .findings()
        .iter()
        .filter(|f| f.code == FindingCode::LeaseSplit)
        .map(|f| f.severity)
        .max();
    FleetRow {
        context: entry.context.clone(),
        server: entry.server.clone(),
        version,
        locks: lock_holders(report.locks()),
        split_severity,
        drift: report
            .snapshot_totals()
            .map(|t| format!("{}/{}/{}", t.missing, t.stale, t.orphaned))
            .unwrap_or_else(|| "-".into()),
        etcd: if cluster.nodes_known && cluster.etcd_members > 0 {
            format!("{}/{}", cluster.etcd_members_ready, cluster.etcd_members)
        } else {
            "-".into()
        },
        status: severity.map_or("ok", Severity::as_str).into(),
        severity,
    }
}

fn lock_holders(locks: &[LockStatus]) -> String {
    let applicable: Vec<&LockStatus> = locks
        .iter()
        .filter(|l| !matches!(l.state, LockState::NotApplicable | LockState::Unknown))
        .collect();
    let holders: BTreeSet<&str> = applicable
        .iter()
        .filter_map(|l| l.settled_holder())
        .collect();
    let any = |state: LockState| applicable.iter().any(|l| l.state == state);
    match holders.len() {
        0 if any(LockState::Released) => "released".into(),
        0 if any(LockState::Missing) => "missing".into(),
        0 => "-".into(),
        1 => holders.into_iter().next().unwrap_or_default().to_string(),
        _ => "split".into(),
    }
}

/// A word or two for the STATUS column; the entry's error says the rest.
fn unreadable_reason<R>(entry: &FleetEntry<R>) -> String {
    match entry.outcome {
        FleetOutcome::Unreachable => "unreachable".into(),
        FleetOutcome::Tls => "TLS".into(),
        FleetOutcome::Unauthorized => "401".into(),
        // The verb and resource are the missing permission; the namespace (always
        // kube-system or none) would push the row past 80 columns.
        FleetOutcome::Forbidden => match &entry.refused_request {
            Some(request) => format!("403 {}", request.split(" in ").next().unwrap_or(request)),
            None => "403".into(),
        },
        FleetOutcome::Error | FleetOutcome::Checked => "error".into(),
    }
}
