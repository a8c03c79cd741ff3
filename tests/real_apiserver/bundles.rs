//! Issue 21 on the real API server: a support bundle made of what the real server answers
//! (its `LeaseList`s without item kinds, its CR lists) reads to the same verdict as the live
//! read of the same cluster. The objects are written by the admin client; no simulator runs.

use serde_json::{Value, json};

use crate::common::run_as;
use crate::support::bundles::{Bundle, TROUBLESHOOT_TOP, gzip};
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
