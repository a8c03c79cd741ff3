//! The datastore check through the binary: each server's `/metrics` read live from the fake
//! API server (its recorded 1.33 answer, sizes changed where a test needs them), refused
//! without the role's `/metrics` rule, capped when an answer runs on, and read from a dump's
//! `metrics/apiserver/<node>.txt` and `metrics/etcd/<node>.txt`.

use serde_json::{Value, json};

use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::k3sdoctor;
use crate::support::objects::{NOW, lease, server_at, write_dump};
use crate::support::readme::readme_read_only_roles;
use crate::support::report_checks::every_finding;

pub(crate) const V: &str = "v1.33.5+k3s1";
pub(crate) const RECORDED: &str = include_str!("../fixtures/metrics/apiserver-v1.33.txt");
pub(crate) const ETCD: &str = include_str!("../fixtures/metrics/etcd-v3.5.txt");
const KINE: &str = include_str!("../fixtures/metrics/apiserver-v1.33-kine.txt");

/// The recorded answer with the datastore's size set to `bytes`.
pub(crate) fn with_size(text: &str, bytes: u64) -> String {
    text.lines()
        .map(|l| {
            if l.starts_with("apiserver_storage_size_bytes{") {
                format!("{} {bytes}", l.rsplit_once(' ').unwrap().0)
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The member's etcd at a documentation address (RFC 5737) rather than loopback, where
/// another process may serve :2381.
pub(crate) fn etcd_elsewhere(mut node: Value) -> Value {
    node["metadata"]["annotations"]["etcd.k3s.cattle.io/node-address"] = json!("198.51.100.7");
    node
}

/// One etcd server whose published address is the fake itself, so its metrics are read as
/// Node s1's, on the connection's own client.
pub(crate) fn one_server(fake: &FakeApi) {
    let ip = fake.addr().ip().to_string();
    fake.put(etcd_elsewhere(server_at("s1", V, &ip)));
    fake.put(json!({
        "apiVersion": "v1", "kind": "Endpoints",
        "metadata": {"name": "kubernetes", "namespace": "default"},
        "subsets": [{"addresses": [{"ip": ip}], "ports": [{"name": "https", "port": fake.addr().port(), "protocol": "TCP"}]}]
    }));
    fake.put(lease("k3s", "s1", 1));
    fake.put(lease("k3s-etcd", "s1", 1));
}

fn check(fake: &FakeApi, role: Role) -> Value {
    k3sdoctor(["check", "-o", "json", "--fail-on", "never", "--now", NOW])
        .cluster(fake, role)
        .run()
        .json()
}

fn coded<'a>(report: &'a Value, code: &str) -> Vec<&'a Value> {
    every_finding(report)
        .into_iter()
        .filter(|f| f["code"] == code)
        .collect()
}

fn datastore_check(report: &Value) -> Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "datastore")
        .cloned()
        .unwrap_or_else(|| panic!("no datastore check: {report:#}"))
}

#[test]
fn a_member_near_its_quota_is_named_live_and_a_small_one_is_quiet() {
    let fake = FakeApi::start();
    one_server(&fake);
    let quiet = check(&fake, Role::ReadOnly);
    assert_eq!(datastore_check(&quiet)["ran"], true, "{quiet:#}");
    assert!(coded(&quiet, "etcd-db-near-quota").is_empty(), "{quiet:#}");
    assert!(
        fake.requests().iter().any(|r| r.path == "/metrics"),
        "the metrics were read"
    );

    fake.set_metrics(with_size(RECORDED, 2_050_000_000));
    let report = check(&fake, Role::ReadOnly);
    let near = coded(&report, "etcd-db-near-quota");
    assert_eq!(near.len(), 1, "{report:#}");
    assert_eq!(
        near[0]["severity"], "error",
        "95.5 % is past 95 %: {near:#?}"
    );
    assert_eq!(near[0]["object"], "Node s1");
    let message = near[0]["message"].as_str().unwrap();
    assert!(
        message.contains("1.9 GiB of its 2.0 GiB quota (95 %"),
        "{message}"
    );
    assert!(
        message.contains("apiserver_storage_size_bytes"),
        "{message}"
    );
}

