//! `rancher-machine-plan-stuck`: a v2prov machine whose plan is never applied. Rancher has no
//! timeout (rancher `pkg/capr/planner/store.go`): the cluster sits at "waiting for plan to be
//! applied" until someone looks at the node. Judged from the Machine's `PlanApplied`
//! condition (False once the agent failed `max-failures` times) and, with the opt-in read of
//! the plan Secrets, from whether the agent's checksum matches the plan Rancher wrote, 15
//! minutes after it wrote it. The 15 minutes are k3sdoctor's choice, not Rancher's rule: the
//! agent reads its Secret every 5 s and retries a failed plan after 30 s.

use jiff::{SignedDuration, Timestamp};

use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::model::rancher::machine_plan::{MachinePlan, PlanOutcome};
use crate::model::rancher::management::CapiMachine;
use crate::model::rancher::view::RancherState;

const STUCK_AFTER: SignedDuration = SignedDuration::from_mins(15);

/// What the summary says when the plan Secrets were not read.
pub(super) const PLANS_NOT_READ: &str = "machine plans not checked (an opt-in read of the plan \
     Secrets in the workspace: `k3sdoctor rbac rancher` prints the Role \
     k3sdoctor-rancher-machine-plans); only the Machines' PlanApplied condition was judged";

/// One finding per machine whose plan is stuck.
pub(super) fn analyse(rancher: &RancherState, now: Timestamp) -> Vec<Finding> {
    let machines = rancher.machines.as_deref().unwrap_or_default();
    let mut findings: Vec<Finding> = machines
        .iter()
        .filter_map(|m| refused_by_rancher(rancher, m))
        .collect();
    for plan in rancher.machine_plans.iter().flatten() {
        let machine = plan.machine.as_deref().unwrap_or(&plan.secret);
        let reported = findings
            .iter()
            .any(|f| f.object == machine_object(&plan.namespace, machine));
        if !reported && let Some(found) = unapplied(rancher, plan, machines, now) {
            findings.push(found);
        }
    }
    findings
}

fn machine_object(namespace: &str, machine: &str) -> String {
    format!("Machine {namespace}/{machine}")
}

fn on_node(machine: Option<&CapiMachine>) -> String {
    match machine.and_then(|m| m.node.as_deref()) {
        Some(node) => format!(" (Node {node})"),
        None => String::new(),
    }
}

fn look_at_the_agent(rancher: &RancherState, plan_secret: Option<&str>, namespace: &str) -> String {
    let output = plan_secret.map_or(String::new(), |secret| {
        format!(
            "; what it printed: `{}`",
            rancher.kubectl(&format!(
                "-n {namespace} get secret {secret} -o jsonpath='{{.data.failed-output}}' | base64 -d | gunzip"
            ))
        )
    });
    format!(
        "on the node, `journalctl -u rancher-system-agent` and the k3s or rke2-server log say why the plan is not \
         applied{output}; Rancher waits for it without a timeout"
    )
}

/// The Machine's `PlanApplied` is False: Rancher gave up after `max-failures`.
fn refused_by_rancher(rancher: &RancherState, machine: &CapiMachine) -> Option<Finding> {
    let condition = machine.plan_applied.as_ref()?;
    if condition.status != "False" {
        return None;
    }
    let said = [condition.reason.as_deref(), condition.message.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(": ");
    let since = condition
        .since
        .map_or(String::new(), |t| format!(" since {t}"));
    Some(
        Finding::new(
            Severity::Warning,
            FindingCode::RancherMachinePlanStuck,
            machine_object(&machine.namespace, &machine.name),
            format!(
                "Machine {}/{}{} has PlanApplied False{since}: {said}",
                machine.namespace,
                machine.name,
                on_node(Some(machine))
            ),
        )
        .fix(look_at_the_agent(rancher, None, &machine.namespace)),
    )
}

/// The plan Rancher wrote is not the one the agent applied, 15 minutes on.
fn unapplied(
    rancher: &RancherState,
    plan: &MachinePlan,
    machines: &[CapiMachine],
    now: Timestamp,
) -> Option<Finding> {
    let written = plan.last_updated?;
    let age = now.duration_since(written);
    if age < STUCK_AFTER {
        return None;
    }
    let what = match plan.outcome {
        PlanOutcome::Applied | PlanOutcome::NoPlan => return None,
        PlanOutcome::Waiting => {
            "has not been applied: the agent on the node has not checked in with it".to_string()
        }
        PlanOutcome::Failed => format!(
            "failed to apply{}",
            plan.failure_count
                .map_or(String::new(), |n| format!(" ({n} failures)"))
        ),
    };
    let name = plan.machine.as_deref().unwrap_or(&plan.secret);
    let machine = machines
        .iter()
        .find(|m| m.namespace == plan.namespace && m.name == name);
    Some(
        Finding::new(
            Severity::Warning,
            FindingCode::RancherMachinePlanStuck,
            machine_object(&plan.namespace, name),
            format!(
                "the plan Rancher wrote for Machine {}/{name}{} {} ago (Secret {}) {what}; the cluster waits \
                 for it (\"waiting for plan to be applied\")",
                plan.namespace,
                on_node(machine),
                crate::age::short(age),
                plan.secret
            ),
        )
        .fix(look_at_the_agent(rancher, Some(&plan.secret), &plan.namespace)),
    )
}

#[cfg(test)]
mod tests;
