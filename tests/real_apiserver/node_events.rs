//! Node Events on the real API server: core/v1 Events about Nodes created as
//! admin the way k3s's recorders write them (the cert monitor's `<prog>-cert-monitor`, the
//! re-encryption controller's `reencrypt-controller`, in `default`, involvedObject
//! `{kind: Node, name, uid: name}`), read through the real field selector, and the README's
//! roles: without the Role in default the checks are not checked, with it they run.

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use crate::common::{run_as, viewer_with_the_read_only_role};
use crate::report::CheckReport;
use crate::support::envtest::{EnvTest, User};
use crate::support::objects::{server, server_at};
use crate::support::readme::readme_namespaced_role;
use crate::support::tls_listener::TlsListener;

const NODES: &str = "/api/v1/nodes";
const EVENTS: &str = "/api/v1/namespaces/default/events";
const ACTIVE: &str =
    "reencrypt_active-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

fn at(offset: SignedDuration) -> String {
    (Timestamp::now() + offset)
        .round(jiff::Unit::Second)
        .unwrap()
        .to_string()
}

/// As client-go's recorder posts it: `<node>.<hex>` names, first and last timestamps, count.
fn event(
    node: &str,
    n: u32,
    reason: &str,
    type_: &str,
    source: &str,
    message: &str,
    ago: SignedDuration,
) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": format!("{node}.17e{n:05x}"), "namespace": "default"},
        "involvedObject": {"kind": "Node", "name": node, "uid": node},
        "reason": reason, "type": type_, "message": message,
        "source": {"component": source, "host": node},
        "firstTimestamp": at(-ago), "lastTimestamp": at(-ago), "count": 1,
        "reportingComponent": "", "reportingInstance": ""
    })
}

fn run_of(report: &CheckReport, name: &str) -> (bool, String) {
    let run = report.checks.iter().find(|c| c.name == name).unwrap();
    (run.ran, run.note.clone())
}

fn codes_of(report: &CheckReport, wanted: &[&str]) -> Vec<(String, String)> {
    report
        .findings
        .iter()
        .map(|f| &f.finding)
        .filter(|f| wanted.contains(&f.code.as_str()))
        .map(|f| (f.code.clone(), f.object.clone()))
        .collect()
}

#[test]
fn real_the_cert_monitor_and_reencrypt_events_give_their_findings() {
    let Some(env) = EnvTest::start("real_node_events") else {
        return;
    };
    let admin = env.admin();
    for name in ["s1", "s2"] {
        let mut node = server(name, "v1.29.4+k3s1");
        node["metadata"]["annotations"]["k3s.io/encryption-config-hash"] = json!(ACTIVE);
        admin.create(NODES, &node);
    }
    let hour = SignedDuration::from_hours(1);
    let leaf = format!(
        "Node certificates require attention - restart k3s on this node to trigger automatic rotation: \
         api-server/client-kube-apiserver.crt: certificate CN=system:apiserver,O=system:masters will expire within 90 days at {}\n\
         admin/client-admin.crt: certificate CN=system:admin,O=system:masters will expire within 90 days at {}",
        at(SignedDuration::from_hours(24 * 40)),
        at(SignedDuration::from_hours(24 * 41)),
    );
    let ca = format!(
        "Certificate Authority certificates require attention - check k3s documentation and begin planning rotation: \
         server/client-ca.crt: certificate CN=k3s-client-ca@1700000000 will expire within 365 days at {}",
        at(SignedDuration::from_hours(24 * 10)),
    );
    for e in [
        event(
            "s1",
            1,
            "CertificateExpirationWarning",
            "Warning",
            "k3s-cert-monitor",
            &leaf,
            SignedDuration::from_mins(5),
        ),
        event(
            "s1",
            2,
            "CACertificateExpirationWarning",
            "Warning",
            "k3s-cert-monitor",
            &ca,
            SignedDuration::from_mins(5),
        ),
        // s2 restarted after its warning: the OK Event supersedes it.
        event(
            "s2",
            3,
            "CertificateExpirationWarning",
            "Warning",
            "k3s-cert-monitor",
            &leaf,
            SignedDuration::from_mins(50),
        ),
        event(
            "s2",
            4,
            "CertificateExpirationOK",
            "Normal",
            "k3s-cert-monitor",
            "Node and Certificate Authority certificates managed by k3s are OK",
            SignedDuration::from_mins(2),
        ),
        event(
            "s1",
            5,
            "SecretsUpdateError",
            "Warning",
            "reencrypt-controller",
            "another reencrypt is already active",
            2 * hour,
        ),
        event(
            "s1",
            6,
            "SecretsProgress",
            "Normal",
            "reencrypt-controller",
            "reencrypted 10 secrets",
            2 * hour,
        ),
        event(
            "s2",
            7,
            "SecretsProgress",
            "Normal",
            "reencrypt-controller",
            "reencrypted 20 secrets",
            SignedDuration::from_mins(10),
        ),
    ] {
        admin.create(EVENTS, &e);
    }

    viewer_with_the_read_only_role(&env);
    let report: CheckReport = run_as(
        &env,
        User::Viewer,
        &["check", "-o", "json", "--fail-on", "never"],
    )
    .json();
    for name in ["certificates", "secrets-reencrypt"] {
        let (ran, note) = run_of(&report, name);
        assert!(!ran, "{name}");
        assert!(note.starts_with("needs list events in default"), "{note}");
    }

    admin.apply_yaml(&readme_namespaced_role("k3sdoctor-read-only"));
    admin.bind_in("default", "k3sdoctor-read-only", "viewer");
    let report: CheckReport = run_as(
        &env,
        User::Viewer,
        &["check", "-o", "json", "--fail-on", "never"],
    )
    .json();
    assert!(run_of(&report, "certificates").0);
    let wanted = [
        "cert-expiring",
        "ca-cert-expiring",
        "secrets-encryption-failed",
        "secrets-encryption-stuck",
    ];
    let mut found = codes_of(&report, &wanted);
    found.sort();
    let expected: Vec<(String, String)> = [
        ("ca-cert-expiring", "Node s1"),
        ("cert-expiring", "Node s1"),
        ("secrets-encryption-failed", "Node s1"),
        ("secrets-encryption-stuck", "Node s1"),
    ]
    .iter()
    .map(|(c, o)| (c.to_string(), o.to_string()))
    .collect();
    assert_eq!(found, expected, "{:?}", report.codes());
    let severity = |code: &str| {
        report
            .findings
            .iter()
            .find(|f| f.finding.code == code)
            .map(|f| f.finding.severity.clone())
            .unwrap()
    };
    assert_eq!(severity("cert-expiring"), "warning");
    assert_eq!(
        severity("ca-cert-expiring"),
        "error",
        "10 days is inside 14"
    );
    assert_eq!(severity("secrets-encryption-failed"), "error");

    server_certificates_expire_for_real(&env);
}

