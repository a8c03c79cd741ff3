use jiff::Timestamp;
use k8s_openapi::api::core::v1::Node;
use serde_json::{Value, json};

use super::*;
use crate::model::upgrade_plans::ControllerEnv;

const NS: &str = "system-upgrade";

fn now() -> Timestamp {
    "2025-09-01T12:00:00Z".parse().unwrap()
}

fn ago(mins: i64) -> String {
    (now() - jiff::SignedDuration::from_mins(mins)).to_string()
}

fn node(name: &str, server: bool, cordoned_mins_ago: Option<i64>, labels: Value) -> NodeFacts {
    let mut all = json!({"kubernetes.io/hostname": format!("{name}.example")});
    if server {
        all["node-role.kubernetes.io/control-plane"] = json!("true");
    }
    for (k, v) in labels.as_object().into_iter().flatten() {
        all[k] = v.clone();
    }
    let spec = match cordoned_mins_ago {
        Some(mins) => {
            json!({"unschedulable": true, "taints": [{"key": "node.kubernetes.io/unschedulable",
                             "effect": "NoSchedule", "timeAdded": ago(mins)}]})
        }
        None => json!({}),
    };
    let node: Node =
        serde_json::from_value(json!({"metadata": {"name": name, "labels": all}, "spec": spec}))
            .unwrap();
    NodeFacts::from_api(&node)
}

fn plan(name: &str, server: bool, applying: &[&str], complete: Option<Value>) -> PlanFacts {
    let selector = if server {
        json!({"matchExpressions": [{"key": "node-role.kubernetes.io/control-plane", "operator": "In", "values": ["true"]}]})
    } else {
        json!({"matchExpressions": [{"key": "node-role.kubernetes.io/control-plane", "operator": "DoesNotExist"}]})
    };
    let mut spec = json!({"cordon": server, "nodeSelector": selector});
    if !server {
        spec["prepare"] =
            json!({"image": "rancher/k3s-upgrade", "args": ["prepare", "server-plan"]});
    }
    PlanFacts::from_json(&json!({
        "metadata": {"name": name, "namespace": NS},
        "spec": spec,
        "status": {"latestVersion": "v1.33.5-k3s1", "latestHash": "abc",
                   "applying": applying.iter().map(|h| format!("{h}.example")).collect::<Vec<_>>(),
                   "conditions": complete.into_iter().collect::<Vec<_>>()}
    }))
    .unwrap()
}

fn syncing(mins_ago: i64) -> Option<Value> {
    Some(
        json!({"type": "Complete", "status": "False", "reason": "SyncJob", "lastTransitionTime": ago(mins_ago)}),
    )
}

fn job(plan: &str, node: &str, started_mins_ago: i64, conditions: Value) -> UpgradeJobFacts {
    UpgradeJobFacts::from_json(&json!({
        "metadata": {"name": format!("apply-{plan}-on-{node}-with-abc"), "namespace": NS,
                     "labels": {"upgrade.cattle.io/plan": plan, "upgrade.cattle.io/node": node}},
        "spec": {"activeDeadlineSeconds": 900},
        "status": {"startTime": ago(started_mins_ago), "conditions": conditions}
    }))
    .unwrap()
    .unwrap()
}

fn deadline_exceeded() -> Value {
    json!([{"type": "Failed", "status": "True", "reason": "DeadlineExceeded",
            "message": "Job was active longer than specified deadline"}])
}

fn read(plans: Vec<PlanFacts>, jobs: Option<Vec<UpgradeJobFacts>>) -> UpgradePlans {
    UpgradePlans {
        plans: Some(plans),
        jobs,
        controller_env: Some(vec![ControllerEnv {
            namespace: NS.into(),
            job_deadline: Some("900".into()),
        }]),
        crd_missing: false,
    }
}

