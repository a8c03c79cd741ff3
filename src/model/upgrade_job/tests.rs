use super::*;
use serde_json::json;

fn job(status: Value) -> UpgradeJobFacts {
    UpgradeJobFacts::from_json(&json!({
        "metadata": {"name": "apply-server-plan-on-s1-with-abc", "namespace": "system-upgrade",
                     "creationTimestamp": "2025-09-01T10:00:00Z",
                     "labels": {PLAN_LABEL: "server-plan", NODE_LABEL: "s1"}},
        "spec": {"activeDeadlineSeconds": 900, "backoffLimit": 99},
        "status": status,
    }))
    .unwrap()
    .unwrap()
}

#[test]
fn a_deadline_exceeded_job_has_failed() {
    let failed = job(json!({"startTime": "2025-09-01T10:00:05Z", "conditions": [
        {"type": "Failed", "status": "True", "reason": "DeadlineExceeded",
         "message": "Job was active longer than specified deadline",
         "lastTransitionTime": "2025-09-01T10:15:05Z"}]}));
    assert!(failed.failed());
    assert_eq!(
        (failed.plan.as_str(), failed.node.as_str()),
        ("server-plan", "s1")
    );
    assert_eq!(failed.active_deadline_secs, Some(900));
    assert_eq!(
        failed.started,
        Some("2025-09-01T10:00:05Z".parse().unwrap())
    );
}

#[test]
fn failure_target_counts_as_failed_from_kubernetes_1_31() {
    let failing = job(json!({"conditions": [
        {"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded",
         "message": "Job has reached the specified backoff limit"}]}));
    assert!(
        matches!(&failing.state, JobState::Failed { reason, .. } if reason == "BackoffLimitExceeded")
    );
    let running = job(json!({"active": 1}));
    assert_eq!(running.state, JobState::Running);
    assert_eq!(
        running.started,
        Some("2025-09-01T10:00:00Z".parse().unwrap())
    );
    let done = job(json!({"succeeded": 1}));
    assert_eq!(done.state, JobState::Complete);
}

#[test]
fn jobs_without_the_plan_label_are_not_sucs() {
    let other = json!({"metadata": {"name": "backup", "namespace": "system-upgrade"}});
    assert_eq!(UpgradeJobFacts::from_json(&other).unwrap(), None);
    assert!(UpgradeJobFacts::from_json(&json!("x")).is_err());
}
