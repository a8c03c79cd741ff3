//! Each collector's layout and quirks: the same verdicts as the dump, and an honest "not
//! checked" for what the bundle does not hold.

use serde_json::Value;

use super::{NOW, assert_same_as_dump, run, troubleshoot_tgz, verdict, write};
use crate::support::bundles::{
    self, Bundle, RANCHER_TOP, SBK_TOP, TROUBLESHOOT_TOP, split_cluster,
};
use crate::support::harness::k3sdoctor;
use crate::support::report_checks::check_run;

#[test]
fn a_troubleshoot_bundle_reads_to_the_dumps_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = troubleshoot_tgz(&dir, "bundle.tar.gz");
    for command in [
        &["check"][..],
        &["leases"],
        &["snapshots", "list"],
        &["snapshots", "diff"],
    ] {
        assert_same_as_dump(command, &bundle);
    }
    let out = run(&["check", "-o", "json", "--now", NOW], &bundle);
    let report: Value = out.json();
    let read = &report["readFrom"][0];
    assert_eq!(read["collector"], "troubleshoot");
    assert_eq!(read["container"], "gzip tar");
    assert_eq!(read["collectedAt"], "2024-05-31T12:10:45Z");
    let files: Vec<&str> = read["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(
        files.contains(
            &format!("{TROUBLESHOOT_TOP}/cluster-resources/leases/kube-system.json").as_str()
        ),
        "{files:?}"
    );
    // The `.yaml` twin is a link to the `.json`: read once, from the `.json`.
    assert!(
        files
            .iter()
            .any(|f| f.ends_with("etcdsnapshotfiles.k3s.cattle.io.json"))
    );
    assert!(
        !files
            .iter()
            .any(|f| f.ends_with("etcdsnapshotfiles.k3s.cattle.io.yaml"))
    );
    let leases = read["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| {
            f["path"]
                .as_str()
                .unwrap()
                .ends_with("leases/kube-system.json")
        })
        .unwrap();
    assert_eq!(leases["feeds"], serde_json::json!(["leases"]));
    assert_eq!(leases["objects"]["Lease"], 8);
    out.stderr_has(
        "ignored the link support-bundle-2024-05-31T12_10_45/cluster-resources/secrets.json",
    )
    .stderr_has("outside the bundle");
}

#[test]
fn an_unpacked_troubleshoot_bundle_reads_like_the_archive() {
    let dir = tempfile::tempdir().unwrap();
    bundles::troubleshoot(&split_cluster()).unpack(dir.path());
    let folder = dir.path().join(TROUBLESHOOT_TOP).display().to_string();
    let out = assert_same_as_dump(&["check"], &folder);
    let report: Value = out.json();
    assert_eq!(report["readFrom"][0]["container"], "folder");
    assert_eq!(report["readFrom"][0]["collectedAt"], "2024-05-31T12:10:45Z");
}

#[test]
fn now_is_the_bundles_collection_time_and_the_report_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = troubleshoot_tgz(&dir, "b");
    let out = run(&["leases", "-o", "json"], &bundle);
    let report: Value = out.json();
    assert_eq!(report["now"]["time"], "2024-05-31T12:10:45Z");
    assert_eq!(report["now"]["source"], "bundle-collection-time");
    out.stderr_has(
        "when the support bundle was collected (folder name support-bundle-2024-05-31T12_10_45)",
    );
    let table = run(&["leases"], &bundle);
    table
        .code(1)
        .stderr_has("lease-split")
        .stderr_has("note: read a troubleshoot (kubectl support-bundle) bundle (gzip tar)");
    // -v lists each file and what it fed.
    k3sdoctor(["leases", "-v", "--from-file", &bundle])
        .run()
        .stderr_has(&format!(
            "read {TROUBLESHOOT_TOP}/cluster-resources/leases/kube-system.json (8 Lease) for leases"
        ));
}

