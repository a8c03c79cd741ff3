//! The `snapshot-files` check on a real kube-apiserver with simulated 1.33 servers: k3ssim's
//! own reconcile sweeps a removed node's files and its controller finishes deletions (no
//! finding), a restart with another `--token-hash` rotates the token, and what the simulator
//! cannot produce (failed snapshots, S3 objects, a deletion nobody finishes) is written by
//! the admin as k3s writes it — status inside the object, as the CRD has no status
//! subresource.

use serde_json::{Value, json};

use crate::common::run_as;
use crate::support::envtest::servers::{SimCluster, TRANSITION};
use crate::support::envtest::{EnvTest, User};
use crate::support::report_checks::check_run;
use crate::support::wait::wait_for;

const V: &str = "v1.33.4+k3s1";
const FILES: &str = "/apis/k3s.cattle.io/v1/etcdsnapshotfiles";
const FINALIZER: &str = "wrangler.cattle.io/managed-etcd-snapshots-controller";

fn rfc3339(t: jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

fn check(env: &EnvTest, extra: &[&str]) -> Value {
    let mut args = vec!["check", "-o", "json", "--fail-on", "never"];
    args.extend_from_slice(extra);
    run_as(env, User::Admin, &args).code(0).json()
}

fn findings<'a>(report: &'a Value, code: &str) -> Vec<&'a Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| std::iter::once(f).chain(f["children"].as_array().into_iter().flatten()))
        .filter(|f| f["code"] == code)
        .collect()
}

const FILE_CODES: [&str; 5] = [
    "snapshot-failed",
    "snapshot-deletion-stuck",
    "snapshot-file-of-removed-node",
    "snapshot-token-rotated",
    "snapshot-s3-foreign",
];

fn local_file(node: &str, unix: i64) -> Value {
    let file = format!("etcd-snapshot-{node}-{unix}");
    json!({
        "apiVersion": "k3s.cattle.io/v1", "kind": "ETCDSnapshotFile",
        "metadata": {"name": format!("local-{file}-abc123"),
                     "labels": {"etcd.k3s.cattle.io/snapshot-storage-node": node}},
        "spec": {"snapshotName": file, "nodeName": node,
                 "location": format!("file:///var/lib/rancher/k3s/server/db/snapshots/{file}")},
        "status": {"readyToUse": true, "size": "6160230",
                   "creationTime": rfc3339(jiff::Timestamp::from_second(unix).unwrap())}
    })
}

fn s3_file(node: &str, unix: i64) -> Value {
    let file = format!("etcd-snapshot-{node}-{unix}");
    json!({
        "apiVersion": "k3s.cattle.io/v1", "kind": "ETCDSnapshotFile",
        "metadata": {"name": format!("s3-{file}-def456"),
                     "labels": {"etcd.k3s.cattle.io/snapshot-storage-node": "s3"},
                     "finalizers": [FINALIZER]},
        "spec": {"snapshotName": file, "nodeName": node, "location": format!("s3://shared/k3s/{file}"),
                 "s3": {"bucket": "shared", "prefix": "k3s", "endpoint": "s3.amazonaws.com"}},
        "status": {"readyToUse": true, "size": "6160230",
                   "creationTime": rfc3339(jiff::Timestamp::from_second(unix).unwrap())}
    })
}

