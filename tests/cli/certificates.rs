//! The certificates of the connection, read live: the serving certificate
//! from a handshake of k3sdoctor's own with a loopback TLS listener whose certificate really
//! expires, and the kubeconfig's client certificate. Judged at `--now`, as every verdict is.

use base64::Engine;
use serde_json::Value;

use crate::support::fake_api::tls::certificate_until;
use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::k3sdoctor;
use crate::support::objects::{lease, server, server_at};
use crate::support::report_checks::every_finding;
use crate::support::tls_listener::TlsListener;

const V: &str = "v1.31.5+k3s1";

fn cluster() -> FakeApi {
    let fake = FakeApi::start_tls_until(2030, 1, 1);
    for object in [
        server("s1", V),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
    ] {
        fake.put(object);
    }
    fake
}

fn findings(report: &Value, code: &str) -> Vec<Value> {
    every_finding(report)
        .into_iter()
        .filter(|f| f["code"] == code)
        .cloned()
        .collect()
}

fn check_at(kubeconfig: &std::path::Path, now: &str) -> Value {
    k3sdoctor(["check", "-o", "json", "--fail-on", "never", "--now", now])
        .kubeconfig(kubeconfig)
        .run()
        .json()
}

#[test]
fn the_serving_certificate_is_read_from_the_handshake_and_judged_at_now() {
    let fake = cluster();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = fake.write_kubeconfig_trusting(dir.path(), Role::ReadOnly);
    // Far from expiry: quiet, and the check ran.
    let quiet = check_at(&kubeconfig, "2029-06-01T00:00:00Z");
    assert!(
        findings(&quiet, "serving-cert-expiring").is_empty(),
        "{quiet:#}"
    );
    // Inside k3s's 90 days: a warning naming what the certificate is for.
    let soon = check_at(&kubeconfig, "2029-11-01T00:00:00Z");
    let warned = findings(&soon, "serving-cert-expiring");
    assert_eq!(warned.len(), 1, "{soon:#}");
    assert_eq!(warned[0]["severity"], "warning");
    let message = warned[0]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("the API server at {} presents", fake.url())),
        "{message}"
    );
    assert!(message.contains("names 127.0.0.1, localhost"), "{message}");
    assert!(message.contains("2030-01-01T00:00:00Z"), "{message}");
    // Expired: an error that says since when.
    let expired = check_at(&kubeconfig, "2030-01-03T00:00:00Z");
    let errors = findings(&expired, "serving-cert-expiring");
    assert_eq!(errors[0]["severity"], "error");
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("expired 2d ago")
    );
}

#[test]
fn the_kubeconfigs_client_certificate_expires_too() {
    let fake = cluster();
    let dir = tempfile::tempdir().unwrap();
    let trusting = fake.write_kubeconfig_trusting(dir.path(), Role::ReadOnly);
    let (cert, key) = certificate_until(&["system:admin"], 2030, 6, 1);
    let b64 = |text: String| base64::engine::general_purpose::STANDARD.encode(text);
    let yaml = std::fs::read_to_string(&trusting).unwrap().replace(
        "    token:",
        &format!(
            "    client-certificate-data: {}\n    client-key-data: {}\n    token:",
            b64(cert.pem()),
            b64(key.serialize_pem())
        ),
    );
    let kubeconfig = dir.path().join("with-client-cert.yaml");
    std::fs::write(&kubeconfig, yaml).unwrap();
    let report = check_at(&kubeconfig, "2030-05-25T00:00:00Z");
    let found = findings(&report, "kubeconfig-cert-expiring");
    assert_eq!(found.len(), 1, "{report:#}");
    assert_eq!(found[0]["severity"], "error");
    assert!(
        found[0]["message"]
            .as_str()
            .unwrap()
            .contains("expires in 7d")
    );
    assert!(
        found[0]["remediation"]
            .as_str()
            .unwrap()
            .contains("/etc/rancher/k3s/k3s.yaml")
    );
}

#[test]
fn a_dump_lists_no_connection_certificate_check() {
    let report: Value = k3sdoctor([
        "--from-file",
        crate::support::harness::repo_path("tests/fixtures/split-cluster")
            .to_str()
            .unwrap(),
        "check",
        "-o",
        "json",
    ])
    .run()
    .json();
    assert!(
        report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["name"] != "connection-certificates")
    );
}

