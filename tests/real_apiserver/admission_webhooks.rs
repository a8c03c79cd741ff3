//! A fail-closed admission webhook on the real API server: a ValidatingWebhookConfiguration for
//! Leases in kube-system whose Service has no endpoints makes the apiserver reject the
//! simulated servers' real lock renewals. `check` (with the README's read-only roles) names
//! `webhook-fail-closed-down` as the cause of the expired locks; deleting the configuration lets
//! the servers renew again and both findings clear.

use serde_json::{Value, json};

use crate::common::{CATCH_UP, run_as, viewer_with_the_read_only_role};
use crate::report::CheckReport;
use crate::support::envtest::servers::SimCluster;
use crate::support::envtest::{EnvTest, User};
use crate::support::wait::wait_for;

const WEBHOOKS: &str = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";

/// `check -o json` as the viewer, until `done` holds for its report (bounded by `CATCH_UP`).
fn check_until(env: &EnvTest, what: &str, done: impl Fn(&CheckReport) -> bool) -> CheckReport {
    let mut last = None;
    let reached = wait_for(CATCH_UP, || {
        let out = run_as(env, User::Viewer, &["check", "-o", "json"]);
        let report: CheckReport = out.json();
        let ok = done(&report);
        last = Some(report);
        ok
    });
    let report = last.expect("at least one run");
    assert!(reached, "check never showed {what}: {:?}", report.codes());
    report
}

fn has(report: &CheckReport, code: &str) -> bool {
    report
        .findings
        .iter()
        .any(|f| f.finding.code == code || f.children.iter().any(|c| c.code == code))
}

#[test]
fn a_fail_closed_webhook_without_endpoints_expires_the_locks_and_deleting_it_heals_them() {
    let test =
        "a_fail_closed_webhook_without_endpoints_expires_the_locks_and_deleting_it_heals_them";
    let Some(env) = EnvTest::start(test) else {
        return;
    };
    let cluster = SimCluster::start(&env, "k3s", "v1.29.4+k3s1", 2, &[]);
    viewer_with_the_read_only_role(&env);
    let admin = env.admin();
    let healthy = check_until(&env, "the locks held", |r| {
        r.locks.iter().all(|l| l.holder.is_some()) && !has(r, "lease-expired")
    });
    let run = healthy
        .checks
        .iter()
        .find(|c| c.name == "admission-webhooks")
        .expect("the webhook check");
    assert!(run.ran, "{run:?}");

    // A Service no Pod backs: no kube-controller-manager runs here, so it has no Endpoints.
    admin.create(
        "/api/v1/namespaces",
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "policy"}}),
    );
    admin.create(
        "/api/v1/namespaces/policy/services",
        &json!({"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": "gate", "namespace": "policy"},
                "spec": {"ports": [{"port": 443, "targetPort": 9443}],
                         "selector": {"app": "gate"}}}),
    );
    let configuration: Value = json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "gate"},
        "webhooks": [{
            "name": "leases.gate.example.com",
            "clientConfig": {"service": {"namespace": "policy", "name": "gate", "path": "/validate"}},
            "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["coordination.k8s.io"],
                       "apiVersions": ["v1"], "resources": ["leases"]}],
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "timeoutSeconds": 2
        }]
    });
    admin.create(WEBHOOKS, &configuration);
    // The apiserver really calls it: the servers' renewals are rejected and the locks expire.
    let lock = cluster.core_lock();
    let blocked = check_until(&env, "the expired locks under the webhook", |r| {
        r.findings.iter().any(|f| {
            f.finding.code == "webhook-fail-closed-down"
                && f.children.iter().any(|c| c.code == "lease-expired")
        })
    });
    let down = blocked
        .findings
        .iter()
        .find(|f| f.finding.code == "webhook-fail-closed-down")
        .unwrap();
    assert_eq!(down.finding.severity, "error");
    assert_eq!(down.finding.object, "ValidatingWebhookConfiguration gate");
    assert!(
        down.finding
            .message
            .contains("Service policy/gate has no ready endpoint"),
        "{}",
        down.finding.message
    );
    assert!(
        down.finding
            .message
            .contains(&format!("Lease kube-system/{lock}")),
        "{}",
        down.finding.message
    );
    assert!(
        down.children
            .iter()
            .filter(|c| c.code == "lease-expired")
            .all(|c| c.caused_by.as_deref() == Some("webhook-fail-closed-down"))
    );

    // The emergency step: delete the configuration. The servers renew again.
    admin
        .request(
            "DELETE",
            &format!("{WEBHOOKS}/gate"),
            "application/json",
            None,
        )
        .expect("delete the webhook configuration");
    let healed = check_until(&env, "the locks renewed and no webhook finding", |r| {
        !has(r, "lease-expired") && !r.codes().iter().any(|c| c.contains("webhook-"))
    });
    assert!(healed.locks.iter().all(|l| l.holder.is_some()));
}
