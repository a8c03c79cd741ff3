//! `k3sdoctor leases` for people.

use std::io::Write;

use jiff::SignedDuration;

use super::findings::write_findings;
use super::plural;
use super::streams::TableOut;
use super::style::Style;
use super::table::{lines, plain_table};
use super::wrap::write_wrapped;
use crate::age;
use crate::diagnose::cluster_summary::ClusterSummary;
use crate::diagnose::leases::ElectionStatus;
use crate::diagnose::leases::lock_status::{LockState, LockStatus};
use crate::model::datastore::Datastore;
use crate::report::{LeaseReport, NowSource};

/// The summary, the lock table and the findings; off a terminal or under `--no-headers`
/// only the table's rows reach stdout ([`TableOut`]).
pub(crate) fn write_table(
    sink: &mut TableOut<'_>,
    report: &LeaseReport,
    wide: bool,
    style: Style,
) -> std::io::Result<()> {
    let a = &report.analysis;
    let out = sink.prose();
    write_wrapped(out, &cluster_line(&a.cluster), "", "  ", style.width)?;
    let verdict = match (&a.verdict_version, &a.verdict_version_from) {
        (Some(v), Some(from)) => format!("; verdict judged on {v} ({from})"),
        _ => String::new(),
    };
    let now = format!(
        "now: {} ({}){verdict}",
        report.now.time.strftime("%Y-%m-%dT%H:%M:%SZ"),
        report.now.source.describe()
    );
    write_wrapped(out, &now, "", "  ", style.width)?;
    sink.gap()?;
    let out = sink.rows();

    // NODE is a column of its own (not `holder (node x)` in one cell), so every cell is one
    // word that `awk` can pick out; what rarely matters for the verdict waits for -o wide.
    let header = if wide {
        vec![
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
            "ACQUIRED",
            "VERSION",
            "MATCHED BY",
        ]
    } else {
        // STATUS is the holder node's, as `kubectl get nodes` spells it. ROLES waits for
        // -o wide: `control-plane,etcd,master` is one word that would push a row past 80
        // columns, and the findings already name a holder without the etcd role.
        vec!["LOCK", "HOLDER", "NODE", "STATE", "RENEWED", "STATUS"]
    };
    let mut table = plain_table(&header, wide, style);
    for lock in &a.locks {
        table.add_row(lock_row(lock, wide));
    }
    for line in lines(table) {
        writeln!(out, "{line}")?;
    }

    if wide && !a.other_elections.is_empty() {
        writeln!(out)?;
        write_other_elections(out, &a.other_elections, style)?;
    }
    let ahead: Vec<&str> = a
        .locks
        .iter()
        .filter(|l| l.renewed_seconds_ago.is_some_and(|s| s < 0))
        .map(|l| l.name.as_str())
        .collect();
    let split = sink.split();
    let out = sink.prose();
    if !ahead.is_empty() {
        if !split {
            writeln!(out)?;
        }
        write_wrapped(out, &ahead_note(&ahead, report), "", "      ", style.width)?;
    }
    if !split {
        writeln!(out)?;
    }
    write_findings(out, &a.findings, report.fail_on, style)
}

/// The other elections in kube-system (`-o wide`): the controllers k3s runs beside its own.
fn write_other_elections(
    out: &mut dyn Write,
    elections: &[ElectionStatus],
    style: Style,
) -> std::io::Result<()> {
    let mut table = plain_table(
        &[
            "OTHER ELECTION",
            "HOLDER",
            "NODE",
            "RENEWED",
            "DURATION",
            "TRANSITIONS",
            "ACQUIRED",
        ],
        true,
        style,
    );
    for e in elections {
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
    for line in lines(table) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// Why a lock renewed after `now` still counts as fresh, or what `--now` did.
fn ahead_note(ahead: &[&str], report: &LeaseReport) -> String {
    format!(
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
    )
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
        "{} cluster: {}, {}; {versions}; locks: {style}",
        c.distro.product(),
        servers_and_datastore(c),
        plural(c.agents, "agent"),
    )
}

/// "3 servers (3 etcd members)", or the datastore when it is not embedded etcd: what the
/// servers keep their state in decides which locks and snapshots to expect.
pub(crate) fn servers_and_datastore(c: &ClusterSummary) -> String {
    let servers = plural(c.servers, "server");
    match &c.datastore {
        // "etcd members", as `check` says it: one word for one thing.
        Datastore::EmbeddedEtcd => format!("{servers} ({} etcd members)", c.etcd_members),
        Datastore::Unknown(_) if !c.nodes_known => format!("{servers} (0 etcd members)"),
        other => format!("{servers} ({})", other.describe()),
    }
}

/// The STATE column; shouting marks the states that need attention.
pub(crate) fn state_label(state: LockState) -> &'static str {
    match state {
        LockState::Held => "held",
        LockState::Expired => "EXPIRED",
        LockState::Released => "released",
        // One word, as every cell of the table is: `awk '{print $5}'` stays the RENEWED column.
        LockState::Disagreeing => "COPIES-DISAGREE",
        LockState::Missing => "MISSING",
        LockState::NotApplicable => "-",
        LockState::Unknown => "unknown",
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
            // kubectl's word for an empty cell; one word, unlike "(no such node)".
            "<none>".to_string()
        }
        _ => "-".to_string(),
    };
    let status = node
        .map(|n| n.readiness.label().to_string())
        .unwrap_or_else(|| "-".into());
    let roles = || {
        node.map(|n| {
            if n.roles.is_empty() {
                "<none>".to_string()
            } else {
                n.roles.join(",")
            }
        })
        .unwrap_or_else(|| "-".into())
    };
    if !wide {
        return vec![
            lock.name.clone(),
            holder,
            node_name,
            state.to_string(),
            ago(lock.renewed_seconds_ago),
            status,
        ];
    }
    let mut row = vec![
        lock.name.clone(),
        holder,
        node_name,
        lock.kind.label().to_string(),
        state.to_string(),
        ago(lock.renewed_seconds_ago),
        secs(lock.lease_duration_seconds),
        num(lock.transitions),
        status,
        roles(),
    ];
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
    row
}

fn ago(seconds: Option<i64>) -> String {
    seconds
        .map(|s| age::table_age(SignedDuration::from_secs(s)))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A pipe splits rows at whitespace: every STATE is one word.
    #[test]
    fn every_state_is_one_word() {
        for state in [
            LockState::Held,
            LockState::Expired,
            LockState::Released,
            LockState::Disagreeing,
            LockState::Missing,
            LockState::NotApplicable,
            LockState::Unknown,
        ] {
            let label = state_label(state);
            assert_eq!(label.split_whitespace().count(), 1, "{label}");
        }
    }
}