#[test]
fn troubleshoot_errors_files_say_which_kind_could_not_be_collected() {
    let objects = split_cluster();
    let bundle = Bundle::default()
        .json("cluster-resources/nodes.json", &serde_json::json!({"kind": "NodeList", "apiVersion": "v1", "items": objects.nodes}))
        // Keyed by namespace, as troubleshoot's marshalErrors writes a map.
        .json("cluster-resources/leases-errors.json", &serde_json::json!({"kube-system": "leases.coordination.k8s.io is forbidden: User \"support\" cannot list resource \"leases\""}))
        .json("cluster-resources/configmaps-errors.json", &serde_json::json!({"kube-system": "configmaps is forbidden"}))
        .under(TROUBLESHOOT_TOP);
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "bundle.tgz", &bundles::gzip(&bundle.tar()));
    let out = run(&["check", "-o", "json", "--now", NOW], &path);
    let report: Value = out.json();
    let messages: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "dump-incomplete")
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("cluster-resources/leases/kube-system.json")
                && m.contains("cannot list resource")),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|m| m.contains("etcdsnapshotfiles")
            && m.contains("snapshot ConfigMap was not compared")),
        "{messages:?}"
    );
    let snapshots = check_run(&report, "snapshots");
    assert_eq!(snapshots["ran"], false);
    assert_eq!(
        report["readFrom"][0]["notCollected"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    // `leases` has nothing to judge: exit 3 as for an empty dump.
    run(&["leases"], &path).code(3).one_line_error();
}

#[test]
fn a_bundle_with_nothing_k3sdoctor_checks_exits_3() {
    let bundle = Bundle::default()
        .json(
            "cluster-resources/nodes-errors.json",
            &serde_json::json!(["nodes is forbidden"]),
        )
        .json(
            "cluster-resources/leases-errors.json",
            &serde_json::json!({"kube-system": "leases is forbidden"}),
        )
        .under(TROUBLESHOOT_TOP);
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "bundle.tgz", &bundles::gzip(&bundle.tar()));
    run(&["check"], &path).code(3).one_line_error();
}

#[test]
fn support_bundle_kit_null_strings_are_empty_values() {
    let mut objects = split_cluster();
    // A released lock: k3s clears the holder on a clean shutdown; the kit writes "null".
    let etcd = objects
        .leases
        .iter_mut()
        .find(|l| l["metadata"]["name"] == "k3s-etcd")
        .unwrap();
    etcd["spec"]["holderIdentity"] = Value::String(String::new());
    let dir = tempfile::tempdir().unwrap();
    let bundle = write(&dir, "sb.zip", &bundles::support_bundle_kit(&objects).zip());
    let dump = dir.path().join("dump.yaml");
    let all: Vec<Value> = [
        &objects.nodes,
        &objects.leases,
        &objects.configmaps,
        &objects.snapshot_files,
    ]
    .into_iter()
    .flatten()
    .cloned()
    .collect();
    crate::support::objects::write_dump(&dump, &all);
    for command in ["check", "leases"] {
        let expected = run(
            &[command, "-o", "json", "--now", NOW],
            &dump.display().to_string(),
        );
        let out = run(&[command, "-o", "json", "--now", NOW], &bundle);
        assert_eq!(out.code, expected.code, "{}", out.stderr);
        assert_eq!(verdict(&out), verdict(&expected), "{command}");
        assert!(
            !out.stdout.contains("\"null\""),
            "a \"null\" string survived:\n{}",
            out.stdout
        );
    }
    let report: Value = run(&["leases", "-o", "json", "--now", NOW], &bundle).json();
    assert_eq!(report["readFrom"][0]["collector"], "support-bundle-kit");
    assert_eq!(report["readFrom"][0]["container"], "zip");
    assert_eq!(report["readFrom"][0]["collectedAt"], "2024-05-31T12:10:45Z");
    let lock = report["locks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "k3s-etcd")
        .unwrap();
    assert_eq!(lock["state"], "released", "{lock}");
    assert_ne!(lock["holder"], "null");
    assert!(SBK_TOP.ends_with('Z'));
}

#[test]
fn the_rancher_collectors_holder_table_shows_the_split_but_not_freshness() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = write(
        &dir,
        "prod-k3s-1.tar.gz",
        &bundles::gzip(&bundles::rancher(&split_cluster(), "k3s").tar()),
    );
    let out = run(&["check", "-o", "json"], &bundle);
    out.code(1);
    let report: Value = out.json();
    let codes: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"lease-split"), "{codes:?}");
    let messages: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("k3s/kubectl/leases names each lock's holder only")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m
                .contains("ETCDSnapshotFiles (the Rancher logs collector does not collect them)")),
        "{messages:?}"
    );
    // Nothing was judged expired or fresh: no renew time was shown.
    assert!(!codes.contains(&"lease-expired"), "{codes:?}");
    let snapshots = check_run(&report, "snapshots");
    assert_eq!(snapshots["ran"], false);
    assert_eq!(report["readFrom"][0]["collector"], "rancher-logs-collector");
    assert_eq!(report["now"]["time"], "2024-05-31T12:10:45Z");
    out.stderr_has("etcd had 3 member(s) when the bundle was collected (etcd/memberlist.json)")
        .stderr_has("the node's local time read as UTC");
    // A lock nobody holds in the table is released, not held by a node called "<none>".
    let leases: Value = run(&["leases", "-o", "json"], &bundle).json();
    assert!(
        leases["locks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["renewTime"].is_null())
    );
    assert!(RANCHER_TOP.starts_with("prod-k3s-1-"));
    // `snapshots list` has nothing it could run on: exit 3, naming why.
    run(&["snapshots", "list"], &bundle)
        .code(3)
        .one_line_error()
        .stderr_has("the support bundle")
        .stderr_has("the Rancher logs collector does not collect them");
}

