//! `admission-webhooks` through the binary: the fake API server serves the two
//! admissionregistration.k8s.io/v1 configuration kinds and core Services; a fail-closed webhook
//! on Leases whose Service has no endpoints is `webhook-fail-closed-down` with the expired locks
//! under it, a `url:` one is `webhook-blocks-control-plane`, an `Ignore` one says nothing; only
//! the named Service and its Endpoints (before 1.33) or EndpointSlices (from 1.33) are read; a
//! role without the new rules gets "not checked"; `k3sdoctor dump` carries them offline.

use serde_json::{Value, json};

use crate::report::CheckReport;
use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::k3sdoctor;
use crate::support::objects::{NOW, lease, server_at, write_dump};

fn webhook_configuration(kind: &str, name: &str, webhooks: Value) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
           "metadata": {"name": name}, "webhooks": webhooks})
}

fn lease_rule() -> Value {
    json!([{"operations": ["CREATE", "UPDATE"], "apiGroups": ["coordination.k8s.io"],
            "apiVersions": ["v1"], "resources": ["leases"]}])
}

fn service(namespace: &str, name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Service",
           "metadata": {"name": name, "namespace": namespace},
           "spec": {"ports": [{"port": 443, "targetPort": 9443}]}})
}

/// One server on `version`, its locks renewed 600 s before NOW (expired), and three
/// webhooks: a fail-closed one on Leases backed by `policy/gate` (a Service with no
/// endpoints), a `url:` one on Nodes, and an `Ignore` one on ConfigMaps.
fn cluster(version: &str) -> Vec<Value> {
    vec![
        server_at("s1", version, "10.0.0.1"),
        lease("k3s", "s1", 600),
        lease("k3s-etcd", "s1", 600),
        webhook_configuration(
            "ValidatingWebhookConfiguration",
            "gate",
            json!([{"name": "leases.gate.example.com", "rules": lease_rule(),
                    "clientConfig": {"service": {"namespace": "policy", "name": "gate"}},
                    "sideEffects": "None", "admissionReviewVersions": ["v1"]}]),
        ),
        webhook_configuration(
            "MutatingWebhookConfiguration",
            "labeler",
            json!([{"name": "nodes.labeler.example.com", "failurePolicy": "Fail",
                    "rules": [{"operations": ["UPDATE"], "apiGroups": [""], "apiVersions": ["v1"],
                               "resources": ["nodes"]}],
                    "clientConfig": {"url": "https://labeler.example.com/mutate"}},
                   {"name": "cm.labeler.example.com", "failurePolicy": "Ignore",
                    "rules": [{"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"],
                               "resources": ["configmaps"]}],
                    "clientConfig": {"service": {"namespace": "policy", "name": "ignored"}}}]),
        ),
        service("policy", "gate"),
        // Endpoints with no ready address, as the endpoints controller leaves them.
        json!({"apiVersion": "v1", "kind": "Endpoints",
               "metadata": {"name": "gate", "namespace": "policy"},
               "subsets": [{"notReadyAddresses": [{"ip": "10.42.0.9"}],
                            "ports": [{"port": 9443}]}]}),
    ]
}

fn run_named<'a>(report: &'a CheckReport, name: &str) -> (bool, &'a str) {
    let run = report
        .checks
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("a {name} check run"));
    (run.ran, run.note.as_str())
}

fn webhook_findings(report: &CheckReport) -> Vec<(String, String, String)> {
    report
        .findings
        .iter()
        .filter(|f| f.finding.code.starts_with("webhook-"))
        .map(|f| {
            (
                f.finding.severity.clone(),
                f.finding.code.clone(),
                f.finding.object.clone(),
            )
        })
        .collect()
}

/// The paths of the requests about Services and their endpoints, sorted.
fn backend_reads(fake: &FakeApi) -> Vec<String> {
    let mut reads: Vec<String> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path.contains("/namespaces/policy/") || r.path.ends_with("/services"))
        .map(|r| match r.query.as_str() {
            "" => r.path,
            q => format!("{}?{q}", r.path),
        })
        .collect();
    reads.sort();
    reads
}

