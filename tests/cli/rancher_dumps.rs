//! Rancher's snapshot records read from `--rancher-from-file` beside a
//! downstream dump, compared by each Rancher version's rules (fixtures written by
//! tests/fixtures/rancher/make_fixtures.py as 2.10, 2.11 and 2.14 write their records).

use serde_json::Value;

use crate::support::bundles::{self, Bundle};
use crate::support::harness::{assert_matches_schema, k3sdoctor, repo_path};

fn split() -> String {
    repo_path("tests/fixtures/split-cluster")
        .display()
        .to_string()
}

fn rancher(version: &str) -> String {
    repo_path(&format!("tests/fixtures/rancher/rancher-{version}.yaml"))
        .display()
        .to_string()
}

fn check(rancher_files: &[&str], extra: &[&str]) -> crate::support::harness::Output {
    let mut args = vec!["--from-file".to_string(), split(), "check".into()];
    for file in rancher_files {
        args.push("--rancher-from-file".into());
        args.push(file.to_string());
    }
    args.extend(extra.iter().map(|a| a.to_string()));
    k3sdoctor(args).run()
}

/// Every finding with its parent's code (`None` for a primary).
fn findings(report: &Value) -> Vec<(Option<String>, Value)> {
    let mut out = Vec::new();
    for f in report["findings"].as_array().unwrap() {
        out.push((None, f.clone()));
        for c in f["children"].as_array().into_iter().flatten() {
            out.push((Some(f["code"].as_str().unwrap().to_string()), c.clone()));
        }
    }
    out
}

fn rancher_codes(report: &Value) -> Vec<String> {
    findings(report)
        .iter()
        .map(|(_, f)| f["code"].as_str().unwrap().to_string())
        .filter(|c| c.starts_with("rancher-"))
        .collect()
}

#[test]
fn rancher_2_10_zero_byte_records_hang_under_the_split() {
    let out = check(&[&rancher("2.10")], &["-o", "json"]);
    out.code(1);
    let report: Value = out.json();
    assert_matches_schema(&report, "CheckReport");
    let size_unknown: Vec<(Option<String>, Value)> = findings(&report)
        .into_iter()
        .filter(|(_, f)| f["code"] == "rancher-snapshot-size-unknown")
        .collect();
    assert_eq!(size_unknown.len(), 1, "{report:#}");
    let (parent, finding) = &size_unknown[0];
    assert_eq!(parent.as_deref(), Some("lease-split"));
    assert_eq!(finding["causedBy"], "snapshot-missing-from-configmap");
    assert!(
        finding["message"]
            .as_str()
            .unwrap()
            .starts_with("15 records show 0 B")
    );
    assert_eq!(finding["remediationCommand"][0], "k3sdoctor");
    assert_eq!(report["rancher"]["version"], "v2.10.3");
    assert_eq!(report["rancher"]["clusterId"], "c-m-abcd1234");
    assert_eq!(report["rancher"]["recorded"], 17);
    assert_eq!(rancher_codes(&report), ["rancher-snapshot-size-unknown"]);
    // The table says where Rancher's side came from.
    check(&[&rancher("2.10")], &[])
        .code(1)
        .stdout_has("rancher: Rancher v2.10.3 at ")
        .stdout_has("cluster fleet-default/prod (c-m-abcd1234): 17 records, 17 downstream snapshots recorded")
        .stdout_has("└─ ERROR   rancher-snapshot-size-unknown");
}

