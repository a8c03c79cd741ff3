use jiff::{SignedDuration, Timestamp};

use super::*;
use crate::model::rancher::management::MachineCondition;

fn now() -> Timestamp {
    "2026-12-01T12:00:00Z".parse().unwrap()
}

fn machine(name: &str, plan_applied: Option<(&str, &str)>) -> CapiMachine {
    CapiMachine {
        namespace: "fleet-default".into(),
        name: name.into(),
        cluster: Some("prod".into()),
        machine_id: None,
        node: Some(format!("{name}-node")),
        plan_applied: plan_applied.map(|(status, message)| MachineCondition {
            status: status.into(),
            reason: Some("Error".into()),
            message: Some(message.into()),
            since: Some(now() - SignedDuration::from_hours(2)),
        }),
    }
}

fn plan(machine: &str, minutes_ago: i64, outcome: PlanOutcome) -> MachinePlan {
    MachinePlan {
        namespace: "fleet-default".into(),
        secret: format!("{machine}-machine-plan"),
        machine: Some(machine.into()),
        cluster: Some("prod".into()),
        last_updated: Some(now() - SignedDuration::from_mins(minutes_ago)),
        outcome,
        failure_count: Some(4),
    }
}

fn state(machines: Vec<CapiMachine>, plans: Option<Vec<MachinePlan>>) -> RancherState {
    RancherState {
        kubectl_target: "--context local".into(),
        machines: Some(machines),
        machine_plans: plans,
        ..RancherState::default()
    }
}

#[test]
fn plan_applied_false_is_stuck_and_said_once_per_machine() {
    let found = analyse(
        &state(
            vec![
                machine(
                    "m1",
                    Some((
                        "False",
                        "error applying plan -- check rancher-system-agent.service",
                    )),
                ),
                machine("m2", Some(("True", ""))),
            ],
            Some(vec![plan("m1", 60, PlanOutcome::Failed)]),
        ),
        now(),
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].code, FindingCode::RancherMachinePlanStuck);
    assert_eq!(found[0].object, "Machine fleet-default/m1");
    assert!(
        found[0]
            .message
            .contains("(Node m1-node) has PlanApplied False since")
            && found[0].message.contains("Error: error applying plan"),
        "{}",
        found[0].message
    );
}

#[test]
fn a_plan_the_agent_has_not_applied_is_stuck_after_15_minutes() {
    let judged = |minutes: i64, outcome: PlanOutcome| {
        analyse(
            &state(
                vec![machine("m1", None)],
                Some(vec![plan("m1", minutes, outcome)]),
            ),
            now(),
        )
    };
    let waiting = judged(20, PlanOutcome::Waiting);
    assert_eq!(waiting.len(), 1);
    assert!(
        waiting[0].message.contains("Machine fleet-default/m1 (Node m1-node) 20m ago (Secret m1-machine-plan) has not been applied"),
        "{}",
        waiting[0].message
    );
    assert!(
        waiting[0]
            .remediation
            .contains("kubectl --context local -n fleet-default get secret m1-machine-plan"),
        "{}",
        waiting[0].remediation
    );
    let failed = judged(20, PlanOutcome::Failed);
    assert!(
        failed[0].message.contains("failed to apply (4 failures)"),
        "{}",
        failed[0].message
    );
    assert!(
        judged(10, PlanOutcome::Waiting).is_empty(),
        "the agent may still apply it"
    );
    assert!(judged(600, PlanOutcome::Applied).is_empty());
    assert!(judged(600, PlanOutcome::NoPlan).is_empty());
}

#[test]
fn without_the_plan_secrets_only_the_condition_is_judged() {
    let found = analyse(&state(vec![machine("m1", None)], None), now());
    assert!(found.is_empty());
}
