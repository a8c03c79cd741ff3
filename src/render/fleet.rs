//! A fleet for people: one summary row per cluster, worst first, then the findings of each
//! cluster that has any, headed by its context. JSON lines for streaming.

use std::io::Write;

use serde::Serialize;

use super::plural;
use super::streams::TableOut;
use super::style::Style;
use super::table::{lines, plain_table};
use crate::diagnose::finding::{FailOn, Severity};
use crate::diagnose::fleet::{FleetEntry, FleetMember, summary_row};
use crate::report::FleetReport;

/// Writes one cluster's findings (without a summary line): `check`'s linked findings or
/// `leases`' flat ones. `style` carries that cluster's `--context` for pasted commands.
pub(crate) type MemberWriter<'a, R> = &'a dyn Fn(&mut dyn Write, &R, Style) -> std::io::Result<()>;

/// The summary table (`wide` adds the API server), then each cluster's findings. `style_for`
/// gives the style of one context, so that suggested commands name that context.
pub(crate) fn write_fleet<R: FleetMember>(
    sink: &mut TableOut<'_>,
    report: &FleetReport<R>,
    wide: bool,
    style: Style,
    style_for: &dyn Fn(&str) -> Style,
    write_member: MemberWriter<'_, R>,
) -> std::io::Result<()> {
    let mut header = vec!["CONTEXT"];
    if wide {
        header.push("SERVER");
    }
    header.extend(["VERSION", "LOCKS", "DRIFT", "ETCD", "STATUS"]);
    // Laid out with its header, where the LOCKS column is found for colour; the header is
    // dropped after that under --no-headers.
    let with_header = Style {
        no_headers: false,
        ..style
    };
    let mut table = plain_table(&header, wide, with_header);
    let rows: Vec<_> = report
        .entries
        .iter()
        .map(|e| summary_row(e, report.ignore_unreachable))
        .collect();
    for row in &rows {
        let mut cells = vec![row.context.clone()];
        if wide {
            cells.push(row.server.clone());
        }
        cells.extend([
            row.version.clone(),
            row.locks.clone(),
            row.drift.clone(),
            row.etcd.clone(),
            row.status.clone(),
        ]);
        table.add_row(cells);
    }
    let printed = lines(table);
    let locks_at = printed.first().and_then(|h| h.find("LOCKS"));
    let skip = usize::from(style.no_headers);
    for (i, line) in printed.iter().enumerate().skip(skip) {
        let line = match i.checked_sub(1).and_then(|r| rows.get(r)) {
            Some(row) if style.color => colour_row(
                line,
                locks_at,
                &row.locks,
                row.split_severity,
                row.severity,
                style,
            ),
            _ => line.clone(),
        };
        writeln!(sink.rows(), "{line}")?;
    }
    // The findings under the table are prose: on stderr when stdout carries rows alone.
    let split = sink.split();
    let out = sink.prose();
    for note in table_notes(report, &rows) {
        super::wrap::write_wrapped(out, &note, "", "  ", style.width)?;
    }
    let mut sections = 0;
    for entry in &report.entries {
        let Some(member) = &entry.report else {
            continue;
        };
        if member.findings().is_empty() {
            continue;
        }
        if sections > 0 || !split {
            writeln!(out)?;
        }
        writeln!(
            out,
            "{}",
            style.bold(&super::control_chars::escape_controls(&format!(
                "── {} ({}) ──",
                entry.context, entry.server
            )))
        )?;
        // Each finding ends with a blank line, which also separates the summary line.
        write_member(out, member, style_for(&entry.context))?;
        sections += 1;
    }
    if sections == 0 && !split {
        writeln!(out)?;
    }
    writeln!(out, "{}", fleet_summary_line(report))
}