#[test]
fn without_the_metrics_rule_the_datastore_is_not_checked_and_says_which_role() {
    let fake = FakeApi::start();
    one_server(&fake);
    let roles = readme_read_only_roles();
    assert!(roles.contains("- nonResourceURLs: [/metrics]"), "{roles}");
    fake.add_rbac_user(
        "no-metrics-token",
        "no-metrics",
        &roles.replace(
            "- nonResourceURLs: [/metrics]",
            "- nonResourceURLs: [/healthz]",
        ),
    );
    let out = k3sdoctor(["check", "-o", "json", "--fail-on", "never", "--now", NOW])
        .kubeconfig_for(&fake.url(), "no-metrics-token")
        .run();
    let report: Value = out.json();
    let run = datastore_check(&report);
    assert_eq!(run["ran"], false, "{run:#}");
    let note = run["note"].as_str().unwrap();
    assert!(note.contains("refused (HTTP 403)"), "{note}");
    assert!(note.contains("k3sdoctor rbac read-only"), "{note}");
}

#[test]
fn an_answer_that_runs_on_is_cut_at_16_mib_and_that_server_is_not_checked() {
    let fake = FakeApi::start();
    one_server(&fake);
    // 18 MB of a well-formed answer: read and dropped line by line up to the cap.
    fake.set_metrics("noise_total{a=\"b\"} 1\n".repeat(900_000));
    let report = check(&fake, Role::ReadOnly);
    let run = datastore_check(&report);
    assert_eq!(run["ran"], false, "{run:#}");
    assert!(
        run["note"].as_str().unwrap().contains("over 16 MiB"),
        "{run:#}"
    );
}