/// Every server's own address is read too: a Node's address (a loopback listener whose
/// certificate expires sooner than the connection's) is judged apart and named with its Node,
/// and a server whose address refuses the handshake is a note, not a failure.
#[test]
fn each_servers_address_is_read_and_one_that_does_not_answer_is_a_note() {
    let fake = cluster();
    // The API server refuses loopback addresses in Endpoints: the servers are found by their
    // Nodes' addresses at kube-apiserver's port (the published-address path is unit-tested).
    let listener = TlsListener::start(
        "127.0.0.2",
        6443,
        &["127.0.0.2", "k3s-server-2"],
        "2029-11-10T00:00:00Z".parse().unwrap(),
        fake.ca(),
    )
    .expect("127.0.0.2:6443 is free");
    let port = listener.addr.port();
    fake.put(server_at("s2", V, "127.0.0.2"));
    // Published nowhere, and nothing listens at its address on that port.
    fake.put(server_at("s3", V, "127.0.0.3"));
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = fake.write_kubeconfig_trusting(dir.path(), Role::ReadOnly);
    let report = check_at(&kubeconfig, "2029-11-01T00:00:00Z");
    let expiring = findings(&report, "serving-cert-expiring");
    assert_eq!(expiring.len(), 2, "{report:#}");
    let server_2 = format!("127.0.0.2:{port} (Node s2)");
    let own = expiring.iter().find(|f| f["object"] == server_2.as_str());
    let own = own.unwrap_or_else(|| panic!("{server_2} in {expiring:#?}"));
    assert_eq!(own["severity"], "error");
    let message = own["message"].as_str().unwrap();
    assert!(
        message.contains("names 127.0.0.2, k3s-server-2"),
        "{message}"
    );
    assert!(message.contains("2029-11-10T00:00:00Z"), "{message}");
    let run = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "connection-certificates")
        .unwrap();
    assert_eq!(run["ran"], true);
    let note = run["note"].as_str().unwrap();
    assert!(
        note.contains(&format!(
            "the serving certificate of 127.0.0.3:{port} (Node s3) was not read: cannot connect"
        )),
        "{note}"
    );
}

fn connection_certificates_run(report: &Value) -> Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "connection-certificates")
        .cloned()
        .unwrap_or_else(|| panic!("no connection-certificates run in {report:#}"))
}

fn objects_of(found: &[Value]) -> Vec<String> {
    let mut objects: Vec<String> = found
        .iter()
        .map(|f| f["object"].as_str().unwrap_or_default().to_string())
        .collect();
    objects.sort();
    objects
}

/// An intercepting proxy answers at a server's address with its own certificate, expiring in
/// days: it does not chain to the cluster's CA (the one the kubeconfig trusts), so it is a note
/// naming what it presented and never `serving-cert-expiring`, nor listed as that server's
/// certificate; `-v` says what each handshake presented and whether it chains.
#[test]
fn a_certificate_that_does_not_chain_to_the_clusters_ca_is_a_note_and_never_judged() {
    let fake = cluster();
    let _proxy = TlsListener::start_foreign(
        "127.0.0.21",
        6443,
        "sandboxing-tproxy-egress",
        &["registry.example.com", "pypi.example.org"],
        "2029-11-05T00:00:00Z".parse().unwrap(),
    )
    .expect("127.0.0.21:6443 is free");
    fake.put(server_at("s2", V, "127.0.0.21"));
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = fake.write_kubeconfig_trusting(dir.path(), Role::ReadOnly);
    let report = check_at(&kubeconfig, "2029-11-01T00:00:00Z");
    // Only the connection's own certificate (the fake's, inside the 90 days) is judged.
    let expiring = findings(&report, "serving-cert-expiring");
    assert_eq!(objects_of(&expiring), [fake.url()], "{report:#}");
    assert!(
        !expiring[0]["message"]
            .as_str()
            .unwrap()
            .contains("127.0.0.21")
    );
    let run = connection_certificates_run(&report);
    assert_eq!(run["ran"], true);
    let note = run["note"].as_str().unwrap();
    assert!(
        note.contains(
            "not this cluster's server: 127.0.0.21:6443 (Node s2) presented \
             CN=sandboxing-tproxy-egress (issued by CN=sandboxing-tproxy-egress; names \
             registry.example.com, pypi.example.org; not issued by the cluster's CA)"
        ),
        "{note}"
    );
    assert!(!note.contains("(Node s2) presents"), "{note}");

    let verbose = k3sdoctor([
        "check",
        "-v",
        "--fail-on",
        "never",
        "--now",
        "2029-11-01T00:00:00Z",
    ])
    .kubeconfig(&kubeconfig)
    .run();
    verbose.stderr_has(
        "TLS handshake with 127.0.0.21:6443 (Node s2): CN=sandboxing-tproxy-egress (issued by \
         CN=sandboxing-tproxy-egress); not this cluster's server: not issued by the cluster's CA",
    );
    verbose.stderr_has(&format!("TLS handshake with {}: ", fake.url()));
    verbose.stderr_has("; chains to the cluster's CA");
}