#[test]
fn a_servers_failed_job_is_an_error_with_its_job_deadline_and_cordon() {
    let nodes = [node("s1", true, Some(20), json!({}))];
    let read = read(
        vec![plan("server-plan", true, &["s1"], syncing(20))],
        Some(vec![job("server-plan", "s1", 20, deadline_exceeded())]),
    );
    let found = analyse_upgrade_plans(&read, &nodes, now());
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.object, "Plan system-upgrade/server-plan");
    assert!(f.object_ref.is_some());
    for part in [
        "the upgrade of server s1 to v1.33.5-k3s1 has not finished",
        "Job system-upgrade/apply-server-plan-on-s1-with-abc failed: DeadlineExceeded: Job was active longer",
        "Job deadline 900 s (the Job's activeDeadlineSeconds)",
        "s1 is left cordoned since",
    ] {
        assert!(f.message.contains(part), "{part}: {}", f.message);
    }
    assert_eq!(
        f.remediation_command,
        [
            "kubectl",
            "-n",
            NS,
            "logs",
            "job/apply-server-plan-on-s1-with-abc"
        ]
    );
    // A Complete condition without JobFailed: the SUC version is unknown, both steps.
    assert!(
        f.remediation.contains("edit the Plan to retry"),
        "{}",
        f.remediation
    );
    assert!(
        f.remediation.contains("up to v0.13.4 re-creates it"),
        "{}",
        f.remediation
    );
    assert!(
        f.remediation.contains("kubectl uncordon s1"),
        "{}",
        f.remediation
    );
}

#[test]
fn job_failed_on_the_plan_outlives_the_job() {
    let failed = json!({"type": "Complete", "status": "False", "reason": "JobFailed",
        "message": "Job system-upgrade/apply-server-plan-on-s1-with-abc failed on Node s1: DeadlineExceeded: Job was active longer than specified deadline",
        "lastTransitionTime": ago(40)});
    let nodes = [node("s1", true, Some(60), json!({}))];
    let read = read(
        vec![plan("server-plan", true, &["s1"], Some(failed))],
        Some(Vec::new()),
    );
    let found = analyse_upgrade_plans(&read, &nodes, now());
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert_eq!(f.severity, Severity::Error);
    assert!(
        f.message.contains("Complete condition says JobFailed"),
        "{}",
        f.message
    );
    assert!(f.message.contains("900 s (SYSTEM_UPGRADE_JOB_ACTIVE_DEADLINE_SECONDS in system-upgrade/default-controller-env)"), "{}", f.message);
    // JobFailed: SUC v0.15.3 or later, which must be edited to retry.
    assert!(
        f.remediation.starts_with("the Job is gone"),
        "{}",
        f.remediation
    );
    assert!(
        f.remediation
            .contains("kubectl -n system-upgrade edit plan server-plan")
    );
    assert!(!f.remediation.contains("v0.13.4"), "{}", f.remediation);
}

#[test]
fn a_node_left_in_applying_without_a_job_is_stuck_once_its_cordon_outlives_the_deadline() {
    let plans = vec![plan("server-plan", true, &["s1"], syncing(30))];
    let stuck = [node("s1", true, Some(16), json!({}))];
    let found = analyse_upgrade_plans(&read(plans.clone(), Some(Vec::new())), &stuck, now());
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].severity, Severity::Error, "a cordoned server");
    assert!(
        found[0]
            .message
            .contains("no Job for it (cordoned 16m ago)"),
        "{}",
        found[0].message
    );
    assert!(
        found[0]
            .message
            .contains("not labelled plan.upgrade.cattle.io/server-plan=abc")
    );
    // Within the 900 s deadline the Job may still come.
    let young = [node("s1", true, Some(14), json!({}))];
    assert!(
        analyse_upgrade_plans(&read(plans.clone(), Some(Vec::new())), &young, now()).is_empty()
    );
    // Labelled with the latest hash: done, SUC will drop it from applying.
    let done = [node(
        "s1",
        true,
        Some(60),
        json!({"plan.upgrade.cattle.io/server-plan": "abc"}),
    )];
    assert!(analyse_upgrade_plans(&read(plans, Some(Vec::new())), &done, now()).is_empty());
}