#[test]
fn rke2s_etcdctl_member_list_is_read_too() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = write(
        &dir,
        "node.tar.gz",
        &bundles::gzip(&bundles::rancher(&split_cluster(), "rke2").tar()),
    );
    run(&["check"], &bundle).stderr_has(
        "etcd had 1 member(s) when the bundle was collected (etcd/memberlist): prod-k3s-1-0f1e2d3c",
    );
}

#[test]
fn supportconfig_holds_the_rancher_tree_in_a_tar_xz() {
    let tree = bundles::rancher(&split_cluster(), "k3s")
        .under("rancher2_logs_collector")
        .file(
            "basic-environment.txt",
            "SUSE Linux Enterprise Server 15 SP5\n",
        )
        .under("scc_prod-k3s-1_240531_1210");
    let dir = tempfile::tempdir().unwrap();
    let bundle = write(
        &dir,
        "scc_prod-k3s-1_240531_1210.txz",
        &bundles::xz(&tree.tar()),
    );
    let out = run(&["leases", "-o", "json"], &bundle);
    out.code(1);
    let report: Value = out.json();
    assert_eq!(report["readFrom"][0]["collector"], "supportconfig");
    assert_eq!(report["readFrom"][0]["container"], "xz tar");
}

/// The same objects served live by the fake API server and read from a troubleshoot bundle
/// give the same `leases` report.
#[test]
fn a_troubleshoot_bundle_reads_like_the_live_cluster() {
    use crate::support::fake_api::{FakeApi, Role};
    let objects = split_cluster();
    let fake = FakeApi::start();
    for o in [
        &objects.nodes,
        &objects.leases,
        &objects.configmaps,
        &objects.snapshot_files,
    ]
    .into_iter()
    .flatten()
    {
        fake.put(o.clone());
    }
    let live = k3sdoctor(["leases", "-o", "json", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    let dir = tempfile::tempdir().unwrap();
    let bundle = write(
        &dir,
        "b.tgz",
        &bundles::gzip(&bundles::troubleshoot(&objects).tar()),
    );
    let offline = run(&["leases", "-o", "json", "--now", NOW], &bundle);
    assert_eq!(live.code, offline.code, "{}", offline.stderr);
    assert_eq!(verdict(&live), verdict(&offline));
}

/// troubleshoot writes no file for a custom resource without objects: its CRD list tells
/// "none yet" (the snapshot checks run on zero files) from "no CRD" (as live: not served).
#[test]
fn troubleshoots_crd_list_tells_no_snapshots_from_no_crd() {
    let objects = split_cluster();
    let base = |crds: serde_json::Value| {
        Bundle::default()
            .json("cluster-resources/nodes.json", &serde_json::json!({"kind": "NodeList", "apiVersion": "v1", "items": objects.nodes}))
            .json("cluster-resources/leases/kube-system.json", &serde_json::json!({"kind": "LeaseList", "apiVersion": "coordination.k8s.io/v1", "items": objects.leases}))
            .json("cluster-resources/configmaps/kube-system.json", &serde_json::json!({"kind": "ConfigMapList", "apiVersion": "v1", "items": objects.configmaps}))
            .json("cluster-resources/custom-resource-definitions.json", &crds)
            .under(TROUBLESHOOT_TOP)
    };
    let dir = tempfile::tempdir().unwrap();
    let with_crd = base(
        serde_json::json!({"kind": "CustomResourceDefinitionList", "items": [{"metadata": {"name": "etcdsnapshotfiles.k3s.cattle.io"}}]}),
    );
    let path = write(&dir, "with-crd.tgz", &bundles::gzip(&with_crd.tar()));
    let report: Value = run(&["check", "-o", "json", "--now", NOW], &path).json();
    let snapshots = check_run(&report, "snapshots");
    assert_eq!(snapshots["ran"], true, "{report}");
    assert!(
        report["readFrom"][0]["notCollected"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let without = base(
        serde_json::json!({"kind": "CustomResourceDefinitionList", "items": [{"metadata": {"name": "addons.k3s.cattle.io"}}]}),
    );
    let path = write(&dir, "no-crd.tgz", &bundles::gzip(&without.tar()));
    let report: Value = run(&["check", "-o", "json", "--now", NOW], &path).json();
    let snapshots = check_run(&report, "snapshots");
    assert_eq!(snapshots["ran"], false);
    assert!(
        snapshots["note"]
            .as_str()
            .unwrap()
            .contains("CRD is not installed"),
        "{snapshots}"
    );
}

/// A k3s v1.21 cluster's Rancher collector run, with only the lease table
/// (no nodes.json). On 1.23 and older the `k3s` lock is a ConfigMap annotation, which a
/// Lease table cannot show, and nothing tells the version: the lock is not judged, never
/// `lease-missing`.
#[test]
fn a_lease_table_without_versions_does_not_call_the_k3s_lock_missing() {
    let table = "NAMESPACE         NAME                      HOLDER                                                AGE\n\
                 kube-node-lease   ip-172-31-5-10            ip-172-31-5-10                                        41d\n\
                 kube-system       kube-controller-manager   ip-172-31-5-10_8d1d3a1e-2f7c-4f55-9a4b-1c2d3e4f5a6b   41d\n\
                 kube-system       kube-scheduler            ip-172-31-5-10_0b4f6c2d-77a1-4e0e-b1c3-9f8e7d6c5b4a   41d\n";
    let bundle = Bundle::default()
        .file("k3s/kubectl/leases", table)
        .file(
            "k3s/kubectl/configmaps",
            "NAMESPACE     NAME        DATA   AGE\nkube-system   coredns     2      41d\n",
        )
        .file(
            "journald/k3s",
            "May 31 12:10:40 ip-172-31-5-10 k3s[1]: level=info\n",
        )
        .under(RANCHER_TOP);
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "v121.tar.gz", &bundles::gzip(&bundle.tar()));
    let out = run(&["check", "-o", "json"], &path);
    out.code(0);
    let report: Value = out.json();
    let findings = report["findings"].as_array().unwrap();
    assert!(
        findings
            .iter()
            .all(|f| f["code"] != "lease-missing" && f["severity"] != "error"),
        "{findings:?}"
    );
    let lock = &report["locks"][0];
    assert_eq!(lock["name"], "k3s");
    assert_eq!(lock["state"], "unknown", "{lock}");
    let presence = check_run(&report, "lock-presence");
    assert_eq!(presence["ran"], false);
    assert!(
        presence["note"].as_str().unwrap().contains("ConfigMap"),
        "{presence}"
    );
    run(&["check"], &path)
        .code(0)
        .stdout_has("k3s not judged")
        .stdout_has("not checked: lock-presence");
}

/// A collector that listed HelmCharts and Jobs in kube-system and found none wrote empty files:
/// collected and empty, so packaged-charts runs (nothing to judge) instead of "not in dump".
#[test]
fn empty_collected_chart_and_job_files_are_read_as_empty_not_missing() {
    let dir = tempfile::tempdir().unwrap();
    let top = TROUBLESHOOT_TOP;
    let bundle = bundles::troubleshoot(&split_cluster())
        .file(&format!("{top}/cluster-resources/jobs/kube-system.json"), "[]")
        .file(
            &format!("{top}/cluster-resources/custom-resources/helmcharts.helm.cattle.io/kube-system.json"),
            "[]",
        );
    let path = write(&dir, "empty-lists.tar.gz", &bundles::gzip(&bundle.tar()));
    let report: Value = run(&["check", "-o", "json", "--now", NOW], &path).json();
    let run = check_run(&report, "packaged-charts");
    assert_eq!(run["ran"], true, "{run}");
}
