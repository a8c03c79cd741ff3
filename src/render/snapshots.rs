//! `k3sdoctor snapshots list|diff|backfill` for people.

use super::control_chars::escape_controls;
use crate::model::go_json::GoEscaping;
use std::io::Write;

use super::findings::write_findings;
use super::streams::TableOut;
use super::style::Style;
use super::table::{lines, plain_table};
use super::wrap::{self, write_wrapped};
use crate::age;
use crate::diagnose::snapshots::{EntryState, SnapshotAnalysis};
use crate::report::SnapshotReport;
use crate::snapshots::backfill_plan::BackfillPlan;

/// 8417312 → `8.0 MiB`, as binary units are what snapshot files are sized in.
pub(crate) fn human_size(bytes: i64) -> String {
    crate::byte_size::human(bytes as f64)
}

fn header(sink: &mut TableOut<'_>, report: &SnapshotReport, style: Style) -> std::io::Result<()> {
    let out = sink.prose();
    let a = &report.analysis;
    let cm = if let Some(count) = &a.entry_count {
        format!(
            "{} entries (a count from {}: keys, values and sizes not shown)",
            count.entries, count.from
        )
    } else if a.configmap_present {
        format!(
            "{} entries, {} of 1048576 bytes",
            a.configmap_entries, a.configmap_bytes
        )
    } else {
        "absent".to_string()
    };
    let rule = match a.entries_need_metadata {
        Some(true) => "only snapshots with metadata get an entry",
        Some(false) => "every snapshot gets an entry",
        None => "whether snapshots without metadata get an entry is not known for this version",
    };
    let lines = [
        format!(
            "ConfigMap kube-system/{}: {cm}; {} ETCDSnapshotFiles",
            a.configmap,
            a.snapshots.len()
        ),
        format!(
            "writer: {} ({rule}); now: {} ({})",
            a.writer_version.as_deref().unwrap_or("version unknown"),
            report.now.time.strftime("%Y-%m-%dT%H:%M:%SZ"),
            report.now.source.describe()
        ),
    ];
    for line in lines {
        write_wrapped(out, &line, "", "  ", style.width)?;
    }
    sink.gap()
}

/// The summary, one row per snapshot and the findings; off a terminal or under
/// `--no-headers` only the rows reach stdout ([`TableOut`]).
pub(crate) fn write_list(
    sink: &mut TableOut<'_>,
    report: &SnapshotReport,
    wide: bool,
    style: Style,
) -> std::io::Result<()> {
    header(sink, report, style)?;
    // NODE by default, as `k3s etcd-snapshot ls` users expect: the file
    // name spells the node only for local snapshots. The rest waits for -o wide. STATE is
    // the file's own (ready, FAILED, terminating, pending), CONFIGMAP its entry's in the
    // snapshot ConfigMap.
    let head = if wide {
        vec![
            "FILE",
            "LOCATION",
            "NODE",
            "STORAGE",
            "CREATED",
            "SIZE",
            "STATE",
            "TOKEN HASH",
            "CONFIGMAP",
            "NAME",
            "FINALIZER",
            "KEY",
        ]
    } else {
        vec!["FILE", "NODE", "STATE", "AGE", "SIZE", "CONFIGMAP"]
    };
    let mut table = plain_table(&head, wide, style);
    for r in &report.analysis.snapshots {
        // One word (`20.6MiB`, as kubectl writes `20Mi`), so a narrow table never splits it.
        let size = r
            .file()
            .size_bytes()
            .map(|b| human_size(b).replace(' ', ""))
            .unwrap_or_else(|| "?".into());
        let state = r.state.label().to_string();
        let file = if r.snapshot_name().is_empty() {
            r.name().to_string()
        } else {
            r.snapshot_name().to_string()
        };
        if !wide {
            let age = r
                .created()
                .map(|t| age::table_age(report.now.time.duration_since(t)))
                .unwrap_or_else(|| "-".into());
            table.add_row(vec![
                file,
                r.node().to_string(),
                r.file_state().label().to_string(),
                age,
                size,
                state,
            ]);
            continue;
        }
        table.add_row(vec![
            file,
            if r.location().is_empty() {
                "-".into()
            } else {
                r.location().to_string()
            },
            r.node().to_string(),
            r.storage().to_string(),
            r.created()
                .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
                .unwrap_or_else(|| "-".into()),
            size,
            r.file_state().label().to_string(),
            r.token_hash().unwrap_or("-").to_string(),
            state,
            r.name().to_string(),
            if r.finalizer() { "yes" } else { "no" }.to_string(),
            r.key(),
        ]);
    }
    if report.analysis.snapshots.is_empty() {
        // Prose, as kubectl's "No resources found" is: never a row.
        writeln!(sink.prose(), "No ETCDSnapshotFiles.")?;
    } else {
        for line in lines(table) {
            writeln!(sink.rows(), "{line}")?;
        }
    }
    sink.gap()?;
    write_findings(
        sink.prose(),
        &report.analysis.findings,
        report.fail_on,
        style,
    )
}

