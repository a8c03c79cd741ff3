use super::*;
use serde_json::json;

#[test]
fn a_server_plan_as_the_k3s_docs_write_it() {
    let plan = PlanFacts::from_json(&json!({
        "metadata": {"name": "server-plan", "namespace": "system-upgrade",
                     "creationTimestamp": "2025-09-01T10:00:00Z"},
        "spec": {"concurrency": 1, "cordon": true, "jobActiveDeadlineSecs": 1200,
                 "nodeSelector": {"matchExpressions": [
                     {"key": "node-role.kubernetes.io/control-plane", "operator": "In", "values": ["true"]}]},
                 "upgrade": {"image": "rancher/k3s-upgrade"}, "version": "v1.33.5+k3s1"},
        "status": {"latestVersion": "v1.33.5-k3s1", "latestHash": "abc", "applying": ["s1"],
                   "conditions": [
                     {"type": "LatestResolved", "status": "True", "reason": "Version"},
                     {"type": "Complete", "status": "False", "reason": "JobFailed",
                      "message": "Job system-upgrade/apply-server-plan-on-s1-with-abc failed on Node s1: DeadlineExceeded: Job was active longer than specified deadline",
                      "lastTransitionTime": "2025-09-01T10:16:00Z"}]}
    }))
    .unwrap();
    assert!(plan.cordons && plan.selects_control_plane);
    assert_eq!(plan.job_deadline_secs, Some(1200));
    assert_eq!(plan.applying, ["s1"]);
    assert_eq!(plan.key(), "system-upgrade/server-plan");
    assert_eq!(plan.node_label(), "plan.upgrade.cattle.io/server-plan");
    let failed = plan.job_failed().unwrap();
    assert!(failed.message.contains("failed on Node s1"));
    assert_eq!(failed.since, Some("2025-09-01T10:16:00Z".parse().unwrap()));
}

#[test]
fn an_agent_plan_waits_on_the_server_plan_it_prepares_with() {
    let plan = PlanFacts::from_json(&json!({
        "metadata": {"name": "agent-plan", "namespace": "system-upgrade"},
        "spec": {"drain": {"force": true},
                 "nodeSelector": {"matchExpressions": [
                     {"key": "node-role.kubernetes.io/control-plane", "operator": "DoesNotExist"}]},
                 "prepare": {"image": "rancher/k3s-upgrade", "args": ["prepare", "server-plan"]}}
    }))
    .unwrap();
    assert!(plan.cordons, "drain cordons");
    assert!(!plan.selects_control_plane);
    assert_eq!(plan.prepare_waits_on.as_deref(), Some("server-plan"));
    assert_eq!(plan.complete, None, "before SUC v0.13.3");
    assert!(plan.job_failed().is_none());
    let by_label = PlanFacts::from_json(&json!({
        "metadata": {"name": "p"},
        "spec": {"nodeSelector": {"matchLabels": {"node-role.kubernetes.io/master": "true"}}}
    }))
    .unwrap();
    assert!(by_label.selects_control_plane);
}

#[test]
fn garbage_is_tolerated_and_a_nameless_plan_refused() {
    let plan = PlanFacts::from_json(&json!({
        "metadata": {"name": "p"},
        "spec": {"cordon": "yes", "jobActiveDeadlineSecs": "x", "nodeSelector": [1],
                 "prepare": {"args": "prepare"}},
        "status": {"applying": [1, "n1"], "conditions": {"x": 1}}
    }))
    .unwrap();
    assert!(!plan.cordons);
    assert_eq!(plan.job_deadline_secs, None);
    assert_eq!(plan.applying, ["n1"]);
    assert!(PlanFacts::from_json(&json!([1])).is_err());
}