#[test]
fn a_fail_closed_webhook_without_endpoints_is_the_cause_of_the_expired_locks() {
    let fake = FakeApi::with_objects(cluster("v1.31.5+k3s1"));
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report: CheckReport = out.json();
    assert_eq!(
        webhook_findings(&report),
        [
            (
                "error".to_string(),
                "webhook-fail-closed-down".to_string(),
                "ValidatingWebhookConfiguration gate".to_string()
            ),
            (
                "warning".to_string(),
                "webhook-blocks-control-plane".to_string(),
                "MutatingWebhookConfiguration labeler".to_string()
            ),
        ]
    );
    let down = report
        .findings
        .iter()
        .find(|f| f.finding.code == "webhook-fail-closed-down")
        .unwrap();
    assert!(
        down.finding
            .message
            .contains("Service policy/gate has no ready endpoint (in its Endpoints"),
        "{}",
        down.finding.message
    );
    assert!(
        down.finding
            .message
            .contains("Lease kube-system/k3s, k3s-etcd")
    );
    assert!(
        down.finding
            .remediation
            .starts_with("kubectl get validatingwebhookconfiguration gate -o yaml;")
    );
    let children: Vec<&str> = down.children.iter().map(|c| c.code.as_str()).collect();
    assert!(children.contains(&"lease-expired"), "{children:?}");
    assert!(
        down.children
            .iter()
            .all(|c| c.caused_by.as_deref() == Some("webhook-fail-closed-down"))
    );
    let url = report
        .findings
        .iter()
        .find(|f| f.finding.code == "webhook-blocks-control-plane")
        .unwrap();
    assert!(
        url.finding
            .message
            .contains("its backend is a URL (https://labeler.example.com/mutate)"),
        "{}",
        url.finding.message
    );
    assert!(run_named(&report, "admission-webhooks").0);
    // Only the fail-closed webhook's Service, by name, and its Endpoints (1.31): no list of
    // Services, nothing about the Ignore webhook's.
    assert_eq!(
        backend_reads(&fake),
        [
            "/api/v1/namespaces/policy/endpoints/gate",
            "/api/v1/namespaces/policy/services/gate"
        ]
    );
}

#[test]
fn from_1_33_the_endpoint_slices_decide_and_a_ready_one_leaves_a_warning() {
    let mut objects = cluster("v1.33.2+k3s1");
    objects.push(
        json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "gate-abcde", "namespace": "policy",
                     "labels": {"kubernetes.io/service-name": "gate"}},
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.42.0.9"]}]}),
    );
    let fake = FakeApi::with_objects(objects);
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    let report: CheckReport = out.json();
    let codes: Vec<String> = webhook_findings(&report)
        .into_iter()
        .map(|(s, c, o)| format!("{s}/{c}/{o}"))
        .collect();
    assert_eq!(
        codes,
        [
            "warning/webhook-blocks-control-plane/ValidatingWebhookConfiguration gate",
            "warning/webhook-blocks-control-plane/MutatingWebhookConfiguration labeler"
        ]
    );
    assert_eq!(
        backend_reads(&fake),
        [
            "/api/v1/namespaces/policy/services/gate",
            "/apis/discovery.k8s.io/v1/namespaces/policy/endpointslices?&labelSelector=kubernetes.io%2Fservice-name%3Dgate&limit=500"
        ]
    );
    // The Service gone: down again.
    fake.remove("Service", Some("policy"), "gate");
    let report: CheckReport = k3sdoctor(["check", "-o", "json", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .json();
    let down = report
        .findings
        .iter()
        .find(|f| f.finding.code == "webhook-fail-closed-down")
        .expect("down without its Service");
    assert!(
        down.finding
            .message
            .contains("Service policy/gate does not exist")
    );
}

#[test]
fn a_role_without_the_webhook_rules_is_not_checked() {
    let fake = FakeApi::with_objects(cluster("v1.31.5+k3s1"));
    // The read-only roles as they were before this check: everything but the new rules.
    let roles = crate::support::readme::readme_read_only_roles()
        .replace(
            "validatingwebhookconfigurations, mutatingwebhookconfigurations",
            "none",
        )
        .replace("resources: [services, endpoints]", "resources: [none]");
    fake.add_rbac_user("webhooks-token", "old-role", &roles);
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW])
        .kubeconfig_for(&fake.url(), "webhooks-token")
        .run();
    let report: CheckReport = out.json();
    assert!(webhook_findings(&report).is_empty());
    let (ran, note) = run_named(&report, "admission-webhooks");
    assert!(!ran);
    assert!(
        note.contains("needs list validatingwebhookconfigurations")
            && note.contains("rbac read-only"),
        "{note}"
    );
}