#[test]
fn real_snapshot_file_findings_fire_and_stay_quiet_as_k3s_behaves() {
    let Some(env) =
        EnvTest::start("real_snapshot_file_findings_fire_and_stay_quiet_as_k3s_behaves")
    else {
        return;
    };
    let cluster = SimCluster::start(&env, "k3s", V, 2, &[]);
    let admin = env.admin();
    let nodes: Vec<String> = cluster.servers.iter().map(|s| s.node.clone()).collect();
    assert!(wait_for(TRANSITION, || {
        let files = admin.snapshot_files();
        nodes
            .iter()
            .all(|n| files.iter().any(|f| f["spec"]["nodeName"] == n.as_str()))
    }));

    // Healthy: the check runs and none of its codes fires.
    let healthy = check(&env, &[]);
    let run = check_run(&healthy, "snapshot-files").clone();
    assert_eq!(run["ran"], true, "{run}");
    for code in FILE_CODES {
        assert!(findings(&healthy, code).is_empty(), "{code}: {healthy:#}");
    }

    // A removed node's file: the simulator's reconcile deletes it, as k3s's does.
    let now = jiff::Timestamp::now().as_second();
    admin.create(FILES, &local_file("ip-10-0-0-99", now - 3600));
    assert!(
        wait_for(TRANSITION, || admin
            .get(&format!(
                "{FILES}/local-etcd-snapshot-ip-10-0-0-99-{}-abc123",
                now - 3600
            ))
            .is_none()),
        "the reconcile did not sweep the removed node's file"
    );
    // A deletion with a live controller: the -etcd leader removes its finalizer at once.
    let mut held = local_file(&nodes[0], now - 7200);
    held["metadata"]["finalizers"] = json!([FINALIZER]);
    held["metadata"]["name"] = json!("local-held-by-the-controller");
    admin.create(FILES, &held);
    admin
        .request(
            "DELETE",
            &format!("{FILES}/local-held-by-the-controller"),
            "application/json",
            None,
        )
        .unwrap();
    assert!(
        wait_for(TRANSITION, || admin
            .get(&format!("{FILES}/local-held-by-the-controller"))
            .is_none()),
        "the controller did not finish the deletion"
    );

    // Rotate the token on server-2: its next snapshots carry the new hash.
    env.stop_sim("server-2");
    let s2 = &cluster.servers[1];
    let flags: Vec<String> = [
        "--node-name",
        &s2.node,
        "--internal-ip",
        &s2.internal_ip,
        "--program",
        "k3s",
        "--version",
        V,
        "--snapshot-interval",
        "20s",
        "--snapshot-retention",
        "100",
        "--token-hash",
        "bbbbbbbbbbbb",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    env.start_sim("server-2", &flags)
        .expect("server-2 restarts");
    assert!(wait_for(TRANSITION, || admin.snapshot_files().iter().any(
        |f| {
            f["metadata"]["annotations"]["etcd.k3s.cattle.io/snapshot-token-hash"] == "bbbbbbbbbbbb"
        }
    )));
    let rotated = check(&env, &[]);
    let token = findings(&rotated, "snapshot-token-rotated");
    assert_eq!(token.len(), 1, "{rotated:#}");
    assert_eq!(token[0]["severity"], "info");
    let message = token[0]["message"].as_str().unwrap();
    assert!(
        message.contains("bbbbbbbbbbbb") && message.contains("37831a857fac"),
        "{message}"
    );

    // From here nothing reconciles: both servers stop (their Nodes stay, as without a node
    // lifecycle controller).
    env.stop_sim("server-1");
    env.stop_sim("server-2");
    let now = jiff::Timestamp::now();
    let unix = now.as_second();
    let error_time = rfc3339(now - jiff::SignedDuration::from_secs(60));
    admin.create(FILES, &json!({
        "apiVersion": "k3s.cattle.io/v1", "kind": "ETCDSnapshotFile",
        "metadata": {"name": format!("local-etcd-snapshot-{}-{unix}-f00d00", nodes[0]),
                     "labels": {"etcd.k3s.cattle.io/snapshot-storage-node": nodes[0]}},
        "spec": {"snapshotName": format!("etcd-snapshot-{}-{unix}", nodes[0]), "nodeName": nodes[0], "location": ""},
        "status": {"readyToUse": false, "size": "0", "creationTime": error_time,
                   "error": {"time": error_time, "message": "context deadline exceeded"}}
    }));
    admin.create(FILES, &s3_file(&nodes[0], unix - 600));
    admin.create(FILES, &s3_file("other-cluster-node", unix - 600));
    let orphan = local_file("ip-10-0-0-99", unix - 3600);
    let orphan_name = orphan["metadata"]["name"].as_str().unwrap().to_string();
    admin.create(FILES, &orphan);
    let mut stuck = local_file(&nodes[1], unix - 7200);
    stuck["metadata"]["finalizers"] = json!(["example.com/keep", FINALIZER]);
    stuck["metadata"]["name"] = json!("local-stuck");
    admin.create(FILES, &stuck);
    admin
        .request(
            "DELETE",
            &format!("{FILES}/local-stuck"),
            "application/json",
            None,
        )
        .unwrap();

    let later = rfc3339(now + jiff::SignedDuration::from_mins(6));
    let report = check(&env, &[]);
    let failed = findings(&report, "snapshot-failed");
    assert_eq!(failed.len(), 1, "{report:#}");
    let message = failed[0]["message"].as_str().unwrap();
    assert!(
        message.contains(&nodes[0]) && message.contains("context deadline exceeded"),
        "{message}"
    );
    let foreign = findings(&report, "snapshot-s3-foreign");
    assert_eq!(foreign.len(), 1);
    assert_eq!(
        foreign[0]["objectRefs"].as_array().unwrap().len(),
        1,
        "only the other cluster's"
    );
    assert!(
        findings(&report, "snapshot-deletion-stuck").is_empty(),
        "within 5 minutes"
    );
    // Created after the newest reconcile: the next one judges it.
    assert!(findings(&report, "snapshot-file-of-removed-node").is_empty());

    // A reconcile that ran and left it (as when the sweep fails): now it is reported.
    admin.merge_patch(
        &format!("/api/v1/nodes/{}", nodes[0]),
        &json!({"metadata": {"annotations": {"etcd.k3s.cattle.io/local-snapshots-timestamp": rfc3339(jiff::Timestamp::now() + jiff::SignedDuration::from_secs(1))}}}),
    );
    let report = check(&env, &["--now", &later]);
    let left = findings(&report, "snapshot-file-of-removed-node");
    assert_eq!(left.len(), 1, "{report:#}");
    let stuck = findings(&report, "snapshot-deletion-stuck");
    assert_eq!(stuck.len(), 1, "{report:#}");
    assert!(
        stuck[0]["message"]
            .as_str()
            .unwrap()
            .contains("no fresh holder")
    );

    // The commands the findings give, run as they are: the finalizer patch removes exactly
    // k3s's finalizer (the other one stays), the delete removes the orphan.
    let argv: Vec<String> = serde_json::from_value(stuck[0]["remediationCommand"].clone()).unwrap();
    assert_eq!(
        argv[..4],
        [
            "kubectl",
            "patch",
            "etcdsnapshotfiles.k3s.cattle.io",
            "local-stuck"
        ]
    );
    let patch: Value = serde_json::from_str(&argv[6]).unwrap();
    admin
        .request(
            "PATCH",
            &format!("{FILES}/local-stuck"),
            "application/json-patch+json",
            Some(&patch),
        )
        .expect("the patch applies");
    let kept = admin
        .get(&format!("{FILES}/local-stuck"))
        .expect("the other finalizer keeps it");
    assert_eq!(kept["metadata"]["finalizers"], json!(["example.com/keep"]));
    let argv: Vec<String> = serde_json::from_value(left[0]["remediationCommand"].clone()).unwrap();
    assert_eq!(
        argv[..3],
        ["kubectl", "delete", "etcdsnapshotfiles.k3s.cattle.io"]
    );
    for name in &argv[3..] {
        admin
            .request(
                "DELETE",
                &format!("{FILES}/{name}"),
                "application/json",
                None,
            )
            .unwrap();
    }
    assert!(admin.get(&format!("{FILES}/{orphan_name}")).is_none());
    let report = check(&env, &["--now", &later]);
    assert!(
        findings(&report, "snapshot-deletion-stuck").is_empty(),
        "{report:#}"
    );
    assert!(findings(&report, "snapshot-file-of-removed-node").is_empty());

    // The list: what `k3s etcd-snapshot ls` shows and more, and its filters.
    let list: Value = run_as(
        &env,
        User::Admin,
        &[
            "snapshots",
            "list",
            "-o",
            "json",
            "--fail-on",
            "never",
            "--failed",
        ],
    )
    .code(0)
    .json();
    let rows = list["snapshots"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{list:#}");
    assert_eq!(
        (rows[0]["fileState"].as_str(), rows[0]["node"].as_str()),
        (Some("failed"), Some(nodes[0].as_str()))
    );
    let s3: Value = run_as(
        &env,
        User::Admin,
        &[
            "snapshots",
            "list",
            "-o",
            "json",
            "--fail-on",
            "never",
            "--storage",
            "s3",
        ],
    )
    .code(0)
    .json();
    assert_eq!(s3["snapshots"].as_array().unwrap().len(), 2);
    let node2: Value = run_as(
        &env,
        User::Admin,
        &[
            "snapshots",
            "list",
            "-o",
            "json",
            "--fail-on",
            "never",
            "--node",
            &nodes[1],
            "--storage",
            "local",
        ],
    )
    .code(0)
    .json();
    let rows = node2["snapshots"].as_array().unwrap();
    assert!(!rows.is_empty());
    assert!(
        rows.iter()
            .all(|r| r["node"] == nodes[1].as_str() && r["storage"] == "local")
    );
    assert!(
        rows.iter().any(|r| r["tokenHash"] == "bbbbbbbbbbbb"),
        "{node2:#}"
    );
    assert!(rows.iter().any(|r| r["fileState"] == "terminating"));
}