/// The summary, one line per difference (the rows) and the findings; off a terminal or under
/// `--no-headers` only the difference lines reach stdout ([`TableOut`]).
pub(crate) fn write_diff(
    sink: &mut TableOut<'_>,
    report: &SnapshotReport,
    style: Style,
) -> std::io::Result<()> {
    header(sink, report, style)?;
    let a = &report.analysis;
    // A difference is a row: one line off a terminal, so `grep` and `awk` see it whole.
    let row_width = if style.terminal {
        style.width
    } else {
        usize::MAX
    };
    let out = sink.rows();
    let mut any = false;
    for r in &a.snapshots {
        let what = match r.state {
            EntryState::Missing => "missing ",
            EntryState::Stale => "stale   ",
            EntryState::PrunedForSize => "pruned  ",
            EntryState::Pending => "pending ",
            _ => continue,
        };
        any = true;
        // Pasted `etcd-snapshot ls` output does not say which node holds a local snapshot.
        let node = if r.node().is_empty() {
            String::new()
        } else {
            format!(", node {}", r.node())
        };
        let line = if r.state == EntryState::Pending {
            // Not a difference yet: k3s's controller writes it within its normal delay.
            format!(
                "{}  (ETCDSnapshotFile {}{node}; created less than a minute ago: k3s writes it shortly, \
                 not a difference)",
                r.key(),
                r.name(),
            )
        } else {
            format!("{}  (ETCDSnapshotFile {}{node})", r.key(), r.name())
        };
        write_wrapped(out, &line, &format!("{what} "), "         ", row_width)?;
        for d in r.differences() {
            let line = format!(
                "{}: expected {:?}, found {:?}",
                d.field, d.expected, d.found
            );
            write_wrapped(out, &line, "           ", "             ", style.width)?;
        }
    }
    if !a.orphaned.is_empty() {
        any = true;
        write_orphans(out, a, row_width, style)?;
    }
    // A count shows no keys, so no row: the shortfall is said as a count, in prose.
    if let Some(count) = a
        .entry_count
        .as_ref()
        .filter(|c| c.without_entry_at_least > 0)
    {
        any = true;
        writeln!(
            sink.prose(),
            "at least {} of {} ETCDSnapshotFiles that should have an entry have none ({} holds {}; which ones \
             a count cannot show)",
            count.without_entry_at_least,
            count.should_have_entry,
            a.configmap,
            count.entries
        )?;
    } else if a.entry_count.is_some() {
        any = true;
        writeln!(
            sink.prose(),
            "No difference a count can show ({} holds {} entries; which keys it holds is not shown).",
            a.configmap,
            a.configmap_entries
        )?;
    }
    if !any {
        writeln!(sink.prose(), "No differences.")?;
    }
    if !sink.split() {
        writeln!(sink.rows())?;
    }
    write_findings(sink.prose(), &a.findings, report.fail_on, style)
}

