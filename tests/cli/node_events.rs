//! The Node Event checks through the binary: the fake API server serves core/v1 Events in
//! default with the `involvedObject.kind=Node` field selector, a user without the Role in
//! default gets "not checked", and a dump with or without Events.

use serde_json::{Value, json};

use crate::report::CheckReport;
use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::k3sdoctor;
use crate::support::objects::{NOW, lease, server_at, write_dump};
use crate::support::readme::{readme_namespaced_role, readme_read_only_roles};

const CURRENT: &str = "v1.31.5+k3s1";
const ACTIVE: &str =
    "reencrypt_active-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

/// A core/v1 Event as client-go's recorder writes it about a Node (uid = node name).
fn node_event(node: &str, reason: &str, type_: &str, message: &str, last: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": format!("{node}.{}", reason.to_lowercase()), "namespace": "default"},
        "involvedObject": {"kind": "Node", "name": node, "uid": node},
        "reason": reason,
        "type": type_,
        "message": message,
        "count": 2,
        "firstTimestamp": "2024-05-31T11:00:00Z",
        "lastTimestamp": last,
        "source": {"component": "k3s-cert-monitor"}
    })
}

fn cluster() -> Vec<Value> {
    let mut s1 = server_at("s1", CURRENT, "10.0.0.1");
    let mut s2 = server_at("s2", CURRENT, "10.0.0.2");
    for s in [&mut s1, &mut s2] {
        s["metadata"]["annotations"]["k3s.io/encryption-config-hash"] = json!(ACTIVE);
    }
    vec![
        s1,
        s2,
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
        node_event(
            "s1",
            "CertificateExpirationWarning",
            "Warning",
            "Node certificates require attention - restart k3s on this node to trigger automatic rotation: \
             api-server/client-kube-apiserver.crt: certificate CN=system:apiserver,O=system:masters will expire within 90 days at 2024-06-05T00:00:00Z",
            "2024-05-31T12:00:00Z",
        ),
        node_event(
            "s2",
            "SecretsUpdateError",
            "Warning",
            "another reencrypt is already active",
            "2024-05-31T10:00:00Z",
        ),
        // An Event about a Pod in default: not read, not judged.
        json!({"apiVersion": "v1", "kind": "Event",
               "metadata": {"name": "web.1", "namespace": "default"},
               "involvedObject": {"kind": "Pod", "name": "web", "namespace": "default"},
               "reason": "SecretsUpdateError", "type": "Warning", "message": "not a node",
               "lastTimestamp": "2024-05-31T12:00:00Z"}),
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

#[test]
fn the_events_give_their_findings_and_only_node_events_are_read() {
    let fake = FakeApi::with_objects(cluster());
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW, "-v"])
        .cluster(&fake, Role::ReadOnly)
        .run();
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "list events in default with fieldSelector involvedObject.kind=Node: 2 items"
        ),
        "{}",
        out.stderr
    );
    let report: CheckReport = out.json();
    assert_eq!(
        report.codes(),
        [
            "error/cert-expiring",
            "error/secrets-encryption-failed",
            "warning/secrets-encryption-stuck",
            "warning/secrets-encryption-stuck"
        ]
    );
    let cert = &report.findings[0].finding;
    assert_eq!(cert.object, "Node s1");
    assert!(
        cert.message
            .contains("api-server/client-kube-apiserver.crt"),
        "{}",
        cert.message
    );
    assert!(run_named(&report, "certificates").0);
    assert!(run_named(&report, "secrets-reencrypt").0);
}

#[test]
fn without_the_role_in_default_the_event_checks_are_not_checked() {
    let fake = FakeApi::with_objects(cluster());
    fake.add_rbac_user("alice-token", "alice", &readme_read_only_roles());
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW])
        .kubeconfig_for(&fake.url(), "alice-token")
        .run();
    out.code(0);
    let report: CheckReport = out.json();
    for name in ["certificates", "secrets-reencrypt"] {
        let (ran, note) = run_named(&report, name);
        assert!(!ran, "{name}");
        assert_eq!(
            note,
            "needs list events in default: `k3sdoctor rbac read-only` prints the role"
        );
    }
    assert!(report.findings.is_empty(), "{:?}", report.codes());

    fake.add_rbac_user(
        "alice-token",
        "alice",
        &readme_namespaced_role("k3sdoctor-read-only"),
    );
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW])
        .kubeconfig_for(&fake.url(), "alice-token")
        .run();
    let report: CheckReport = out.json();
    assert!(run_named(&report, "certificates").0);
    assert_eq!(report.findings.len(), 4, "{:?}", report.codes());
}

#[test]
fn a_dump_with_events_is_judged_and_one_without_says_not_in_dump() {
    let dir = tempfile::tempdir().unwrap();
    let with = dir.path().join("with.yaml");
    write_dump(&with, &cluster());
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW, "--from-file"])
        .args(&[with.to_str().unwrap()])
        .run();
    let report: CheckReport = out.json();
    assert!(
        report.codes().contains(&"error/cert-expiring".to_string()),
        "{:?}",
        report.codes()
    );
    let without = dir.path().join("without.yaml");
    let mut objects = cluster();
    objects.truncate(4);
    write_dump(&without, &objects);
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW, "--from-file"])
        .args(&[without.to_str().unwrap()])
        .run();
    let report: CheckReport = out.json();
    let (ran, note) = run_named(&report, "certificates");
    assert!(!ran);
    assert_eq!(note, "not in dump (add `kubectl get events -A -o yaml`)");
}
