//! What `serve` reads every minute instead of watching (Node Events, certificates, the
//! Secrets' metadata, HelmCharts and Jobs): its checks run under serve as under `check`, and
//! a read it is refused says so per check while everything else is judged.

use serde_json::{Value, json};

use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::k3sdoctor;
use crate::support::objects::{lease, server_at};
use crate::support::readme::{readme_namespaced_role, readme_read_only_roles};
use crate::support::report_checks::{check_run, every_finding};
use crate::support::scrape::{get, start_serve, wait_for_sample};
use crate::support::test_ca::TestCa;
use crate::support::tls_listener::TlsListener;

const V: &str = "v1.31.5+k3s1";

fn cluster() -> FakeApi {
    let fake = FakeApi::start();
    for object in [
        server_at("s1", V, "127.0.0.4"),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
        // Long expired by the fake's clock (today): an error.
        json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "s1.certwarning", "namespace": "default"},
            "involvedObject": {"kind": "Node", "name": "s1", "uid": "s1"},
            "reason": "CertificateExpirationWarning", "type": "Warning",
            "message": "Node certificates require attention - restart k3s on this node to trigger automatic rotation: \
                        api-server/client-kube-apiserver.crt: certificate CN=system:apiserver,O=system:masters will expire within 90 days at 2024-06-05T00:00:00Z",
            "count": 1, "firstTimestamp": "2024-05-31T11:00:00Z", "lastTimestamp": "2024-05-31T11:00:00Z",
            "source": {"component": "k3s-cert-monitor"}
        }),
        json!({
            "apiVersion": "helm.cattle.io/v1", "kind": "HelmChart",
            "metadata": {"name": "traefik", "namespace": "kube-system"},
            "spec": {"chart": "https://%{KUBERNETES_API}%/static/charts/traefik.tgz"},
            "status": {"jobName": "helm-install-traefik", "conditions": [
                {"type": "Failed", "status": "True", "reason": "Unsupported version",
                 "message": "unsupported helm version"}]}
        }),
        // The node password of a Node deleted long ago.
        json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "gone.node-password.k3s", "namespace": "kube-system",
                         "creationTimestamp": "2024-01-01T00:00:00Z"},
            "type": "k3s.cattle.io/node-password", "data": {"hash": "c2VjcmV0"}
        }),
    ] {
        fake.put(object);
    }
    fake
}

fn report(address: std::net::SocketAddr) -> Value {
    let (status, body) = get(address, "/report").expect("/report answers");
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).expect("/report is JSON")
}

fn codes(report: &Value) -> Vec<String> {
    every_finding(report)
        .iter()
        .map(|f| f["code"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn serve_judges_events_charts_and_node_passwords_as_check_does() {
    let fake = cluster();
    // s1's own address (no Endpoints publish it) presents an expired certificate, signed by
    // the CA the cluster publishes (the kubeconfig of a plain-HTTP server names none).
    let ca = TestCa::generate();
    fake.put(ca.root_ca_configmap());
    let _listener = TlsListener::start(
        "127.0.0.4",
        6443,
        &["127.0.0.4"],
        "2025-01-01T00:00:00Z".parse().unwrap(),
        &ca,
    )
    .expect("127.0.0.4:6443 is free");
    // An intercepting proxy answers at s2's address with an expired certificate of its own:
    // not the cluster's, so /report notes it and judges nothing of it.
    let _proxy = TlsListener::start_foreign(
        "127.0.0.25",
        6443,
        "sandboxing-tproxy-egress",
        &["registry.example.com"],
        "2025-01-01T00:00:00Z".parse().unwrap(),
    )
    .expect("127.0.0.25:6443 is free");
    fake.put(server_at("s2", V, "127.0.0.25"));
    let (serve, address) = start_serve(k3sdoctor(["serve"]).cluster(&fake, Role::Admin));
    // Found by the first read, not a minute later: it waits for the watched Nodes.
    wait_for_sample(
        address,
        r#"k3sdoctor_findings{code="serving-cert-expiring",severity="error"}"#,
        1.0,
        std::time::Duration::from_secs(30),
    );
    wait_for_sample(
        address,
        r#"k3sdoctor_findings{code="helmchart-failed",severity="error"}"#,
        1.0,
        std::time::Duration::from_secs(60),
    );
    let report = report(address);
    let codes = codes(&report);
    for code in [
        "cert-expiring",
        "helmchart-failed",
        "node-password-orphaned",
    ] {
        assert!(codes.iter().any(|c| c == code), "{code} in {codes:?}");
    }
    for name in ["certificates", "packaged-charts", "node-passwords"] {
        assert_eq!(check_run(&report, name)["ran"], true, "{name}: {report:#}");
    }
    let certificates = check_run(&report, "connection-certificates");
    let note = certificates["note"].as_str().unwrap_or_default();
    assert!(
        note.contains(
            "not this cluster's server: 127.0.0.25:6443 (Node s2) presented \
             CN=sandboxing-tproxy-egress"
        ),
        "{note}"
    );
    assert!(
        every_finding(&report).iter().all(|f| !f["object"]
            .as_str()
            .unwrap_or_default()
            .contains("127.0.0.25")),
        "{report:#}"
    );
    // No Secret's data reaches the report.
    assert!(!report.to_string().contains("c2VjcmV0"));
    serve.signal_and_wait(libc::SIGTERM).code(0);
}

#[test]
fn a_refused_read_is_not_checked_under_serve_and_the_rest_is_judged() {
    let fake = cluster();
    // The README's read-only roles, without the opt-in one for Secrets.
    fake.add_rbac_user("alice-token", "alice", &readme_read_only_roles());
    fake.add_rbac_user(
        "alice-token",
        "alice",
        &readme_namespaced_role("k3sdoctor-read-only"),
    );
    let (serve, address) =
        start_serve(k3sdoctor(["serve"]).kubeconfig_for(&fake.url(), "alice-token"));
    wait_for_sample(
        address,
        "k3sdoctor_ready",
        1.0,
        std::time::Duration::from_secs(60),
    );
    // The read-only role has no Secrets: node-passwords says what it needs, once read.
    crate::support::wait::wait_for(std::time::Duration::from_secs(60), || {
        check_run(&report(address), "node-passwords")["note"]
            .as_str()
            .is_some_and(|n| n.contains("rbac secrets-metadata"))
    });
    let report = report(address);
    // The Events are in the README's Role in default: judged.
    assert_eq!(
        check_run(&report, "certificates")["ran"],
        true,
        "{report:#}"
    );
    let passwords = check_run(&report, "node-passwords");
    assert_eq!(passwords["ran"], false, "{passwords}");
    assert!(
        passwords["note"]
            .as_str()
            .unwrap()
            .contains("needs list secrets in kube-system"),
        "{passwords}"
    );
    serve.signal_and_wait(libc::SIGTERM).code(0);
}