/// One line per orphaned entry; consecutive orphans usually share their reason, said once
/// for the run.
fn write_orphans(
    out: &mut dyn Write,
    a: &SnapshotAnalysis,
    row_width: usize,
    style: Style,
) -> std::io::Result<()> {
    let mut last_why = None;
    for o in &a.orphaned {
        let cr = match (&o.cr_without_entry, o.cr_deleting) {
            (Some(cr), _) => format!("; CR {cr} gets no entry on this version"),
            (None, true) => "; its CR is being deleted".to_string(),
            (None, false) => String::new(),
        };
        // While the controller is idle (a split), nothing removes it yet.
        let fate = match (o.reconcile.removes, &a.controller_not_writing) {
            (true, None) => "k3s's reconcile removes it",
            (true, Some(_)) => "k3s's reconcile removes it once its controller runs again",
            (false, _) => "k3s keeps it",
        };
        let line = format!("{}  ({fate}{cr})", o.key);
        write_wrapped(out, &line, "orphaned ", "         ", row_width)?;
        // Consecutive orphans usually share their reason: say it once for the run.
        if last_why != Some(&o.reconcile) {
            // The k3s mechanics behind the plain reason with -v.
            let why = match (&o.reconcile.detail, style.detail) {
                (Some(detail), true) => format!("{} ({detail})", o.reconcile.why),
                _ => o.reconcile.why.clone(),
            };
            write_wrapped(out, &why, "         ", "         ", style.width)?;
            last_why = Some(&o.reconcile);
        }
    }
    Ok(())
}

pub(crate) fn write_backfill_plan(
    out: &mut dyn Write,
    plan: &BackfillPlan,
    style: Style,
) -> std::io::Result<()> {
    if plan.is_empty() {
        return writeln!(
            out,
            "ConfigMap kube-system/{} already holds what k3s would write: nothing to do.",
            plan.configmap
        );
    }
    // Only the text after the bold label wraps: its colour codes take no columns.
    let text = format!(
        "{} ConfigMap kube-system/{}: {} to add, {} to update, {} to remove ({} -> {} bytes of 1048576)",
        if plan.create { "create" } else { "update" },
        plan.configmap,
        plan.add.len(),
        plan.update.len(),
        plan.remove.len(),
        plan.bytes_before,
        plan.bytes_after
    );
    let first = format!("{} ", style.bold("Plan:"));
    let mut lines = wrap::wrap(&text, "Plan: ", "  ", style.width);
    lines[0] = lines[0].replacen("Plan: ", &first, 1);
    for line in lines {
        writeln!(out, "{line}")?;
    }
    let escapes = match plan.go_escaping {
        GoEscaping::Go122 => "Go 1.22+ escaping, \\b and \\f",
        GoEscaping::BeforeGo122 => "Go before 1.22, \\u0008 and \\u000c",
    };
    // Plain words by default; the Go escaping behind them with -v, and in
    // JSON as goEscaping / goEscapingAssumed.
    let values = match (&plan.writer_version, plan.go_escaping_assumed, style.detail) {
        (Some(v), false, false) => {
            format!("exactly as {v} writes them, so k3s finds nothing to rewrite")
        }
        (Some(v), false, true) => format!("byte for byte as {v} writes them ({escapes})"),
        (v, _, false) => format!(
            "as k3s writes them; the build of the writer{} is not known, so an entry holding a backspace or \
             form-feed character may be rewritten once by k3s in its own spelling (harmless)",
            v.as_ref().map(|v| format!(" ({v})")).unwrap_or_default()
        ),
        (v, _, true) => format!(
            "as k3s writes them; {escapes} assumed, since the Go release of the writer{} is not known",
            v.as_ref().map(|v| format!(" ({v})")).unwrap_or_default()
        ),
    };
    write_wrapped(out, &values, "  values: ", "          ", style.width)?;
    for (label, keys) in [
        ("add", &plan.add),
        ("update", &plan.update),
        ("remove", &plan.remove),
    ] {
        for k in keys {
            writeln!(out, "  {label:<7} {}", escape_controls(k))?;
        }
    }
    for k in &plan.kept {
        writeln!(out, "  {:<7} {}", "keep", escape_controls(k))?;
    }
    for k in &plan.dropped_for_size {
        writeln!(
            out,
            "  {:<7} {}  (oldest; dropped to stay under 1 MiB, as k3s does)",
            "drop",
            escape_controls(k)
        )?;
    }
    for k in &plan.not_added_for_size {
        writeln!(
            out,
            "  {:<7} {}  (would be among the oldest and be pruned at once, as k3s would)",
            "skip",
            escape_controls(k)
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_in_binary_units() {
        assert_eq!(human_size(512), "512 B");
        assert_eq!(human_size(8_417_312), "8.0 MiB");
        assert_eq!(human_size(1_610_612_736), "1.5 GiB");
    }
}