#[test]
fn an_uncordoned_agent_is_dated_by_the_plans_condition_and_only_warned_about() {
    let mut agent_plan = plan("agent-plan", false, &["a1"], syncing(30));
    agent_plan.prepare_waits_on = None;
    let nodes = [node("a1", false, None, json!({}))];
    let found = analyse_upgrade_plans(
        &read(vec![agent_plan.clone()], Some(Vec::new())),
        &nodes,
        now(),
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].severity, Severity::Warning);
    assert!(
        found[0].message.contains("the Plan not Complete 30m ago"),
        "{}",
        found[0].message
    );
    assert!(!found[0].remediation.contains("uncordon"));
    // Jobs turned off: no deadline, so never stuck by time alone.
    agent_plan.job_deadline_secs = Some(0);
    assert!(
        analyse_upgrade_plans(&read(vec![agent_plan], Some(Vec::new())), &nodes, now()).is_empty()
    );
}

#[test]
fn a_job_past_its_deadline_is_stuck_and_one_within_it_is_not() {
    let nodes = [node("a1", false, None, json!({}))];
    let plans = vec![plan("agent-plan", false, &["a1"], syncing(30))];
    let late = read(
        plans.clone(),
        Some(vec![job("agent-plan", "a1", 20, json!([]))]),
    );
    let found = analyse_upgrade_plans(&late, &nodes, now());
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0]
            .message
            .contains("has run for 20m, past its deadline"),
        "{}",
        found[0].message
    );
    let on_time = read(plans, Some(vec![job("agent-plan", "a1", 10, json!([]))]));
    assert!(analyse_upgrade_plans(&on_time, &nodes, now()).is_empty());
}

#[test]
fn an_agent_failing_while_the_server_plan_applies_points_at_the_server_plan() {
    let nodes = [
        node("s1", true, Some(40), json!({})),
        node("a1", false, None, json!({})),
    ];
    let failure_target = json!([{"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded",
                                 "message": "Job has reached the specified backoff limit"}]);
    let read = read(
        vec![
            plan("server-plan", true, &["s1"], syncing(40)),
            plan("agent-plan", false, &["a1"], syncing(40)),
        ],
        Some(vec![
            job("server-plan", "s1", 40, deadline_exceeded()),
            job("agent-plan", "a1", 30, failure_target),
        ]),
    );
    let found = analyse_upgrade_plans(&read, &nodes, now());
    assert_eq!(found.len(), 2, "{found:#?}");
    let agent = found
        .iter()
        .find(|f| f.object.ends_with("agent-plan"))
        .unwrap();
    assert_eq!(agent.severity, Severity::Warning);
    assert!(
        agent.message.contains("BackoffLimitExceeded"),
        "{}",
        agent.message
    );
    assert!(
        agent
            .message
            .contains("server Plan system-upgrade/server-plan is still applying on s1.example"),
        "{}",
        agent.message
    );
    assert_eq!(agent.caused_by, Some(FindingCode::UpgradePlanStuck));
    let server = found
        .iter()
        .find(|f| f.object.ends_with("server-plan"))
        .unwrap();
    assert_eq!((server.severity, server.caused_by), (Severity::Error, None));
}

#[test]
fn a_plan_from_before_the_complete_condition_gets_its_job_re_created() {
    let nodes = [node("a1", false, None, json!({}))];
    let mut old = plan("agent-plan", false, &["a1"], None);
    old.prepare_waits_on = None;
    let read = read(
        vec![old],
        Some(vec![job("agent-plan", "a1", 30, deadline_exceeded())]),
    );
    let found = analyse_upgrade_plans(&read, &nodes, now());
    assert_eq!(found.len(), 1);
    assert!(
        found[0]
            .remediation
            .contains("SUC before v0.13.3 re-creates the failed Job by itself"),
        "{}",
        found[0].remediation
    );
}

#[test]
fn a_node_labelled_with_the_latest_hash_is_done_whatever_an_older_job_left() {
    let nodes = [node(
        "s1",
        true,
        None,
        json!({"plan.upgrade.cattle.io/server-plan": "abc"}),
    )];
    let read = read(
        vec![plan("server-plan", true, &["s1"], syncing(20))],
        Some(vec![job("server-plan", "s1", 20, deadline_exceeded())]),
    );
    assert!(analyse_upgrade_plans(&read, &nodes, now()).is_empty());
}

#[test]
fn failed_node_reads_sucs_message() {
    assert_eq!(
        failed_node("Job ns/j failed on Node s1: DeadlineExceeded: x").as_deref(),
        Some("s1")
    );
    assert_eq!(failed_node("something else"), None);
}