fn dump_folder(objects: &[Value], files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_dump(&dir.path().join("objects.json"), objects);
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

fn check_dump(dir: &std::path::Path) -> Value {
    k3sdoctor(["check", "-o", "json", "--fail-on", "never", "--now", NOW])
        .arg("--from-file")
        .arg(dir.to_str().unwrap())
        .run()
        .json()
}

#[test]
fn a_hand_made_dump_s_metrics_files_are_judged_per_node() {
    let objects = [
        server_at("s1", V, "10.0.0.1"),
        server_at("s2", V, "10.0.0.2"),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
    ];
    // s1: etcd's own metrics with 1 GiB in use of a 3 GiB file; s2: the apiserver only.
    let fragmented = ETCD
        .lines()
        .map(|l| match l.split_once(' ') {
            Some(("etcd_mvcc_db_total_size_in_bytes", _)) => {
                "etcd_mvcc_db_total_size_in_bytes 3221225472".into()
            }
            Some(("etcd_mvcc_db_total_size_in_use_in_bytes", _)) => {
                "etcd_mvcc_db_total_size_in_use_in_bytes 1073741824".into()
            }
            Some(("etcd_server_quota_backend_bytes", _)) => {
                "etcd_server_quota_backend_bytes 8589934592".into()
            }
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    let dir = dump_folder(
        &objects,
        &[
            ("metrics/apiserver/s1.txt", RECORDED),
            ("metrics/etcd/s1.txt", &fragmented),
            (
                "metrics/apiserver/s2.txt",
                &with_size(RECORDED, 1_800_000_000),
            ),
        ],
    );
    let report = check_dump(dir.path());
    let fragmented = coded(&report, "etcd-db-fragmented");
    assert_eq!(fragmented.len(), 1, "{report:#}");
    assert_eq!(fragmented[0]["object"], "Node s1");
    let near = coded(&report, "etcd-db-near-quota");
    assert_eq!(near.len(), 1, "{report:#}");
    assert_eq!(near[0]["object"], "Node s2");
    assert_eq!(near[0]["severity"], "warning");
    let quotas = coded(&report, "etcd-quota-differs");
    assert_eq!(
        quotas.len(),
        1,
        "8 GiB on s1 against the default on s2: {report:#}"
    );

    // Without metrics files: not checked, and the note says how to add them.
    let bare = dump_folder(&objects, &[]);
    let report = check_dump(bare.path());
    let run = datastore_check(&report);
    assert_eq!(run["ran"], false);
    assert!(
        run["note"]
            .as_str()
            .unwrap()
            .contains("kubectl get --raw /metrics --server"),
        "{run:#}"
    );
}

/// A server on sqlite at `ip`: no etcd role or annotation, node-args without a datastore.
fn sqlite_server(ip: &str) -> Value {
    let mut node = server_at("k3s-1", V, ip);
    node["metadata"]["labels"]
        .as_object_mut()
        .unwrap()
        .remove("node-role.kubernetes.io/etcd");
    let annotations = node["metadata"]["annotations"].as_object_mut().unwrap();
    annotations.retain(|k, _| !k.starts_with("etcd."));
    annotations.insert("k3s.io/node-args".into(), json!("[\"server\"]"));
    node
}

#[test]
fn on_sqlite_kine_s_stalled_compaction_is_found_and_no_etcd_code_fires() {
    let node = sqlite_server("10.0.0.1");
    let stalled = KINE
        .lines()
        .map(|l| {
            if l.starts_with("kine_compact_total{result=\"success\"}") {
                "kine_compact_total{result=\"success\"} 0".to_string()
            } else if l.starts_with("process_start_time_seconds ") {
                // Started an hour before --now.
                "process_start_time_seconds 1717153840".to_string()
            } else if l.starts_with("apiserver_storage_size_bytes{") {
                // Far past any etcd quota: kine has none.
                "apiserver_storage_size_bytes{storage_cluster_id=\"etcd-0\"} 9e+09".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let dir = dump_folder(&[node], &[("metrics/apiserver/k3s-1.txt", &stalled)]);
    let report = check_dump(dir.path());
    assert_eq!(
        report["cluster"]["datastore"]["kind"], "sqlite",
        "{report:#}"
    );
    assert_eq!(
        coded(&report, "kine-compaction-stalled").len(),
        1,
        "{report:#}"
    );
    assert!(coded(&report, "etcd-db-near-quota").is_empty());
    assert!(coded(&report, "etcd-db-over-quota").is_empty());
}

/// The live probe: a helm-install Job written an hour before `--now`, then thousands of
/// writes. While the fake keeps its history, a LIST at the Job's revision answers and the
/// compaction is named stalled (the metrics carry no kine series); once compacted,
/// that LIST answers 410 Expired and nothing is said.
#[test]
fn kine_serving_a_revision_written_long_ago_is_a_stalled_compaction_live() {
    let fake = FakeApi::start();
    fake.put(sqlite_server("198.51.100.7"));
    let hour_ago = "2024-05-31T11:10:40Z";
    fake.put(json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "helm-install-traefik", "namespace": "kube-system",
                     "labels": {"helmcharts.helm.cattle.io/chart": "traefik"},
                     "creationTimestamp": hour_ago,
                     "managedFields": [{"manager": "k3s", "operation": "Update", "time": hour_ago}]},
        "spec": {"template": {"spec": {"containers": []}}},
        "status": {"succeeded": 1}
    }));
    for i in 0..2_100 {
        fake.put(json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": format!("churn-{}", i % 7), "namespace": "default"},
                        "data": {"i": i.to_string()}}));
    }

    let stalled = check(&fake, Role::ReadOnly);
    let found = coded(&stalled, "kine-compaction-stalled");
    assert_eq!(found.len(), 1, "{stalled:#}");
    let message = found[0]["message"].as_str().unwrap();
    assert!(
        message.contains("written 60m ago by Job kube-system/helm-install-traefik"),
        "{message}"
    );
    let exact: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.query.contains("resourceVersionMatch=Exact"))
        .collect();
    assert_eq!(exact.len(), 1, "one probe: {exact:?}");

    fake.compact();
    let compacted = check(&fake, Role::ReadOnly);
    assert!(
        coded(&compacted, "kine-compaction-stalled").is_empty(),
        "{compacted:#}"
    );
}