#[test]
fn a_dump_carries_the_webhooks_and_the_services_they_name() {
    let fake = FakeApi::with_objects(cluster("v1.31.5+k3s1"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dump");
    let out = k3sdoctor(["dump", path.to_str().unwrap()])
        .cluster(&fake, Role::ReadOnly)
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: CheckReport = k3sdoctor(["check", "-o", "json", "--now", NOW, "--from-file"])
        .arg(path.display().to_string())
        .run()
        .json();
    let codes: Vec<String> = webhook_findings(&report)
        .into_iter()
        .map(|(_, c, _)| c)
        .collect();
    assert_eq!(
        codes,
        ["webhook-fail-closed-down", "webhook-blocks-control-plane"]
    );
    // A hand-made dump of the kube-system objects only: the webhooks are not in it.
    let bare = dir.path().join("bare.yaml");
    write_dump(&bare, &cluster("v1.31.5+k3s1")[..3]);
    let report: CheckReport = k3sdoctor(["check", "-o", "json", "--now", NOW, "--from-file"])
        .arg(bare.display().to_string())
        .run()
        .json();
    let (ran, note) = run_named(&report, "admission-webhooks");
    assert!(!ran);
    assert!(
        note.contains(
            "kubectl get validatingwebhookconfigurations,mutatingwebhookconfigurations -o yaml"
        ),
        "{note}"
    );
    // With the webhooks but none of the Services' namespace: the backend is not judged.
    let partial = dir.path().join("partial.yaml");
    write_dump(&partial, &cluster("v1.31.5+k3s1")[..5]);
    let report: CheckReport = k3sdoctor(["check", "-o", "json", "--now", NOW, "--from-file"])
        .arg(partial.display().to_string())
        .run()
        .json();
    let (ran, note) = run_named(&report, "admission-webhooks");
    assert!(ran);
    assert!(note.contains("Service policy/gate not read"), "{note}");
    assert!(
        webhook_findings(&report)
            .iter()
            .all(|(_, c, _)| c == "webhook-blocks-control-plane")
    );
}

#[test]
fn a_support_bundle_kit_bundle_holds_the_webhooks_and_the_services_of_its_namespaces() {
    use crate::support::bundles::{SBK_TOP, sbk_list, split_cluster, support_bundle_kit};
    let objects = cluster("v1.31.5+k3s1");
    let of_kind = |kind: &str| -> Vec<Value> {
        objects
            .iter()
            .filter(|o| o["kind"] == kind)
            .cloned()
            .collect()
    };
    let at = |path: &str| format!("{SBK_TOP}/yamls/{path}");
    let bundle = support_bundle_kit(&split_cluster())
        .file(
            &at("cluster/admissionregistration.k8s.io/v1/validatingwebhookconfigurations.yaml"),
            sbk_list(
                &of_kind("ValidatingWebhookConfiguration"),
                "admissionregistration.k8s.io/v1",
                "ValidatingWebhookConfiguration",
            ),
        )
        .file(
            &at("namespaced/policy/v1/services.yaml"),
            sbk_list(&of_kind("Service"), "v1", "Service"),
        )
        .file(
            &at("namespaced/policy/v1/endpoints.yaml"),
            sbk_list(&of_kind("Endpoints"), "v1", "Endpoints"),
        );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sb.zip");
    std::fs::write(&path, bundle.zip()).unwrap();
    let report: CheckReport = k3sdoctor(["check", "-o", "json", "--now", NOW, "--from-file"])
        .arg(path.display().to_string())
        .run()
        .json();
    let down = report
        .findings
        .iter()
        .find(|f| f.finding.code == "webhook-fail-closed-down")
        .unwrap_or_else(|| panic!("{:?}", report.codes()));
    assert_eq!(down.finding.object, "ValidatingWebhookConfiguration gate");
    // No MutatingWebhookConfiguration file: none, or none collected; the check ran on what was.
    assert!(run_named(&report, "admission-webhooks").0);
}

#[test]
fn serve_exports_the_webhook_findings_per_code() {
    use crate::support::scrape::{start_serve, wait_for_sample};
    use std::time::Duration;
    let fake = FakeApi::with_objects(cluster("v1.31.5+k3s1"));
    let (_serve, address) = start_serve(k3sdoctor(["serve"]).cluster(&fake, Role::ReadOnly));
    for series in [
        r#"k3sdoctor_findings{code="webhook-fail-closed-down",severity="error"}"#,
        r#"k3sdoctor_findings{code="webhook-blocks-control-plane",severity="warning"}"#,
    ] {
        wait_for_sample(address, series, 1.0, Duration::from_secs(30));
    }
}
