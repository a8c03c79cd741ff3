//! The Secret metadata checks through the binary: `node-password-orphaned` and
//! `serving-cert-frozen` from the fake API server's metadata-only list of kube-system's Secrets
//! (and the request asks for metadata), a user without the opt-in role gets "not checked", and
//! dumps of Secrets whose values never reach any output.

use serde_json::{Value, json};

use crate::report::CheckReport;
use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::k3sdoctor;
use crate::support::objects::{NOW, lease, server_at, write_dump};
use crate::support::readme::{readme_namespaced_role, readme_read_only_roles};

const BEFORE_CLEANUP: &str = "v1.33.5+k3s1";
const WITH_CLEANUP: &str = "v1.33.6+k3s1";

/// A value no output may ever contain: base64 in `data`, plain in `stringData`.
const SECRET_VALUE: &str = "hunter2-node-password-do-not-print";

fn base64(text: &str) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in text.as_bytes().chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A Secret in kube-system as the API server returns it, with its data.
fn secret(name: &str, created: &str, annotations: Value, owners: &[&str]) -> Value {
    let owners: Vec<Value> = owners
        .iter()
        .map(|o| json!({"apiVersion": "v1", "kind": "Node", "name": o, "uid": format!("uid-{o}")}))
        .collect();
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": "kube-system", "creationTimestamp": created,
                     "annotations": annotations, "ownerReferences": owners},
        "type": "k3s.cattle.io/node-password",
        "data": {"hash": base64(SECRET_VALUE)},
        "stringData": {"plain": SECRET_VALUE}
    })
}

fn secrets() -> Vec<Value> {
    vec![
        // Node gone an hour ago (NOW is 12:10:40).
        secret(
            "gone.node-password.k3s",
            "2024-05-31T11:10:40Z",
            json!({}),
            &[],
        ),
        // Named for a Node that exists, owned by one that does not.
        secret(
            "s2.node-password.k3s",
            "2024-05-31T11:00:00Z",
            json!({}),
            &["old-s2"],
        ),
        // A join in progress: five minutes old.
        secret(
            "joining.node-password.k3s",
            "2024-05-31T12:05:40Z",
            json!({}),
            &[],
        ),
        // Its Node is there.
        secret(
            "s1.node-password.k3s",
            "2024-05-31T09:00:00Z",
            json!({}),
            &["s1"],
        ),
        secret(
            "k3s-serving",
            "2024-05-31T09:00:00Z",
            json!({"listener.cattle.io/static": "true",
                   "listener.cattle.io/cn-10.0.0.1": "10.0.0.1",
                   "listener.cattle.io/cn-k3s.example.com": "k3s.example.com"}),
            &[],
        ),
    ]
}

fn cluster(version: &str) -> Vec<Value> {
    let mut objects = vec![
        server_at("s1", version, "10.0.0.1"),
        server_at("s2", version, "10.0.0.2"),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
    ];
    objects.extend(secrets());
    objects
}

fn run_named<'a>(report: &'a CheckReport, name: &str) -> (bool, &'a str) {
    let run = report
        .checks
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("a {name} check run"));
    (run.ran, run.note.as_str())
}

fn never_shows_the_value(stdout: &str, stderr: &str) {
    for text in [stdout, stderr] {
        assert!(!text.contains(SECRET_VALUE), "{text}");
        assert!(!text.contains(&base64(SECRET_VALUE)), "{text}");
    }
}

fn secret_codes(report: &CheckReport) -> Vec<String> {
    report
        .codes()
        .into_iter()
        .filter(|c| c.contains("node-password") || c.contains("serving-cert-frozen"))
        .collect()
}

#[test]
fn orphans_and_the_frozen_certificate_come_from_metadata_only() {
    let fake = FakeApi::with_objects(cluster(BEFORE_CLEANUP));
    for output in ["json", "table"] {
        fake.clear_requests();
        let out = k3sdoctor(["check", "-o", output, "--now", NOW, "-v"])
            .cluster(&fake, Role::ReadOnly)
            .run();
        never_shows_the_value(&out.stdout, &out.stderr);
        assert!(
            out.stderr
                .contains("list secrets in kube-system (metadata only): 5 items"),
            "{}",
            out.stderr
        );
        // One request, and it asks for metadata.
        let lists: Vec<_> = fake
            .requests()
            .into_iter()
            .filter(|r| r.path == "/api/v1/namespaces/kube-system/secrets")
            .collect();
        assert_eq!(lists.len(), 1, "{lists:?}");
        let accept = lists[0].accept.clone().unwrap_or_default();
        assert!(
            accept.contains("as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"),
            "{accept}"
        );
    }
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    let report: CheckReport = out.json();
    assert_eq!(
        secret_codes(&report),
        [
            "warning/node-password-orphaned",
            "warning/node-password-orphaned",
            "warning/serving-cert-frozen"
        ]
    );
    let objects: Vec<&str> = report
        .findings
        .iter()
        .map(|f| f.finding.object.as_str())
        .filter(|o| o.starts_with("Secret "))
        .collect();
    assert_eq!(
        objects,
        [
            "Secret kube-system/gone.node-password.k3s",
            "Secret kube-system/s2.node-password.k3s",
            "Secret kube-system/k3s-serving"
        ]
    );
    let gone = &report.findings[objects_index(&report, "gone.node-password.k3s")].finding;
    assert!(
        gone.message.contains("Node password rejected"),
        "{}",
        gone.message
    );
    assert!(
        gone.remediation
            .starts_with("kubectl -n kube-system delete secret gone.node-password.k3s"),
        "{}",
        gone.remediation
    );
    let frozen = &report.findings[objects_index(&report, "k3s-serving")].finding;
    assert!(
        frozen.message.contains("SANs 10.0.0.1, k3s.example.com"),
        "{}",
        frozen.message
    );
    assert!(run_named(&report, "node-passwords").0);
    assert!(run_named(&report, "serving-cert-static").0);
}