/// A kubeconfig that skips verification names no CA: the chains are verified against the CA
/// the cluster publishes in kube-system/kube-root-ca.crt; while it publishes none, every
/// certificate is judged as presented and the note says its chain could not be verified.
#[test]
fn without_a_ca_in_the_kubeconfig_the_chains_are_verified_against_kube_root_ca() {
    let fake = cluster();
    let _server = TlsListener::start(
        "127.0.0.22",
        6443,
        &["127.0.0.22"],
        "2029-11-10T00:00:00Z".parse().unwrap(),
        fake.ca(),
    )
    .expect("127.0.0.22:6443 is free");
    let _proxy = TlsListener::start_foreign(
        "127.0.0.23",
        6443,
        "sandboxing-tproxy-egress",
        &["registry.example.com"],
        "2029-11-05T00:00:00Z".parse().unwrap(),
    )
    .expect("127.0.0.23:6443 is free");
    fake.put(server_at("s2", V, "127.0.0.22"));
    fake.put(server_at("s3", V, "127.0.0.23"));
    let dir = tempfile::tempdir().unwrap();
    let plain = fake.write_kubeconfig(dir.path(), Role::ReadOnly);
    let yaml = std::fs::read_to_string(&plain).unwrap().replace(
        "    server:",
        "    insecure-skip-tls-verify: true\n    server:",
    );
    let kubeconfig = dir.path().join("insecure.yaml");
    std::fs::write(&kubeconfig, yaml).unwrap();

    let unpublished = check_at(&kubeconfig, "2029-11-01T00:00:00Z");
    let note = connection_certificates_run(&unpublished)["note"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        note.contains(&format!(
            "cannot verify the chain of {}, 127.0.0.22:6443 (Node s2), 127.0.0.23:6443 (Node s3) \
             against the cluster's CA: the kubeconfig names no CA of its own, and get configmap \
             kube-system/kube-root-ca.crt: not found; judged as presented",
            fake.url()
        )),
        "{note}"
    );
    assert_eq!(
        findings(&unpublished, "serving-cert-expiring").len(),
        3,
        "{unpublished:#}"
    );

    fake.put(fake.ca().root_ca_configmap());
    let published = check_at(&kubeconfig, "2029-11-01T00:00:00Z");
    assert_eq!(
        objects_of(&findings(&published, "serving-cert-expiring")),
        ["127.0.0.22:6443 (Node s2)".to_string(), fake.url()],
        "{published:#}"
    );
    let note = connection_certificates_run(&published)["note"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        note.contains("not this cluster's server: 127.0.0.23:6443 (Node s3) presented"),
        "{note}"
    );
    assert!(!note.contains("cannot verify"), "{note}");
}

/// Each listener holds a connection this long, so handshakes that overlap are seen.
const HELD: std::time::Duration = std::time::Duration::from_millis(300);

/// Connections open now and the most seen at once, over every listener.
#[derive(Default)]
struct AtOnce {
    open: std::sync::atomic::AtomicUsize,
    most: std::sync::atomic::AtomicUsize,
}

/// A plain TCP listener at `ip:6443` that holds each connection for [`HELD`] and counts it.
fn counting_listener(ip: &str, at_once: &std::sync::Arc<AtOnce>) -> Option<()> {
    use std::sync::atomic::Ordering;
    let listener = std::net::TcpListener::bind((ip, 6443)).ok()?;
    let at_once = at_once.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let at_once = at_once.clone();
            std::thread::spawn(move || {
                let open = at_once.open.fetch_add(1, Ordering::SeqCst) + 1;
                at_once.most.fetch_max(open, Ordering::SeqCst);
                std::thread::sleep(HELD);
                at_once.open.fetch_sub(1, Ordering::SeqCst);
                drop(stream);
            });
        }
    });
    Some(())
}

/// Forty servers: their handshakes are dialled 16 at a time (`--parallel`'s default), not all
/// at once, since thousands of published addresses at once run past the open-file limit.
#[test]
fn the_servers_handshakes_are_dialled_a_bounded_number_at_a_time() {
    let fake = cluster();
    let at_once = std::sync::Arc::new(AtOnce::default());
    for n in 1..=40 {
        let ip = format!("127.0.9.{n}");
        if counting_listener(&ip, &at_once).is_none() {
            eprintln!("skipped: {ip}:6443 is taken");
            return;
        }
        fake.put(server_at(&format!("cp-{n}"), V, &ip));
    }
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = fake.write_kubeconfig_trusting(dir.path(), Role::ReadOnly);
    let report = check_at(&kubeconfig, "2029-11-01T00:00:00Z");
    let most = at_once.most.load(std::sync::atomic::Ordering::SeqCst);
    assert!((2..=16).contains(&most), "{most} handshakes at once");
    let note = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "connection-certificates")
        .and_then(|c| c["note"].as_str())
        .unwrap_or_default()
        .to_string();
    assert!(note.contains("127.0.9.40:6443 (Node cp-40)"), "{note}");
}