/// The lines under the table that explain it: what DRIFT counts, and
/// which contexts reach one API server, i.e. are the same cluster read more than once.
fn table_notes<R>(
    report: &FleetReport<R>,
    rows: &[crate::diagnose::fleet::FleetRow],
) -> Vec<String> {
    let mut notes = Vec::new();
    if rows.iter().any(|r| r.drift != "-") {
        notes.push(
            "DRIFT: snapshot ConfigMap entries missing/stale/orphaned (k3sdoctor snapshots diff \
             lists them)"
                .to_string(),
        );
    }
    let mut by_server: Vec<(&str, Vec<&str>)> = Vec::new();
    for e in report.entries.iter().filter(|e| !e.server.is_empty()) {
        match by_server.iter_mut().find(|(s, _)| *s == e.server) {
            Some((_, contexts)) => contexts.push(&e.context),
            None => by_server.push((&e.server, vec![&e.context])),
        }
    }
    for (server, contexts) in &by_server {
        let Some((last, first)) = contexts.split_last().filter(|(_, first)| !first.is_empty())
        else {
            continue;
        };
        notes.push(
            super::control_chars::escape_controls(&format!(
                "same cluster: {} and {last} reach one API server, {server}",
                first.join(", ")
            ))
            .into_owned(),
        );
    }
    notes
}

/// Colours the status (the last column) by severity and a `split` in the LOCKS column by the
/// split's severity; the table was laid out without colour, so widths stay right.
fn colour_row(
    line: &str,
    locks_at: Option<usize>,
    locks: &str,
    split: Option<Severity>,
    severity: Option<Severity>,
    style: Style,
) -> String {
    let mut line = line.to_string();
    if let Some(severity) = severity
        && let Some(start) = line.rfind(char::is_whitespace).map(|i| i + 1)
    {
        let status = line[start..].to_string();
        line.replace_range(start.., &style.paint(severity, &status));
    }
    if let (Some(at), Some(severity), "split") = (locks_at, split, locks)
        && line.is_char_boundary(at)
        && line[at..].starts_with("split")
    {
        line.replace_range(at..at + "split".len(), &style.paint(severity, "split"));
    }
    line
}

