//! The datastore decides what to expect: a default single-server k3s runs on sqlite, where k3s
//! elects no leader and takes no etcd snapshots, so no lock and no snapshot records are healthy
//! there, live and from a dump; an external SQL datastore still elects leaders; where the
//! datastore cannot be told, a missing lock is not judged, never an error.

use serde_json::{Value, json};

use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::k3sdoctor;
use crate::support::objects::{NOW, agent, write_dump};

const V: &str = "v1.33.5+k3s1";

/// A k3s server as a default `curl | sh` install registers it: control-plane and master, no
/// etcd role and no etcd annotations; `args` is its node-args annotation, when there is one.
fn server_without_etcd(name: &str, args: Option<&[&str]>) -> Value {
    let mut annotations = json!({"k3s.io/hostname": name});
    if let Some(args) = args {
        annotations["k3s.io/node-args"] = json!(serde_json::to_string(args).unwrap());
    }
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "node-role.kubernetes.io/control-plane": "true",
                "node-role.kubernetes.io/master": "true",
            },
            "annotations": annotations,
        },
        "status": {
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "lastHeartbeatTime": "2024-05-31T12:10:10Z"}],
            "nodeInfo": {"kubeletVersion": V},
        }
    })
}

fn check_json(fake: &FakeApi) -> (i32, Value, String) {
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW])
        .cluster(fake, Role::ReadOnly)
        .run();
    let report: Value = out.json();
    (out.code, report, out.stderr)
}

fn codes(report: &Value) -> Vec<String> {
    crate::support::report_checks::severity_codes(&report["findings"])
}

#[test]
fn a_single_sqlite_server_without_locks_or_snapshots_is_healthy_live() {
    let fake = FakeApi::with_objects(vec![
        server_without_etcd("k3s-1", Some(&["server", "--write-kubeconfig-mode", "644"])),
        agent("w1", V),
    ]);
    let (code, report, stderr) = check_json(&fake);
    assert_eq!(code, 0, "{report:#}\n{stderr}");
    let found = codes(&report);
    assert!(
        !found
            .iter()
            .any(|c| c.starts_with("error/") || c.ends_with("lease-missing")),
        "{found:?}"
    );
    assert_eq!(
        report["cluster"]["datastore"]["kind"], "sqlite",
        "{report:#}"
    );

    let out = k3sdoctor(["check", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    out.code(0)
        .stdout_has("1 server (sqlite: no leader election, no etcd snapshots)");
}

#[test]
fn a_single_sqlite_server_is_healthy_from_a_dump_with_nothing_missing() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("dump.yaml");
    write_dump(
        &dump,
        &[
            server_without_etcd("k3s-1", Some(&["server"])),
            agent("w1", V),
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "coredns", "namespace": "kube-system"}, "data": {}}),
            json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                   "metadata": {"name": "kube-apiserver-abc", "namespace": "kube-system"},
                   "spec": {"holderIdentity": "kube-apiserver-abc_1", "leaseDurationSeconds": 3600,
                            "renewTime": "2024-05-31T12:10:30.000000Z"}}),
        ],
    );
    let out = k3sdoctor(["check", "-o", "json", "--from-file"])
        .arg(dump.display().to_string())
        .run();
    let report: Value = out.json();
    assert_eq!(out.code, 0, "{report:#}\n{}", out.stderr);
    let found = codes(&report);
    assert!(
        !found
            .iter()
            .any(|c| c.ends_with("lease-missing") || c.ends_with("dump-incomplete")),
        "{found:?}"
    );
}

#[test]
fn an_external_sql_datastore_still_elects_leaders() {
    let fake = FakeApi::with_objects(vec![server_without_etcd(
        "k3s-1",
        Some(&["server", "--datastore-endpoint", "********"]),
    )]);
    let (code, report, _) = check_json(&fake);
    assert_eq!(code, 1, "{report:#}");
    assert!(
        codes(&report).contains(&"error/lease-missing".to_string()),
        "{report:#}"
    );
    assert_eq!(report["cluster"]["datastore"]["kind"], "external-sql");
}

#[test]
fn a_missing_lock_on_an_unknown_datastore_is_not_judged_never_an_error() {
    let fake = FakeApi::with_objects(vec![server_without_etcd("k3s-1", None)]);
    let (code, report, stderr) = check_json(&fake);
    assert!(
        !codes(&report).iter().any(|c| c.starts_with("error/")),
        "{report:#}"
    );
    assert_eq!(code, 0, "{report:#}\n{stderr}");
    let text = report.to_string();
    assert!(
        text.contains("which cannot be judged: the datastore is not known"),
        "{report:#}"
    );
}