/// On the same bed: a server whose own address (reported by its Node)
/// presents a certificate that ends a few
/// seconds from now. Judged on the API server's clock, it is about to expire, then expired; the
/// address the tool connects to (the bed's apiserver) is judged apart.
fn server_certificates_expire_for_real(env: &EnvTest) {
    let admin = env.admin();
    let ends = Timestamp::now() + SignedDuration::from_secs(15);
    // The API server refuses loopback addresses in Endpoints, so the server is found by its
    // Node's address at kube-apiserver's port, as for a server the Endpoints no longer list.
    let listener = TlsListener::start("127.0.0.3", 6443, &["127.0.0.3", "s3"], ends, &env.ca())
        .expect("127.0.0.3:6443 is free");
    let port = listener.addr.port();
    admin.create(NODES, &server_at("s3", "v1.29.4+k3s1", "127.0.0.3"));
    // An intercepting proxy answers at s4's address with its own certificate, expiring as
    // soon: not the bed's CA's, so a note and never a finding.
    let _proxy = TlsListener::start_foreign(
        "127.0.0.24",
        6443,
        "sandboxing-tproxy-egress",
        &["registry.example.com"],
        ends,
    )
    .expect("127.0.0.24:6443 is free");
    admin.create(NODES, &server_at("s4", "v1.29.4+k3s1", "127.0.0.24"));
    let expiring = |report: &CheckReport| -> Vec<(String, String, String)> {
        report
            .findings
            .iter()
            .map(|f| &f.finding)
            .filter(|f| f.code == "serving-cert-expiring")
            .map(|f| (f.object.clone(), f.severity.clone(), f.message.clone()))
            .collect()
    };
    let object = format!("127.0.0.3:{port} (Node s3)");
    let check = || -> CheckReport {
        run_as(
            env,
            User::Viewer,
            &["check", "-o", "json", "--fail-on", "never"],
        )
        .json()
    };
    let before = check();
    let soon = expiring(&before);
    assert_eq!(soon.len(), 1, "{soon:?}");
    assert_eq!(
        (soon[0].0.as_str(), soon[0].1.as_str()),
        (object.as_str(), "error")
    );
    assert!(soon[0].2.contains("expires in"), "{}", soon[0].2);
    assert!(soon[0].2.contains("names 127.0.0.3, s3"), "{}", soon[0].2);
    let note = before
        .checks
        .iter()
        .find(|c| c.name == "connection-certificates")
        .map(|c| c.note.clone())
        .unwrap_or_default();
    assert!(
        note.contains(&format!(
            "not this cluster's server: 127.0.0.24:{port} (Node s4) presented \
             CN=sandboxing-tproxy-egress"
        )),
        "{note}"
    );
    // Past its end on the machine's (and the API server's) clock.
    while Timestamp::now() <= ends + SignedDuration::from_secs(1) {
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let after = expiring(&check());
    assert_eq!(after.len(), 1, "{after:?}");
    assert!(after[0].2.contains("that expired "), "{}", after[0].2);
}