fn objects_index(report: &CheckReport, name: &str) -> usize {
    report
        .findings
        .iter()
        .position(|f| f.finding.object == format!("Secret kube-system/{name}"))
        .unwrap_or_else(|| panic!("a finding about {name}"))
}

#[test]
fn when_every_server_deletes_orphans_itself_the_finding_says_so() {
    let fake = FakeApi::with_objects(cluster(WITH_CLEANUP));
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    let report: CheckReport = out.json();
    assert_eq!(
        secret_codes(&report),
        [
            "warning/serving-cert-frozen",
            "info/node-password-orphaned",
            "info/node-password-orphaned"
        ]
    );
    let gone = &report.findings[objects_index(&report, "gone.node-password.k3s")].finding;
    assert!(
        gone.message.contains("k3s will delete it"),
        "{}",
        gone.message
    );
}

#[test]
fn without_the_opt_in_role_the_secret_checks_are_not_checked() {
    let fake = FakeApi::with_objects(cluster(BEFORE_CLEANUP));
    fake.add_rbac_user("alice-token", "alice", &readme_read_only_roles());
    fake.add_rbac_user(
        "alice-token",
        "alice",
        &readme_namespaced_role("k3sdoctor-read-only"),
    );
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW])
        .kubeconfig_for(&fake.url(), "alice-token")
        .run();
    out.code(0);
    let report: CheckReport = out.json();
    for name in ["node-passwords", "serving-cert-static"] {
        let (ran, note) = run_named(&report, name);
        assert!(!ran, "{name}");
        assert_eq!(
            note,
            "needs list secrets in kube-system: `k3sdoctor rbac secrets-metadata` prints the role"
        );
    }
    assert!(secret_codes(&report).is_empty());

    // The role exactly as `rbac secrets-metadata` prints it.
    let printed = k3sdoctor(["rbac", "secrets-metadata"]).run();
    fake.add_rbac_user("alice-token", "alice", &printed.stdout);
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW])
        .kubeconfig_for(&fake.url(), "alice-token")
        .run();
    let report: CheckReport = out.json();
    assert!(run_named(&report, "node-passwords").0);
    assert_eq!(secret_codes(&report).len(), 3, "{:?}", report.codes());
}

#[test]
fn a_dump_of_secrets_is_judged_and_their_values_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    let with = dir.path().join("with.yaml");
    write_dump(&with, &cluster(BEFORE_CLEANUP));
    for args in [
        vec!["check", "-o", "json", "-v"],
        vec!["check", "-o", "yaml"],
        vec!["check", "-v"],
    ] {
        let out = k3sdoctor(args.iter().chain(&["--now", NOW, "--from-file"]))
            .args(&[with.to_str().unwrap()])
            .run();
        never_shows_the_value(&out.stdout, &out.stderr);
        // Warnings, and the default --fail-on is error.
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW, "--from-file"])
        .args(&[with.to_str().unwrap()])
        .run();
    let report: CheckReport = out.json();
    assert_eq!(secret_codes(&report).len(), 3, "{:?}", report.codes());

    // A dump that breaks after the Secret: a one-line error, and still no value.
    let broken = dir.path().join("broken.yaml");
    let text = std::fs::read_to_string(&with).unwrap();
    std::fs::write(&broken, format!("{text}\n  - : : [\n")).unwrap();
    let out = k3sdoctor(["check", "-v", "--now", NOW, "--from-file"])
        .args(&[broken.to_str().unwrap()])
        .run();
    out.code(3);
    never_shows_the_value(&out.stdout, &out.stderr);
    // A Secret whose metadata is malformed: named, its data not shown.
    let bad = dir.path().join("bad.yaml");
    let mut objects = cluster(BEFORE_CLEANUP);
    objects[4]["metadata"]["creationTimestamp"] = json!(SECRET_VALUE);
    objects[4]["metadata"]["annotations"] = json!({});
    write_dump(&bad, &objects);
    let out = k3sdoctor(["check", "-v", "--now", NOW, "--from-file"])
        .args(&[bad.to_str().unwrap()])
        .run();
    out.code(3);
    assert!(
        !out.stderr.contains(&base64(SECRET_VALUE)),
        "{}",
        out.stderr
    );
}

#[test]
fn a_metadata_list_dump_is_read_and_a_dump_without_secrets_says_not_in_dump() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = dir.path().join("nodes.yaml");
    write_dump(&nodes, &cluster(BEFORE_CLEANUP)[..4]);
    let metadata = dir.path().join("secrets.json");
    let items: Vec<Value> = secrets()
        .into_iter()
        .map(|s| {
            json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                        "metadata": s["metadata"]})
        })
        .collect();
    std::fs::write(
        &metadata,
        json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
               "metadata": {"resourceVersion": "1"}, "items": items})
        .to_string(),
    )
    .unwrap();
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW, "--from-file"])
        .args(&[
            nodes.to_str().unwrap(),
            "--from-file",
            metadata.to_str().unwrap(),
        ])
        .run();
    let report: CheckReport = out.json();
    assert_eq!(secret_codes(&report).len(), 3, "{:?}", report.codes());

    let out = k3sdoctor(["check", "-o", "json", "--now", NOW, "--from-file"])
        .args(&[nodes.to_str().unwrap()])
        .run();
    let report: CheckReport = out.json();
    for name in ["node-passwords", "serving-cert-static"] {
        let (ran, note) = run_named(&report, name);
        assert!(!ran);
        assert!(note.starts_with("not in dump"), "{note}");
    }
}
