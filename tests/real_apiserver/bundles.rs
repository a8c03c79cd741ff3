//! Support bundles on the real API server: a support bundle made of what the real server answers
//! (its `LeaseList`s without item kinds, its CR lists) reads to the same verdict as the live
//! read of the same cluster. The objects are written by the admin client; no simulator runs.

use serde_json::{Value, json};

use crate::common::run_as;
use crate::support::bundles::{Bundle, SBK_TOP, TROUBLESHOOT_TOP, gzip, sbk_list};
use crate::support::envtest::{EnvTest, User};
use crate::support::harness::k3sdoctor;
use crate::support::objects::{NOW, lease, server, snapshot_cr};

const V: &str = "v1.29.4+k3s1";
const NODES: &str = "/api/v1/nodes";
const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";
const CONFIGMAPS: &str = "/api/v1/namespaces/kube-system/configmaps";
const SNAPSHOTS: &str = "/apis/k3s.cattle.io/v1/etcdsnapshotfiles";

fn verdict(out: &crate::support::harness::Output) -> Value {
    let mut report: Value = out.json();
    report.as_object_mut().unwrap().remove("readFrom");
    report
}

#[test]
fn real_a_bundle_of_the_servers_own_lists_reads_like_the_live_cluster() {
    let Some(env) =
        EnvTest::start("real_a_bundle_of_the_servers_own_lists_reads_like_the_live_cluster")
    else {
        return;
    };
    let admin = env.admin();
    admin.create(NODES, &server("s1", V));
    admin.create(NODES, &server("s2", V));
    admin.create(LEASES, &lease("k3s", "s1", 1));
    admin.create(LEASES, &lease("k3s-etcd", "s2", 1));
    admin.create(SNAPSHOTS, &snapshot_cr("s2", 1_717_150_000, true));
    // The server's own answers, as troubleshoot saves them: Lists per namespace, the CRs as a
    // bare array.
    let items = |path: &str| admin.get(path).unwrap()["items"].clone();
    let bundle = Bundle::default()
        .json("cluster-resources/nodes.json", &admin.get(NODES).unwrap())
        .json(
            "cluster-resources/leases/kube-system.json",
            &admin.get(LEASES).unwrap(),
        )
        .json(
            "cluster-resources/configmaps/kube-system.json",
            &admin.get(CONFIGMAPS).unwrap(),
        )
        .json(
            "cluster-resources/custom-resources/etcdsnapshotfiles.k3s.cattle.io.json",
            &items(SNAPSHOTS),
        )
        .under(TROUBLESHOOT_TOP);
    let path = env.scratch().join("bundle.tar.gz");
    std::fs::write(&path, gzip(&bundle.tar())).unwrap();
    for command in [&["leases"][..], &["snapshots", "list"]] {
        let args = [command, &["-o", "json", "--now", NOW]].concat();
        let live = run_as(&env, User::Admin, &args);
        let offline = k3sdoctor(args.iter().copied())
            .args(&["--from-file", &path.display().to_string()])
            .run();
        assert_eq!(live.code, offline.code, "{command:?}: {}", offline.stderr);
        assert_eq!(verdict(&live), verdict(&offline), "{command:?}");
    }
    let out = k3sdoctor([
        "leases",
        "-o",
        "json",
        "--from-file",
        &path.display().to_string(),
    ])
    .run();
    let report: Value = out.json();
    assert_eq!(
        report["now"],
        json!({"time": "2024-05-31T12:10:45Z", "source": "bundle-collection-time"})
    );
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["code"] == "lease-split")
    );
}

/// support-bundle-kit's `"null"` rewrite applied to the real server's objects (managedFields,
/// timestamps, a released lock's empty holder): the same verdict as live, the released lock
/// released.
#[test]
fn real_support_bundle_kit_nulls_over_the_servers_objects_read_like_live() {
    let Some(env) =
        EnvTest::start("real_support_bundle_kit_nulls_over_the_servers_objects_read_like_live")
    else {
        return;
    };
    let admin = env.admin();
    admin.create(NODES, &server("s1", V));
    admin.create(NODES, &server("s2", V));
    admin.create(LEASES, &lease("k3s", "s1", 1));
    let mut released = lease("k3s-etcd", "", 1);
    released["spec"]["holderIdentity"] = json!("");
    admin.create(LEASES, &released);
    let items = |path: &str| -> Vec<Value> {
        admin.get(path).unwrap()["items"]
            .as_array()
            .unwrap()
            .clone()
    };
    let bundle = Bundle::default()
        .file(
            "yamls/cluster/v1/nodes.yaml",
            sbk_list(&items(NODES), "v1", "Node"),
        )
        .file(
            "yamls/namespaced/kube-system/coordination.k8s.io/v1/leases.yaml",
            sbk_list(&items(LEASES), "coordination.k8s.io/v1", "Lease"),
        )
        .file(
            "yamls/namespaced/kube-system/v1/configmaps.yaml",
            sbk_list(&items(CONFIGMAPS), "v1", "ConfigMap"),
        )
        .under(SBK_TOP);
    let path = env.scratch().join("supportbundle.zip");
    std::fs::write(&path, bundle.zip()).unwrap();
    let args = ["leases", "-o", "json", "--now", NOW];
    let live = run_as(&env, User::Admin, &args);
    let offline = k3sdoctor(args)
        .args(&["--from-file", &path.display().to_string()])
        .run();
    assert_eq!(live.code, offline.code, "{}", offline.stderr);
    assert_eq!(verdict(&live), verdict(&offline));
    let report = verdict(&offline);
    let etcd = report["locks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "k3s-etcd")
        .unwrap();
    assert_eq!(etcd["state"], "released", "{etcd}");
}
