//! `k3sdoctor leases follow` for people: the plan, then what happened.

use super::control_chars::escape_controls;
use std::io::Write;

use super::style::Style;
use super::table::{lines, plain_table};
use super::wrap::write_wrapped;
use crate::follow::election_timing::ElectionTiming;
use crate::follow::follow_plan::{FollowOutcome, FollowPlan};

pub(crate) fn write_plan(
    out: &mut dyn Write,
    outcome: &FollowOutcome,
    style: Style,
) -> std::io::Result<()> {
    let plan = match outcome {
        FollowOutcome::Aligned { lock, holder } => {
            let holder = escape_controls(holder);
            return writeln!(out, "{lock} is already held by {holder}: nothing to do.");
        }
        FollowOutcome::Move(plan) => plan,
    };
    // A move that leaves the locks split says so first: it is the one thing to know before --force.
    let split = plan
        .split_after
        .as_ref()
        .map(|s| format!("; {}", s.summary))
        .unwrap_or_default();
    let node = if plan.to_agentless {
        "no Node: a server without an agent".to_string()
    } else {
        format!("node {}", escape_controls(&plan.to_node))
    };
    writeln!(
        out,
        "{} move {} from {} to {} ({node}){split}",
        style.bold("Plan:"),
        plan.lock,
        escape_controls(&from(plan)),
        escape_controls(&plan.to_identity),
    )?;
    // Each line hangs under its text, wrapped to the output width.
    const HANG: &str = "           ";
    write_wrapped(out, &plan.why, "  why:     ", HANG, style.width)?;
    for (i, copy) in plan.writes.iter().enumerate() {
        let label = if i == 0 { "  writes: " } else { "          " };
        let field = match copy {
            crate::follow::follow_plan::LockCopy::Lease => "spec.holderIdentity",
            crate::follow::follow_plan::LockCopy::ConfigMap => {
                "holderIdentity in annotation control-plane.alpha.kubernetes.io/leader"
            }
        };
        let duration = plan
            .restore_duration_seconds
            .map(|d| format!("; leaseDurationSeconds 1 -> {d} (the released record's)"))
            .unwrap_or_default();
        let text = format!(
            "{}: {field} {} -> {}{duration}",
            copy.object(&plan.lock),
            from(plan),
            plan.to_identity
        );
        write_wrapped(out, &text, &format!("{label} "), HANG, style.width)?;
    }
    for (i, line) in plan.impact.iter().enumerate() {
        let label = if i == 0 {
            "  impact:  - "
        } else {
            "           - "
        };
        write_wrapped(out, line, label, "             ", style.width)?;
    }
    write_timings(out, &plan.timing, style)?;
    if plan.quorum.applies() && plan.overridden.is_empty() {
        let text = format!(
            "target is a Ready server; etcd quorum holds ({})",
            plan.quorum.describe()
        );
        write_wrapped(out, &text, "  checks:  ", HANG, style.width)?;
    }
    for line in &plan.overridden {
        writeln!(
            out,
            "  {}  {}",
            style.bold("FORCED:"),
            escape_controls(line)
        )?;
    }
    Ok(())
}

/// The election timings as a small table under `timings:`, then where they come from:
/// three numbers with their names read at a glance, where one comma-separated line did not.
fn write_timings(
    out: &mut dyn Write,
    timing: &ElectionTiming,
    style: Style,
) -> std::io::Result<()> {
    const HANG: &str = "           ";
    // Always with its header (the numbers mean nothing without it), even under --no-headers.
    let with_header = Style {
        no_headers: false,
        ..style
    };
    let mut table = plain_table(&["LEASE", "RENEW DEADLINE", "RETRY"], false, with_header);
    table.add_row(timing.cells().to_vec());
    for (i, line) in lines(table).iter().enumerate() {
        let label = if i == 0 { "  timings: " } else { HANG };
        writeln!(out, "{label}{line}")?;
    }
    // Plain words by default; the wrangler mechanics behind them with -v (JSON has both).
    let note = if style.detail {
        format!("({}: {})", timing.summary, timing.source)
    } else {
        format!("({})", timing.summary)
    };
    write_wrapped(out, &note, HANG, HANG, style.width)
}

fn from(plan: &FollowPlan) -> String {
    match (&plan.from_holder, &plan.from_node) {
        (h, _) if h.is_empty() => "(released)".to_string(),
        (h, Some(node)) if node != h => format!("{h} (node {node})"),
        (h, _) => h.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::follow::election_timing::election_timing;

    #[test]
    fn timings_are_a_short_table_with_their_source_under_it() {
        let timing = election_timing(Some(45), None, None);
        let mut out = Vec::new();
        write_timings(&mut out, &timing, Style::default()).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "  timings: LEASE   RENEW DEADLINE   RETRY");
        assert_eq!(lines[1], "           45s     30s              2s");
        assert!(lines[2].starts_with("           ("), "{text}");
        // --no-headers is for tables a script reads, not for this one.
        let mut out = Vec::new();
        let no_headers = Style {
            no_headers: true,
            ..Style::default()
        };
        write_timings(&mut out, &timing, no_headers).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), text);
    }
}
