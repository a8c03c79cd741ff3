//! `k3sdoctor leases` for people.

use std::io::Write;

use jiff::SignedDuration;

use super::findings::write_findings;
use super::plural;
use super::style::Style;
use super::table::{lines, plain_table};
use crate::age;
use crate::diagnose::cluster_summary::ClusterSummary;
use crate::diagnose::lock_status::{LockState, LockStatus};
use crate::report::{LeaseReport, NowSource};

pub fn write_table(
    out: &mut dyn Write,
    report: &LeaseReport,
    wide: bool,
    style: Style,
) -> std::io::Result<()> {
    let a = &report.analysis;
    writeln!(out, "{}", cluster_line(&a.cluster))?;
    let verdict = match (&a.verdict_version, &a.verdict_version_from) {
        (Some(v), Some(from)) => format!("; verdict judged on {v} ({from})"),
        _ => String::new(),
    };
    writeln!(
        out,
        "now: {} ({}){verdict}",
        report.now.time.strftime("%Y-%m-%dT%H:%M:%SZ"),
        report.now.source.describe()
    )?;
    writeln!(out)?;

    let mut header = vec![
        "LOCK",
        "HOLDER",
        "NODE",
        "KIND",
        "STATE",
        "RENEWED",
        "DURATION",
        "TRANSITIONS",
        "NODE STATUS",
        "ROLES",
    ];
    if wide {
        header.extend(["ACQUIRED", "VERSION", "MATCHED BY"]);
    }
    let mut table = plain_table(&header);
    for lock in &a.locks {
        table.add_row(lock_row(lock, wide));
    }
    for line in lines(&table) {
        writeln!(out, "{line}")?;
    }

    if wide && !a.other_elections.is_empty() {
        writeln!(out)?;
        let mut table = plain_table(&[
            "OTHER ELECTION",
            "HOLDER",
            "NODE",
            "RENEWED",
            "DURATION",
            "TRANSITIONS",
            "ACQUIRED",
        ]);
        for e in &a.other_elections {
            table.add_row(vec![
                e.name.clone(),
                e.holder.clone(),
                e.node.clone().unwrap_or_else(|| "-".into()),
                ago(e.renewed_seconds_ago),
                secs(e.lease_duration_seconds),
                num(e.transitions),
                time(e.acquire_time),
            ]);
        }
        for line in lines(&table) {
            writeln!(out, "{line}")?;
        }
    }
    let ahead: Vec<&str> = a
        .locks
        .iter()
        .filter(|l| l.renewed_seconds_ago.is_some_and(|s| s < 0))
        .map(|l| l.name.as_str())
        .collect();
    if !ahead.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "note: {} renewed after now ({}): {}",
            ahead.join(" and "),
            report.now.time.strftime("%Y-%m-%dT%H:%M:%SZ"),
            match report.now.source {
                NowSource::Flag =>
                    "--now is earlier than these renewals (before the dump was taken?); \
                                    freshness is judged as of --now"
                        .to_string(),
                source => format!(
                    "the holder's clock runs ahead of the {} (clock skew); the lock counts as fresh",
                    source.describe()
                ),
            }
        )?;
    }
    writeln!(out)?;
    write_findings(out, &a.findings, report.fail_on, style)
}

fn cluster_line(c: &ClusterSummary) -> String {
    if !c.nodes_known {
        return format!(
            "{} cluster: nodes unknown (none in the input)",
            c.distro.product()
        );
    }
    let versions = match c.versions.as_slice() {
        [] => "no nodes".to_string(),
        [only] => format!("{} on all nodes", only.version),
        many => many
            .iter()
            .map(|g| format!("{} ({})", g.version, g.nodes.len()))
            .collect::<Vec<_>>()
            .join(", "),
    };
    let style = c
        .lock_style
        .map(|s| s.describe())
        .unwrap_or("unknown (no server version)");
    format!(
        "{} cluster: {} ({} etcd), {}; {versions}; locks: {style}",
        c.distro.product(),
        plural(c.servers, "server"),
        c.etcd_members,
        plural(c.agents, "agent"),
    )
}

/// The STATE column; shouting marks the states that need attention.
pub fn state_label(state: LockState) -> &'static str {
    match state {
        LockState::Held => "held",
        LockState::Expired => "EXPIRED",
        LockState::Released => "released",
        LockState::Disagreeing => "COPIES DISAGREE",
        LockState::Missing => "MISSING",
        LockState::NotApplicable => "-",
    }
}

fn lock_row(lock: &LockStatus, wide: bool) -> Vec<String> {
    let holder = match (lock.state, lock.holder.as_deref()) {
        (LockState::Released, _) => "(released)".to_string(),
        (_, Some(h)) => h.to_string(),
        (_, None) => "-".to_string(),
    };
    let state = state_label(lock.state);
    let node = lock.node.as_ref();
    let node_name = match (node, &lock.holder) {
        (Some(n), _) => n.name.clone(),
        (None, Some(h)) if !h.is_empty() && lock.state != LockState::NotApplicable => {
            "(no such node)".to_string()
        }
        _ => "-".to_string(),
    };
    let mut row = vec![
        lock.name.clone(),
        holder,
        node_name,
        lock.kind.label().to_string(),
        state.to_string(),
        ago(lock.renewed_seconds_ago),
        secs(lock.lease_duration_seconds),
        num(lock.transitions),
        node.map(|n| n.readiness.label().to_string())
            .unwrap_or_else(|| "-".into()),
        node.map(|n| {
            if n.roles.is_empty() {
                "<none>".to_string()
            } else {
                n.roles.join(",")
            }
        })
        .unwrap_or_else(|| "-".into()),
    ];
    if wide {
        row.extend([
            time(lock.acquire_time),
            node.map(|n| n.version.clone())
                .unwrap_or_else(|| "-".into()),
            node.map(|n| {
                serde_json::to_value(n.matched_by)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            })
            .unwrap_or_else(|| "-".into()),
        ]);
    }
    row
}

fn ago(seconds: Option<i64>) -> String {
    seconds
        .map(|s| age::relative(SignedDuration::from_secs(s)))
        .unwrap_or_else(|| "-".into())
}

fn secs(seconds: Option<i64>) -> String {
    seconds
        .map(|s| format!("{s}s"))
        .unwrap_or_else(|| "-".into())
}

fn num(n: Option<i64>) -> String {
    n.map(|n| n.to_string()).unwrap_or_else(|| "-".into())
}

fn time(t: Option<jiff::Timestamp>) -> String {
    t.map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|| "-".into())
}
