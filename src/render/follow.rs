//! `k3sdoctor leases follow` for people: the plan, then what happened.

use super::control_chars::escape_controls;
use std::io::Write;

use super::style::Style;
use super::wrap::write_wrapped;
use crate::repair::follow_plan::{FollowOutcome, FollowPlan};

pub fn write_plan(
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
            crate::repair::follow_plan::LockCopy::Lease => "spec.holderIdentity",
            crate::repair::follow_plan::LockCopy::ConfigMap => {
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
    write_wrapped(
        out,
        &plan.timing.describe(),
        "  timings: ",
        HANG,
        style.width,
    )?;
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

fn from(plan: &FollowPlan) -> String {
    match (&plan.from_holder, &plan.from_node) {
        (h, _) if h.is_empty() => "(released)".to_string(),
        (h, Some(node)) if node != h => format!("{h} (node {node})"),
        (h, _) => h.clone(),
    }
}