#[test]
fn rancher_2_11_records_show_each_fault_once() {
    let out = check(&[&rancher("2.11")], &["-o", "json"]);
    out.code(1);
    let report: Value = out.json();
    let mut codes = rancher_codes(&report);
    codes.sort();
    assert_eq!(
        codes,
        [
            "rancher-snapshot-drift",
            "rancher-snapshot-duplicate",
            "rancher-snapshot-missing",
            "rancher-snapshot-orphaned",
            "rancher-snapshot-unmanaged"
        ]
    );
    let by_code = |code: &str| {
        findings(&report)
            .into_iter()
            .find(|(_, f)| f["code"] == code)
            .unwrap()
            .1
    };
    let missing = by_code("rancher-snapshot-missing");
    assert!(
        missing["message"]
            .as_str()
            .unwrap()
            .contains("local-etcd-snapshot-prod-k3s-3-1717113602-ab3d14; this is the loop of Rancher 2.11.2–2.11.3"),
        "{missing:#}"
    );
    assert_eq!(missing["objectRefs"][0]["kind"], "ETCDSnapshotFile");
    let unmanaged = by_code("rancher-snapshot-unmanaged");
    assert_eq!(
        unmanaged["remediationCommand"],
        serde_json::json!([
            "kubectl",
            "-n",
            "fleet-default",
            "delete",
            "etcdsnapshots.rke.cattle.io",
            "prod-etcd-snapshot-prod-k3s-1-1716600000-local"
        ])
    );
    assert!(
        unmanaged["remediation"]
            .as_str()
            .unwrap()
            .contains("disaster recovery")
    );
    assert_eq!(unmanaged["objectRefs"][0]["apiVersion"], "rke.cattle.io/v1");
    let drift = by_code("rancher-snapshot-drift");
    assert!(
        drift["message"]
            .as_str()
            .unwrap()
            .contains("size 0 ≠ 22843424"),
        "{drift:#}"
    );
    let orphaned = by_code("rancher-snapshot-orphaned");
    assert!(
        orphaned["message"]
            .as_str()
            .unwrap()
            .contains("prod-etcd-snapshot-prod-k3s-1-1716700000-local")
    );
}

#[test]
fn rancher_2_14_picks_the_cluster_by_its_snapshots_and_judges_restore_modes() {
    let out = check(&[&rancher("2.14")], &["-o", "json"]);
    out.code(1);
    let report: Value = out.json();
    assert_eq!(
        report["rancher"]["provisioningCluster"],
        "fleet-default/prod"
    );
    assert_eq!(rancher_codes(&report), ["rancher-restore-unavailable"]);
    // The other cluster of the dump, by name: disconnected, so nothing is recorded.
    let edge: Value = check(
        &[&rancher("2.14")],
        &["-o", "json", "--rancher-cluster", "edge"],
    )
    .json();
    assert_eq!(edge["rancher"]["clusterId"], "c-m-edge0001");
    let missing = findings(&edge)
        .into_iter()
        .find(|(_, f)| f["code"] == "rancher-snapshot-missing")
        .unwrap()
        .1;
    assert_eq!(missing["severity"], "warning");
    assert!(
        missing["message"]
            .as_str()
            .unwrap()
            .contains("Rancher says the cluster is disconnected (cluster agent disconnected)")
    );
}

#[test]
fn a_cluster_the_dump_lacks_is_refused_with_the_names_it_has() {
    check(&[&rancher("2.14")], &["--rancher-cluster", "nope"])
        .code(2)
        .one_line_error()
        .stderr_has(
            "holds no cluster named nope (it holds fleet-default/prod, fleet-default/edge)",
        );
}

#[test]
fn rancher_flags_that_do_not_go_together_are_refused() {
    k3sdoctor(["check", "--rancher-from-file", &rancher("2.11")])
        .run()
        .code(2)
        .one_line_error()
        .stderr_has("--rancher-from-file is read beside a downstream dump");
    check(&[], &["--rancher-context", "local"])
        .code(2)
        .one_line_error()
        .stderr_has("with --from-file use --rancher-from-file PATH");
    check(&[], &["--rancher-cluster", "prod"])
        .code(2)
        .one_line_error()
        .stderr_has("or --rancher-context; a proxy URL names its cluster itself");
    k3sdoctor(["check", "--all-contexts", "--rancher-context", "local"])
        .run()
        .code(2)
        .one_line_error()
        .stderr_has("apply to one cluster; each context of a fleet");
    k3sdoctor(["check", "--rancher-from-file", &rancher("2.11")])
        .run()
        .stderr_has("add --from-file PATH with the downstream cluster's objects");
    check(&[], &["--rancher-context", "local"])
        .stderr_has("with --from-file use --rancher-from-file PATH");
}

#[test]
fn a_file_without_rancher_objects_is_unreadable_input() {
    let nodes = repo_path("tests/fixtures/split-cluster/nodes.yaml")
        .display()
        .to_string();
    check(&[&nodes], &[])
        .code(3)
        .one_line_error()
        .stderr_has("holds no Rancher object")
        .stderr_has("kubectl get etcdsnapshots.rke.cattle.io,");
}

