use base64::Engine;
use serde_json::json;
use sha2::{Digest, Sha256};

use super::*;

const PLAN: &str = r#"{"files":[{"content":"dG9rZW46IFMzQ1JFVC1KT0lOLVRPS0VO"}]}"#;

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

fn sha(s: &str) -> String {
    Sha256::digest(s.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn secret(data: serde_json::Value) -> serde_json::Value {
    json!({
        "apiVersion": "v1", "kind": "Secret", "type": "rke.cattle.io/machine-plan",
        "metadata": {"name": "prod-pool1-abc-machine-plan", "namespace": "fleet-default",
                     "labels": {"rke.cattle.io/machine-name": "prod-pool1-abc",
                                "rke.cattle.io/cluster-name": "prod"},
                     "annotations": {"rke.cattle.io/plan-last-updated": "2026-12-01T10:00:00Z"}},
        "data": data
    })
}

#[test]
fn the_plan_is_judged_by_its_hash_against_what_the_agent_recorded() {
    let applied = MachinePlan::from_secret_json(&secret(json!({
        "plan": b64(PLAN), "applied-checksum": b64(&sha(PLAN))
    })))
    .expect("a plan Secret");
    assert_eq!(applied.outcome, PlanOutcome::Applied);
    assert_eq!(applied.machine.as_deref(), Some("prod-pool1-abc"));
    assert_eq!(applied.cluster.as_deref(), Some("prod"));
    assert_eq!(
        applied.last_updated.map(|t| t.to_string()).as_deref(),
        Some("2026-12-01T10:00:00Z")
    );

    let failed = MachinePlan::from_secret_json(&secret(json!({
        "plan": b64(PLAN), "applied-checksum": b64(&sha("an older plan")),
        "failed-checksum": b64(&sha(PLAN)), "failure-count": b64("3")
    })))
    .expect("a plan Secret");
    assert_eq!(
        (failed.outcome, failed.failure_count),
        (PlanOutcome::Failed, Some(3))
    );

    let waiting = MachinePlan::from_secret_json(&secret(json!({
        "plan": b64(PLAN), "applied-checksum": b64(&sha("an older plan"))
    })))
    .expect("a plan Secret");
    assert_eq!(waiting.outcome, PlanOutcome::Waiting);

    let empty = MachinePlan::from_secret_json(&secret(json!({}))).expect("a plan Secret");
    assert_eq!(empty.outcome, PlanOutcome::NoPlan);
}

#[test]
fn other_secrets_are_not_plans_and_nothing_of_the_data_is_kept() {
    let mut other = secret(json!({"plan": b64(PLAN)}));
    other["type"] = json!("Opaque");
    assert_eq!(MachinePlan::from_secret_json(&other), None);
    let kept = MachinePlan::from_secret_json(&secret(json!({"plan": b64(PLAN)}))).expect("plan");
    let shown = format!("{kept:?}");
    assert!(
        !shown.contains("dG9rZW4") && !shown.contains("S3CRET") && !shown.contains(&b64(PLAN)),
        "{shown}"
    );
}
