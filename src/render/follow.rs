//! `k3sdoctor leases follow` for people: the plan, then what happened.

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
            return writeln!(out, "{lock} is already held by {holder}: nothing to do.");
        }
        FollowOutcome::Move(plan) => plan,
    };
    writeln!(
        out,
        "{} move {} from {} to {} (node {})",
        style.bold("Plan:"),
        plan.lock,
        from(plan),
        plan.to_identity,
        plan.to_node
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
        let text = format!(
            "{}: {field} {} -> {}",
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
    if plan.quorum.applies() && plan.overridden.is_empty() {
        let text = format!(
            "target is a Ready server; etcd quorum holds ({})",
            plan.quorum.describe()
        );
        write_wrapped(out, &text, "  checks:  ", HANG, style.width)?;
    }
    for line in &plan.overridden {
        writeln!(out, "  {}  {line}", style.bold("FORCED:"))?;
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