#[test]
fn without_records_the_comparison_is_not_checked_and_says_what_adds_them() {
    let dir = tempfile::tempdir().unwrap();
    let full: Value =
        serde_yaml_ng::from_str(&std::fs::read_to_string(rancher("2.11")).unwrap()).unwrap();
    let clusters: Vec<Value> = full["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "Cluster")
        .cloned()
        .collect();
    let path = dir.path().join("clusters.json");
    std::fs::write(
        &path,
        serde_json::json!({"apiVersion": "v1", "kind": "List", "items": clusters}).to_string(),
    )
    .unwrap();
    let out = check(&[path.to_str().unwrap()], &["-o", "json"]);
    let report: Value = out.json();
    let run = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "rancher")
        .unwrap()
        .clone();
    assert_eq!(run["ran"], false);
    assert!(
        run["note"]
            .as_str()
            .unwrap()
            .contains("add `kubectl get etcdsnapshots.rke.cattle.io -A -o yaml`"),
        "{run:#}"
    );
    let note = run["note"].as_str().unwrap();
    assert_eq!(note.matches("not read").count(), 1, "{note}");
    assert!(rancher_codes(&report).is_empty());

    // The same dump with the Feature off: no records is what the Feature leads to.
    let feature = dir.path().join("feature.yaml");
    std::fs::write(&feature, FEATURE_OFF).unwrap();
    let report: Value = check(
        &[path.to_str().unwrap(), feature.to_str().unwrap()],
        &["-o", "json"],
    )
    .json();
    assert_eq!(rancher_codes(&report), ["rancher-backpopulate-off"]);
}

const FEATURE_OFF: &str = "apiVersion: management.cattle.io/v3\nkind: Feature\nmetadata:\n  name: v2prov-etcd-snapshot-backpopulate\nspec:\n  value: false\nstatus:\n  default: true\n";

#[test]
fn the_feature_off_explains_every_missing_record() {
    let dir = tempfile::tempdir().unwrap();
    let feature = dir.path().join("feature.yaml");
    std::fs::write(&feature, FEATURE_OFF).unwrap();
    let report: Value = check(
        &[&rancher("2.11"), feature.to_str().unwrap()],
        &["-o", "json"],
    )
    .json();
    let root = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "rancher-backpopulate-off")
        .unwrap();
    assert_eq!(root["children"][0]["code"], "rancher-snapshot-missing");
}

