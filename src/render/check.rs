//! `k3sdoctor check` for people: what the cluster is, then what is wrong, causes first.

use std::io::Write;

use super::findings::{same_list_as, short_object, summary_line, write_body};
use super::plural;
use super::style::Style;
use super::wrap::{columns, write_wrapped};
use crate::byte_size::human;
use crate::diagnose::check::CheckFinding;
use crate::diagnose::datastore::DatastoreSize;
use crate::diagnose::finding::Finding;
use crate::diagnose::leases::lock_status::{LockState, LockStatus};
use crate::report::CheckReport;

pub(crate) fn write_check(
    out: &mut dyn Write,
    report: &CheckReport,
    style: Style,
) -> std::io::Result<()> {
    let a = &report.analysis;
    let c = &a.cluster;
    let versions = c
        .versions
        .iter()
        .map(|g| format!("{} ({})", g.version, g.nodes.len()))
        .collect::<Vec<_>>()
        .join(", ");
    let mut header = Vec::new();
    header.push(format!(
        "{} cluster: {}, {}; versions: {}",
        c.distro.product(),
        super::leases::servers_and_datastore(c),
        plural(c.agents, "agent"),
        if versions.is_empty() {
            "unknown".to_string()
        } else {
            versions
        }
    ));
    let locks = locks_line(&a.locks);
    let style_text = c.lock_style.map(|s| s.describe()).unwrap_or("unknown");
    header.push(format!("locks: {locks}; lock objects: {style_text}"));
    if let Some(s) = &a.snapshots
        && let Some(short) = s.without_entry_at_least
    {
        // A pasted table's count: no entry is known present or missing by name.
        header.push(format!(
            "snapshots: {} ETCDSnapshotFiles; ConfigMap {} entries (a count only: keys not shown): at least \
             {short} without an entry",
            s.snapshot_files, s.configmap_entries
        ));
    } else if let Some(s) = &a.snapshots {
        header.push(format!(
            "snapshots: {} ETCDSnapshotFiles; ConfigMap {} entries, {} bytes: {} present, {} missing, {} stale, {} orphaned, {} explained",
            s.snapshot_files,
            s.configmap_entries,
            s.configmap_bytes,
            s.present,
            s.missing,
            s.stale,
            s.orphaned,
            s.explained
        ));
        if s.pending > 0 {
            // Said only when there are some, so healthy output stays as it was.
            header.push(format!(
                "  {} pending (created less than a minute ago; k3s writes their entries shortly)",
                s.pending
            ));
        }
    }
    if !a.datastore.is_empty() {
        header.push(datastore_line(&a.datastore));
    }
    if let Some(r) = a.rancher.as_ref().filter(|r| r.checked) {
        header.push(rancher_line(r));
    }
    for v in &a.version_advice {
        header.push(format!(
            "version {}: {} — {}",
            v.line,
            v.running.join(", "),
            v.advice
        ));
    }
    for run in a.checks.iter().filter(|r| !r.ran) {
        header.push(format!("not checked: {} ({})", run.name, run.note));
    }
    header.push(format!(
        "now: {} ({})",
        report.now.time.strftime("%Y-%m-%dT%H:%M:%SZ"),
        report.now.source.describe()
    ));
    // Header lines wrap like findings do, continuation lines indented under their label.
    for line in &header {
        write_wrapped(out, line, "", "  ", style.width)?;
    }
    writeln!(out)?;
    write_linked_findings(out, &a.findings, style)?;
    writeln!(out, "{}", summary_line(&a.all_findings(), report.fail_on))
}

/// Each server's datastore size, against its quota where it has one.
fn datastore_line(sizes: &[DatastoreSize]) -> String {
    let each: Vec<String> = sizes
        .iter()
        .map(|s| match s.quota_bytes {
            Some(quota) => format!(
                "{} {} of {} ({:.0} %)",
                s.server,
                human(s.bytes),
                human(quota),
                s.bytes / quota * 100.0
            ),
            None => format!("{} {}", s.server, human(s.bytes)),
        })
        .collect();
    format!("datastore size: {}", each.join(", "))
}

/// Each lock's state, in one line: `k3s held by server-1, k3s-etcd missing`.
fn locks_line(locks: &[LockStatus]) -> String {
    locks
        .iter()
        .map(|l| match (l.state, l.holder.as_deref()) {
            (LockState::Missing, _) => format!("{} missing", l.name),
            (LockState::NotApplicable, _) => format!("{} not used", l.name),
            (LockState::Unknown, _) => format!("{} not judged", l.name),
            (LockState::Released, _) => format!("{} released", l.name),
            (LockState::Held, Some(h)) => format!("{} held by {h}", l.name),
            (state, Some(h)) => format!(
                "{} held by {h} ({})",
                l.name,
                format!("{state:?}").to_lowercase()
            ),
            (_, None) => format!("{} -", l.name),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What Rancher's side was compared: its version, where, which cluster, and the counts.
fn rancher_line(r: &crate::diagnose::rancher::RancherSummary) -> String {
    let cluster = match (&r.provisioning_cluster, &r.cluster_id) {
        (Some(c), Some(id)) => format!("{c} ({id})"),
        (Some(c), None) => c.clone(),
        _ => "?".to_string(),
    };
    let mut line = format!(
        "rancher: {} at {}; cluster {cluster}: {}, {} downstream snapshots recorded",
        r.version
            .as_deref()
            .map_or("version unknown".to_string(), |v| format!("Rancher {v}")),
        r.source.as_deref().unwrap_or("?"),
        plural(r.records.unwrap_or(0), "record"),
        r.recorded.unwrap_or(0)
    );
    if let Some(pending) = r.pending.filter(|p| *p > 0) {
        line.push_str(&format!(
            ", {pending} not recorded yet (within the grace period)"
        ));
    }
    if let Some(note) = &r.note {
        line.push_str(&format!(" ({note})"));
    }
    line
}

/// Findings causes first, each cause's consequences drawn under it; a blank line after each.
pub(crate) fn write_linked_findings(
    out: &mut dyn Write,
    findings: &[CheckFinding],
    style: Style,
) -> std::io::Result<()> {
    // Every finding printed so far, so that a list of objects is spelled out once.
    let mut shown: Vec<&Finding> = Vec::new();
    for f in findings {
        write_one(out, &f.finding, "", style, &shown)?;
        shown.push(&f.finding);
        for (i, child) in f.children.iter().enumerate() {
            let branch = if i + 1 == f.children.len() {
                "  └─ "
            } else {
                "  ├─ "
            };
            write_one(out, child, branch, style, &shown)?;
            shown.push(child);
        }
        writeln!(out)?;
    }
    Ok(())
}

/// A finding; a child is drawn under its cause with a branch, its text hanging under its
/// code.
fn write_one(
    out: &mut dyn Write,
    f: &Finding,
    branch: &str,
    style: Style,
    shown: &[&Finding],
) -> std::io::Result<()> {
    if f.ignored {
        // Asked to be ignored: one line, so it is seen to be matched but not read as a verdict.
        return writeln!(
            out,
            "{branch}IGNORED {}  {} ({})",
            f.code.as_str(),
            short_object(&f.object),
            f.severity.as_str()
        );
    }
    writeln!(
        out,
        "{branch}{} {}  {}",
        style.severity(f.severity),
        style.bold(f.code.as_str()),
        short_object(&f.object)
    )?;
    let same_as = same_list_as(f, shown.iter().copied());
    write_body(out, f, &" ".repeat(columns(branch) + 8), style, same_as)
}