/// `4 clusters: 1 with errors, 1 with warnings, 1 healthy, 1 not read`.
pub(crate) fn fleet_summary_line<R>(report: &FleetReport<R>) -> String {
    let s = &report.summary;
    let mut parts = Vec::new();
    for (n, what) in [
        (s.with_errors, "with errors"),
        (s.with_warnings, "with warnings"),
        (s.with_infos, "with info only"),
        (s.healthy, "healthy"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    if s.unreadable > 0 {
        let ignored = if report.ignore_unreachable {
            " (--ignore-unreachable)"
        } else {
            ""
        };
        parts.push(format!("{} not read{ignored}", s.unreadable));
    }
    let line = format!("{}: {}", plural(s.clusters, "cluster"), parts.join(", "));
    if report.fail_on == FailOn::Never && s.with_errors + s.with_warnings > 0 {
        format!("{line}; findings not counted in the exit code (--fail-on never)")
    } else {
        line
    }
}

/// One entry as one line of JSON (`-o jsonl`), written as soon as its cluster is read.
/// Each line names what it is, as the documents of `-o json` do, so a line read on its own
/// (`jq 'select(.kind == "FleetEntry")'`, a log shipper) says which schema it follows.
pub(crate) fn write_json_line<R: Serialize>(
    out: &mut dyn Write,
    entry: &FleetEntry<R>,
) -> anyhow::Result<()> {
    super::json_escape::to_writer(&mut *out, &JsonLine::new(entry))?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

/// One `-o jsonl` line: the fleet entry with `apiVersion` and `kind` first.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonLine<'a, R> {
    api_version: &'static str,
    kind: &'static str,
    #[serde(flatten)]
    entry: &'a FleetEntry<R>,
}

impl<'a, R> JsonLine<'a, R> {
    fn new(entry: &'a FleetEntry<R>) -> Self {
        JsonLine {
            api_version: crate::report::API_VERSION,
            kind: "FleetEntry",
            entry,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::check::{CheckAnalysis, analyse_check};
    use crate::diagnose::test_cluster::{TestCluster, now};
    use crate::distro::Distro;
    use crate::input::{ReadError, ReadFailureKind};

    fn entry(context: &str, core: &str, etcd: &str) -> FleetEntry<CheckAnalysis> {
        let state = TestCluster::k3s()
            .server("s1", "v1.29.4+k3s1")
            .server("s2", "v1.29.4+k3s1")
            .lease("k3s", core, 1)
            .lease("k3s-etcd", etcd, 1)
            .snapshot_configmap(&[])
            .build();
        FleetEntry::checked(
            context.into(),
            format!("https://{context}.example.com:6443"),
            analyse_check(&state, Distro::K3s, now()),
        )
    }

    fn render(report: &FleetReport<CheckAnalysis>, wide: bool) -> String {
        let mut out = Vec::new();
        let member = |out: &mut dyn Write, a: &CheckAnalysis, style: Style| {
            crate::render::check::write_linked_findings(out, &a.findings, style)
        };
        write_fleet(
            &mut TableOut::together(&mut out),
            report,
            wide,
            Style::default(),
            &|_| Style::default(),
            &member,
        )
        .unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_default_table_fits_80_columns_worst_first_with_sections() {
        let mut down = ReadError::new("cannot list leases in kube-system: forbidden");
        down.kind = ReadFailureKind::Forbidden;
        down.action = Some("list leases in kube-system".into());
        let report = FleetReport::new(
            vec![
                entry("production-eu-west-1", "s1", "s1"),
                entry("production-us-east-2", "s1", "s2"),
                FleetEntry::unreadable("edge-store-0042".into(), String::new(), &(&down).into()),
            ],
            FailOn::Error,
            false,
        );
        let text = render(&report, false);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0].split_whitespace().collect::<Vec<_>>(),
            ["CONTEXT", "VERSION", "LOCKS", "DRIFT", "ETCD", "STATUS"]
        );
        assert!(lines[1].starts_with("edge-store-0042 "), "{text}");
        assert!(lines[1].ends_with("403 list leases"), "{text}");
        assert!(lines[2].starts_with("production-us-east-2 "), "{text}");
        assert!(lines[2].contains(" split "), "{text}");
        assert!(
            lines[3].contains(" s1 ") && lines[3].ends_with("warning"),
            "{text}"
        );
        for line in &lines[..4] {
            assert!(line.chars().count() <= 80, "{} columns: {line}", line.len());
        }
        assert!(text.contains(
            "── production-us-east-2 (https://production-us-east-2.example.com:6443) ──"
        ));
        assert!(text.contains("lease-split"));
        assert!(
            text.ends_with("3 clusters: 1 with errors, 1 with warnings, 1 not read\n"),
            "{text}"
        );
        assert!(
            render(&report, true)
                .lines()
                .next()
                .unwrap()
                .contains("SERVER")
        );
    }

    #[test]
    fn drift_has_a_legend_and_one_server_is_one_cluster() {
        let report = FleetReport::new(
            vec![
                entry("prod", "s1", "s1"),
                entry("staging", "s1", "s1"),
                FleetEntry::checked(
                    "prod-admin".into(),
                    "https://prod.example.com:6443".into(),
                    entry("x", "s1", "s1").report.unwrap(),
                ),
            ],
            FailOn::Error,
            false,
        );
        let text = render(&report, false);
        // The notes wrap at the terminal's width, which differs between machines.
        let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words.contains("DRIFT: snapshot ConfigMap entries missing/stale/orphaned"),
            "{text}"
        );
        assert!(
            words.contains(
                "same cluster: prod and prod-admin reach one API server, https://prod.example.com:6443"
            ),
            "{text}"
        );
        assert!(!text.contains("staging and"), "{text}");
    }

    #[test]
    fn colour_goes_on_the_status_and_the_split_only() {
        let style = Style {
            color: true,
            ..Style::default()
        };
        let line = "prod   v1   split   0/0/0   3/3   error";
        let painted = colour_row(
            line,
            Some(12),
            "split",
            Some(Severity::Error),
            Some(Severity::Error),
            style,
        );
        assert_eq!(
            painted,
            "prod   v1   \x1b[1;31msplit\x1b[0m   0/0/0   3/3   \x1b[1;31merror\x1b[0m"
        );
    }
}