/// The Rancher logs collector keeps the provisioning objects under `kubectl/rancher-prov/`,
/// one `kubectl get -A -o yaml` per resource, or kubectl's error where one is not served.
#[test]
fn the_rancher_collectors_provisioning_files_are_read() {
    let full = std::fs::read_to_string(rancher("2.11")).unwrap();
    let all: Value = serde_yaml_ng::from_str(&full).unwrap();
    let of = |kind: &str| {
        let items: Vec<Value> = all["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["kind"] == kind)
            .cloned()
            .collect();
        serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string()
    };
    let bundle = Bundle::default()
        .file("k3s/kubectl/leases", "NAMESPACE   NAME   HOLDER   AGE\n")
        .file(
            "k3s/kubectl/rancher-prov/etcdsnapshots.rke.cattle.io",
            of("ETCDSnapshot"),
        )
        .file(
            "k3s/kubectl/rancher-prov/clusters.provisioning.cattle.io",
            of("Cluster"),
        )
        .file(
            "k3s/kubectl/rancher-prov/rkecontrolplanes.rke.cattle.io",
            "error: the server doesn't have a resource type \"rkecontrolplanes\"\n",
        )
        .under("rancher-server-1-2024-05-31_12_10_45");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rancher-server-1.tar.gz");
    std::fs::write(&path, bundles::gzip(&bundle.tar())).unwrap();
    let report: Value = check(&[path.to_str().unwrap()], &["-o", "json"]).json();
    assert_eq!(report["rancher"]["records"], 19, "{:#}", report["rancher"]);
    assert!(rancher_codes(&report).contains(&"rancher-snapshot-orphaned".to_string()));
    // No Setting in the collector: the version is told by the records' shape, and said so.
    let note = report["rancher"]["note"].as_str().unwrap();
    assert!(
        note.contains("2.11 or later, told by the records' snapshot-name annotations"),
        "{note}"
    );
}

#[test]
fn rancher_fleet_flags_that_do_not_go_together_are_refused() {
    k3sdoctor(["check", "--rancher-clusters", "--all-contexts"])
        .run()
        .code(2)
        .one_line_error();
    k3sdoctor([
        "--context",
        "a",
        "--context",
        "b",
        "check",
        "--rancher-clusters",
    ])
    .run()
    .code(2)
    .one_line_error()
    .stderr_has("give --context once");
    k3sdoctor(["serve", "--rancher-clusters", "--heal", "on"])
        .run()
        .code(2)
        .one_line_error()
        .stderr_has("serve --rancher-clusters only reports");
    k3sdoctor(["serve", "--interval", "30s"])
        .run()
        .code(2)
        .one_line_error()
        .stderr_has("--interval sets the rounds of serve --rancher-clusters");
    check(&[&rancher("2.11")], &["--rancher-clusters"])
        .code(2)
        .one_line_error();
}

/// A context that is no Rancher URL cannot reach Rancher's clusters: said, not guessed.
#[test]
fn rancher_clusters_needs_a_context_rancher_generated() {
    let fake = crate::support::fake_api::FakeApi::start();
    k3sdoctor(["check", "--rancher-clusters"])
        .cluster(&fake, crate::support::fake_api::Role::ReadOnly)
        .run()
        .code(3)
        .one_line_error()
        .stderr_has("is no Rancher URL (https://<rancher>/k8s/clusters/<id>)");
}

/// The snapshot commands compare with Rancher as `check` does: the same flags, the same
/// refusals, the same Rancher findings.
#[test]
fn snapshots_list_and_diff_compare_with_rancher_as_check_does() {
    let from_check = rancher_codes(&check(&[&rancher("2.11")], &["-o", "json"]).json());
    assert!(!from_check.is_empty());
    for action in ["diff", "list"] {
        let out = k3sdoctor([
            "--from-file",
            &split(),
            "snapshots",
            action,
            "--rancher-from-file",
            &rancher("2.11"),
            "-o",
            "json",
        ])
        .run();
        let mut codes = rancher_codes(&out.code(1).json());
        codes.sort();
        codes.dedup();
        let mut expected = from_check.clone();
        expected.sort();
        expected.dedup();
        assert_eq!(codes, expected, "snapshots {action}");
        k3sdoctor(["snapshots", action, "--rancher-from-file", &rancher("2.11")])
            .run()
            .code(2)
            .one_line_error()
            .stderr_has("--rancher-from-file is read beside a downstream dump");
        k3sdoctor([
            "--from-file",
            &split(),
            "snapshots",
            action,
            "--rancher-cluster",
            "prod",
        ])
        .run()
        .code(2)
        .one_line_error()
        .stderr_has("--rancher-cluster picks a cluster of a Rancher dump");
    }
}

/// Rancher 2.10 and earlier keep a record whose snapshot was deleted long ago: it is named as
/// gone, with the delete that removes it, and never offered a backfill (which cannot write it).
#[test]
fn rancher_2_10_records_of_deleted_snapshots_are_gone_not_size_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let extra = dir.path().join("deleted.yaml");
    std::fs::write(
        &extra,
        r#"apiVersion: rke.cattle.io/v1
kind: ETCDSnapshot
metadata:
  name: prod-etcd-snapshot-prod-k3s-1-1700000000-local
  namespace: fleet-default
  creationTimestamp: "2023-11-14T22:13:20Z"
  labels: {rke.cattle.io/cluster-name: prod, rke.cattle.io/node-name: prod-k3s-1}
  annotations:
    etcdsnapshot.rke.io/storage: local
    etcdsnapshot.rke.io/snapshot-file-name: etcd-snapshot-prod-k3s-1-1700000000
spec: {clusterName: prod}
snapshotFile:
  name: etcd-snapshot-prod-k3s-1-1700000000
  nodeName: prod-k3s-1
  location: file:///var/lib/rancher/k3s/server/db/snapshots/etcd-snapshot-prod-k3s-1-1700000000
  createdAt: "2023-11-14T22:13:20Z"
  size: 24703008
  status: successful
status: {missing: true}
"#,
    )
    .unwrap();
    let report: Value = check(
        &[&rancher("2.10"), extra.to_str().unwrap()],
        &["-o", "json"],
    )
    .json();
    let all = findings(&report);
    let gone = all
        .iter()
        .find(|(_, f)| f["code"] == "rancher-snapshot-orphaned")
        .map(|(_, f)| f)
        .unwrap_or_else(|| panic!("{:#}", report["findings"]));
    assert!(
        gone["message"]
            .as_str()
            .unwrap()
            .contains("prod-etcd-snapshot-prod-k3s-1-1700000000-local"),
        "{gone:#}"
    );
    assert!(
        !gone["remediation"]
            .as_str()
            .unwrap()
            .contains("backfill --fix")
    );
    for (_, f) in all
        .iter()
        .filter(|(_, f)| f["code"] == "rancher-snapshot-size-unknown")
    {
        assert!(
            !f["message"].as_str().unwrap().contains("1700000000"),
            "{f:#}"
        );
    }
}
