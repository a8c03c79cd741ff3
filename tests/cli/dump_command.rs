//! `k3sdoctor dump`: everything `check` reads, written into a folder or a `.tar.gz`, read back
//! by `--from-file` to the same verdicts as the live cluster gave; Secrets as metadata only;
//! refusals in the manifest; an existing target refused; an interrupted dump leaves nothing.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::datastore_metrics::etcd_elsewhere;
use crate::support::fake_api::{FakeApi, Fault, FaultAction, Role};
use crate::support::harness::k3sdoctor;
use crate::support::objects::{NOW, lease, server_at, snapshot_cr};
use crate::support::readme::readme_read_only_roles;
use crate::support::report_checks::every_finding;

const V: &str = "v1.33.5+k3s1";
const RECORDED: &str = include_str!("../fixtures/metrics/apiserver-v1.33.txt");

/// A split cluster whose one published server is the fake itself, its metrics near quota.
fn cluster() -> FakeApi {
    let fake = FakeApi::start();
    let ip = fake.addr().ip().to_string();
    for object in [
        etcd_elsewhere(server_at("s1", V, &ip)),
        server_at("s2", V, "10.255.0.2"),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s2", 1),
        snapshot_cr("s1", 1_717_150_000, true),
        json!({"apiVersion": "v1", "kind": "Endpoints",
               "metadata": {"name": "kubernetes", "namespace": "default"},
               "subsets": [{"addresses": [{"ip": ip}],
                            "ports": [{"name": "https", "port": fake.addr().port(), "protocol": "TCP"}]}]}),
        json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
               "metadata": {"name": "s1.node-password.k3s", "namespace": "kube-system"},
               "data": {"hash": "c2VjcmV0LXZhbHVlLW5ldmVyLXByaW50ZWQ="}}),
    ] {
        fake.put(object);
    }
    let near = RECORDED
        .lines()
        .map(|l| {
            if l.starts_with("apiserver_storage_size_bytes{") {
                "apiserver_storage_size_bytes{storage_cluster_id=\"etcd-0\"} 1.8e+09".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    fake.set_metrics(near);
    fake
}

/// `(severity, code, object)` of every finding, sorted.
fn verdicts(report: &Value) -> Vec<(String, String, String)> {
    let mut all: Vec<_> = every_finding(report)
        .into_iter()
        .map(|f| {
            (
                f["severity"].as_str().unwrap_or_default().to_string(),
                f["code"].as_str().unwrap_or_default().to_string(),
                f["object"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    all.sort();
    all
}

fn check_json(run: crate::support::harness::Run) -> Value {
    run.run().json()
}

fn check_of(path: &Path) -> Value {
    check_json(
        k3sdoctor(["check", "-o", "json", "--fail-on", "never", "--now", NOW])
            .arg("--from-file")
            .arg(path.to_str().unwrap()),
    )
}

#[test]
fn a_dump_reads_back_to_the_verdicts_of_the_live_cluster_folder_and_archive() {
    let fake = cluster();
    let live = check_json(
        k3sdoctor(["check", "-o", "json", "--fail-on", "never", "--now", NOW])
            .cluster(&fake, Role::Admin),
    );
    assert!(
        verdicts(&live).iter().any(|v| v.1 == "etcd-db-near-quota"),
        "{live:#}"
    );
    assert!(verdicts(&live).iter().any(|v| v.1 == "lease-split"));
    let dir = tempfile::tempdir().unwrap();
    for name in ["dump", "dump.tar.gz"] {
        let path = dir.path().join(name);
        let out = k3sdoctor(["dump", path.to_str().unwrap()])
            .cluster(&fake, Role::Admin)
            .run();
        out.code(0).stderr_has(&format!("wrote {}", path.display()));
        assert_eq!(verdicts(&check_of(&path)), verdicts(&live), "{name}");
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
    // The metrics are exactly what GET /metrics answered, under the server's Node name.
    let folder = dir.path().join("dump");
    let text = std::fs::read_to_string(folder.join("metrics/apiserver/s1.txt")).unwrap();
    assert!(text.contains("apiserver_storage_size_bytes{storage_cluster_id=\"etcd-0\"} 1.8e+09"));
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["kind"], "K3sdoctorDump");
    assert!(
        manifest["read"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k["kind"] == "Node" && k["objects"] == 2),
        "{manifest:#}"
    );
    // Secrets as metadata only: the name, never the value.
    let every_file = walk(&folder);
    assert!(every_file.contains("s1.node-password.k3s"));
    assert!(!every_file.contains("c2VjcmV0LXZhbHVlLW5ldmVyLXByaW50ZWQ"));
}

fn walk(dir: &Path) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            all.push_str(&walk(&path));
        } else {
            all.push_str(&std::fs::read_to_string(&path).unwrap());
        }
    }
    all
}

#[test]
fn refused_reads_are_in_the_manifest_and_read_back_as_not_checked() {
    let fake = cluster();
    // The README's read-only roles: no Secrets (their role is opt-in).
    fake.add_rbac_user("ro-token", "ro", &readme_read_only_roles());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d");
    k3sdoctor(["dump", path.to_str().unwrap()])
        .kubeconfig_for(&fake.url(), "ro-token")
        .run()
        .code(0)
        .stderr_has("refused: ");
    let manifest = std::fs::read_to_string(path.join("manifest.json")).unwrap();
    assert!(manifest.contains("\"refused\""), "{manifest}");
    assert!(!path.join("secrets.json").exists());
    let report = check_of(&path);
    let runs = report["checks"].as_array().unwrap();
    let passwords = runs.iter().find(|c| c["name"] == "node-passwords").unwrap();
    assert_eq!(passwords["ran"], false, "{passwords:#}");
}

#[test]
fn an_existing_target_or_a_dump_as_input_is_refused_in_one_line() {
    let fake = cluster();
    let dir = tempfile::tempdir().unwrap();
    k3sdoctor(["dump", dir.path().to_str().unwrap()])
        .cluster(&fake, Role::Admin)
        .run()
        .code(2)
        .one_line_error()
        .stderr_has("already exists");
    k3sdoctor(["dump", "elsewhere"])
        .arg("--from-file")
        .arg(dir.path().to_str().unwrap())
        .run()
        .code(2)
        .one_line_error()
        .stderr_has("a dump is already one: run check on it");
}

#[test]
fn an_interrupted_dump_leaves_nothing_behind() {
    let fake = cluster();
    fake.inject(Fault::new(
        Some("GET"),
        "/metrics",
        FaultAction::Delay(Duration::from_secs(10)),
    ));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.tar.gz");
    let mut run = k3sdoctor(["-v", "dump", path.to_str().unwrap()])
        .cluster(&fake, Role::Admin)
        .spawn()
        .stream();
    let listed = run.stderr_line_matching(Duration::from_secs(20), |l| l.contains("list jobs"));
    assert!(listed.is_some(), "{}", run.seen());
    std::thread::sleep(Duration::from_millis(300));
    let out = run.signal_and_wait(libc::SIGINT);
    out.code(3)
        .stderr_has("dump interrupted: nothing was written");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}
