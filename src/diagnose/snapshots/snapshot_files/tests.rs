use jiff::SignedDuration;
use serde_json::{Value, json};

use super::*;
use crate::diagnose::test_cluster::{TestCluster, now, snapshot_json};

const V: &str = "v1.33.4+k3s1";

fn t(secs_ago: i64) -> String {
    (now() - SignedDuration::from_secs(secs_ago))
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

fn unix(secs_ago: i64) -> i64 {
    now().as_second() - secs_ago
}

/// A local snapshot of `node` taken `secs_ago`, labelled and token-stamped as k3s does.
fn local(node: &str, secs_ago: i64, hash: &str) -> Value {
    let mut cr = snapshot_json(node, unix(secs_ago), false);
    cr["metadata"]["labels"] = json!({"etcd.k3s.cattle.io/snapshot-storage-node": node});
    if !hash.is_empty() {
        cr["metadata"]["annotations"] = json!({"etcd.k3s.cattle.io/snapshot-token-hash": hash});
    }
    cr
}

/// A failed save on `node`, `secs_ago`: no location, no size, no token hash, as k3s records it.
fn failed_local(node: &str, secs_ago: i64) -> Value {
    let mut cr = local(node, secs_ago, "");
    cr["spec"]["location"] = json!("");
    cr["status"] = json!({"readyToUse": false, "size": "0", "creationTime": t(secs_ago),
        "error": {"time": t(secs_ago), "message": "no space left on device"}});
    cr
}

/// An S3 upload by `uploader` named `file`.
fn s3(file: &str, uploader: &str, secs_ago: i64) -> Value {
    json!({
        "metadata": {"name": format!("s3-{file}-abcdef"), "creationTimestamp": t(secs_ago),
                     "labels": {"etcd.k3s.cattle.io/snapshot-storage-node": "s3"},
                     "annotations": {"etcd.k3s.cattle.io/snapshot-token-hash": "37831a857fac"},
                     "finalizers": ["wrangler.cattle.io/managed-etcd-snapshots-controller"]},
        "spec": {"snapshotName": file, "nodeName": uploader, "location": format!("s3://b/f/{file}"),
                 "s3": {"bucket": "b", "prefix": "f"}},
        "status": {"creationTime": t(secs_ago), "readyToUse": true, "size": "8417312"}
    })
}

fn reconciled(secs_ago: i64) -> Value {
    json!({"annotations": {"etcd.k3s.cattle.io/local-snapshots-timestamp": t(secs_ago)}})
}

fn cluster() -> TestCluster {
    TestCluster::k3s()
        .server_with("s1", V, reconciled(60))
        .server_with("s2", V, reconciled(60))
        .lease("k3s", "s1", 1)
        .lease("k3s-etcd", "s1", 1)
}

fn run(c: TestCluster) -> Vec<Finding> {
    let state = c.build();
    let leases = crate::diagnose::leases::analyse_leases(&state, Distro::K3s, now());
    analyse_snapshot_files(&state, Distro::K3s, now(), &leases)
}

fn of(findings: &[Finding], code: FindingCode) -> Vec<&Finding> {
    findings.iter().filter(|f| f.code == code).collect()
}

#[test]
fn a_healthy_cluster_has_no_file_findings() {
    let c = cluster()
        .snapshot_json(local("s1", 600, "37831a857fac"))
        .snapshot_json(local("s2", 600, "37831a857fac"))
        .snapshot_json(s3("etcd-snapshot-s1-1717156800", "s1", 600));
    assert_eq!(run(c), []);
}

#[test]
fn a_recent_failure_is_a_warning_naming_node_and_message() {
    let c = cluster()
        .snapshot_json(failed_local("s1", 600))
        .snapshot_json(local("s2", 600, "h"));
    let found = run(c);
    let failed = of(&found, FindingCode::SnapshotFailed);
    assert_eq!(failed.len(), 1, "{found:#?}");
    assert_eq!(failed[0].severity, Severity::Warning);
    assert!(
        failed[0].message.contains("on node s1"),
        "{}",
        failed[0].message
    );
    assert!(failed[0].message.contains("no space left on device"));
    assert_eq!(failed[0].object_refs[0].kind, "ETCDSnapshotFile");
}

#[test]
fn a_failure_is_an_error_when_every_etcd_nodes_newest_snapshot_failed() {
    let c = cluster()
        .snapshot_json(local("s1", 50_000, "h"))
        .snapshot_json(failed_local("s1", 600))
        .snapshot_json(failed_local("s2", 600));
    let found = run(c);
    let failed = of(&found, FindingCode::SnapshotFailed);
    assert_eq!(failed.len(), 2, "one per node");
    assert!(failed.iter().all(|f| f.severity == Severity::Error));
    // One node's newer success keeps it a warning.
    let c = cluster()
        .snapshot_json(failed_local("s1", 1200))
        .snapshot_json(local("s1", 600, "h"))
        .snapshot_json(failed_local("s2", 600));
    let found = run(c);
    assert!(
        of(&found, FindingCode::SnapshotFailed)
            .iter()
            .all(|f| f.severity == Severity::Warning)
    );
}

#[test]
fn a_failure_past_the_24h_error_ttl_is_not_snapshot_failed() {
    let day = 24 * 3600;
    let found = run(cluster().snapshot_json(failed_local("s1", day + 1)));
    assert_eq!(of(&found, FindingCode::SnapshotFailed).len(), 0);
    let found = run(cluster().snapshot_json(failed_local("s1", day - 1)));
    assert_eq!(of(&found, FindingCode::SnapshotFailed).len(), 1);
}

fn terminating(secs_ago: i64) -> Value {
    let mut cr = local("s1", 3600, "h");
    cr["metadata"]["deletionTimestamp"] = json!(t(secs_ago));
    cr
}

#[test]
fn a_deletion_held_past_five_minutes_is_stuck_and_says_who_should_finish_it() {
    let found = run(cluster().snapshot_json(terminating(301)));
    let stuck = of(&found, FindingCode::SnapshotDeletionStuck);
    assert_eq!(stuck.len(), 1, "{found:#?}");
    assert!(
        stuck[0].message.contains("held by s1 and fresh"),
        "{}",
        stuck[0].message
    );
    let argv = &stuck[0].remediation_command;
    assert_eq!(
        argv[..4],
        [
            "kubectl",
            "patch",
            "etcdsnapshotfiles.k3s.cattle.io",
            stuck[0].object_refs[0].name.as_str()
        ]
    );
    let patch: Value = serde_json::from_str(argv.last().unwrap()).unwrap();
    assert_eq!(patch[0]["op"], "test", "removes exactly that finalizer");
    assert_eq!(patch[1]["path"], "/metadata/finalizers/0");
    // Within the grace, or without the finalizer: not stuck.
    assert_eq!(
        of(
            &run(cluster().snapshot_json(terminating(299))),
            FindingCode::SnapshotDeletionStuck
        )
        .len(),
        0
    );
    let mut released = terminating(3000);
    released["metadata"]["finalizers"] = json!(["other/finalizer"]);
    assert_eq!(
        of(
            &run(cluster().snapshot_json(released)),
            FindingCode::SnapshotDeletionStuck
        )
        .len(),
        0
    );
}

#[test]
fn a_stuck_deletion_without_a_fresh_etcd_leader_says_nobody_removes_it() {
    let c = TestCluster::k3s()
        .server_with("s1", V, reconciled(60))
        .lease("k3s", "s1", 1)
        .lease("k3s-etcd", "gone", 600)
        .snapshot_json(terminating(600));
    let found = run(c);
    let stuck = of(&found, FindingCode::SnapshotDeletionStuck);
    assert!(
        stuck[0].message.contains("no fresh holder"),
        "{}",
        stuck[0].message
    );
}

#[test]
fn files_of_a_node_that_left_are_reported_once_a_reconcile_ran_after_them() {
    let c = cluster()
        .snapshot_json(local("gone", 3600, "h"))
        .snapshot_json(local("gone", 7200, "h"));
    let found = run(c);
    let left = of(&found, FindingCode::SnapshotFileOfRemovedNode);
    assert_eq!(left.len(), 1, "{found:#?}");
    assert_eq!(left[0].object_refs.len(), 2);
    assert!(left[0].message.contains("node gone"));
    assert_eq!(
        left[0].remediation_command[..3],
        ["kubectl", "delete", "etcdsnapshotfiles.k3s.cattle.io"]
    );
    // Created after the newest reconcile: the next one judges it.
    let found = run(cluster().snapshot_json(local("gone", 30, "h")));
    assert_eq!(of(&found, FindingCode::SnapshotFileOfRemovedNode).len(), 0);
    // No reconcile seen at all: not judged here (snapshot-reconcile-stalled's business).
    let c = TestCluster::k3s()
        .server("s1", V)
        .snapshot_json(local("gone", 3600, "h"));
    assert_eq!(of(&run(c), FindingCode::SnapshotFileOfRemovedNode).len(), 0);
    // S3 files belong to no node's disk.
    let found = run(cluster().snapshot_json(s3("etcd-snapshot-s1-1717156800", "s1", 3600)));
    assert_eq!(of(&found, FindingCode::SnapshotFileOfRemovedNode).len(), 0);
}

#[test]
fn two_token_hashes_among_ready_snapshots_name_the_newest_of_each() {
    let c = cluster()
        .snapshot_json(local("s1", 7200, "aaaaaaaaaaaa"))
        .snapshot_json(local("s1", 3600, "aaaaaaaaaaaa"))
        .snapshot_json(local("s2", 600, "bbbbbbbbbbbb"))
        .snapshot_json(local("s1", 60, ""));
    let found = run(c);
    let rotated = of(&found, FindingCode::SnapshotTokenRotated);
    assert_eq!(rotated.len(), 1);
    let f = rotated[0];
    assert_eq!(f.severity, Severity::Info);
    assert!(
        f.message.contains("the current one is bbbbbbbbbbbb"),
        "{}",
        f.message
    );
    assert!(f.message.contains(&format!(
        "aaaaaaaaaaaa: 2 snapshots, newest etcd-snapshot-s1-{}",
        unix(3600)
    )));
    assert_eq!(f.object_refs.len(), 2);
}

#[test]
fn one_hash_and_missing_hashes_are_no_rotation() {
    let mut failed = failed_local("s2", 60);
    failed["metadata"]["annotations"] =
        json!({"etcd.k3s.cattle.io/snapshot-token-hash": "cccccccccccc"});
    let c = cluster()
        .snapshot_json(local("s1", 3600, "aaaaaaaaaaaa"))
        .snapshot_json(local("s2", 600, ""))
        .snapshot_json(failed);
    assert_eq!(
        of(&run(c), FindingCode::SnapshotTokenRotated).len(),
        0,
        "failed snapshots do not count"
    );
}

#[test]
fn s3_objects_named_for_no_server_here_are_foreign() {
    let c = cluster()
        .snapshot_json(s3("etcd-snapshot-s1-1717156800", "s1", 600))
        .snapshot_json(s3("on-demand-s2-1717156800.zip", "s", 600))
        .snapshot_json(s3("etcd-snapshot-prod-a-1717156800", "prod-a", 600))
        .snapshot_json(s3("etcd-snapshot-s2-1717156800", "other-cluster-node", 600));
    let found = run(c);
    let foreign = of(&found, FindingCode::SnapshotS3Foreign);
    assert_eq!(foreign.len(), 1, "{found:#?}");
    assert!(foreign[0].message.contains("s3://b/f"));
    assert_eq!(foreign[0].object_refs.len(), 3, "{}", foreign[0].message);
    // The uploader `s3` (object metadata absent) is no sign of another cluster.
    let found = run(cluster().snapshot_json(s3("etcd-snapshot-s2-1717156800", "s3", 600)));
    assert_eq!(of(&found, FindingCode::SnapshotS3Foreign).len(), 0);
}

#[test]
fn without_nodes_or_files_the_check_does_not_run() {
    let state = cluster().without_nodes().build();
    assert!(
        missing_input(&state)
            .unwrap()
            .starts_with("Nodes were not read")
    );
    let mut state = cluster().build();
    state.snapshot_files = None;
    assert!(missing_input(&state).is_some());
    let leases = crate::diagnose::leases::analyse_leases(&state, Distro::K3s, now());
    assert!(analyse_snapshot_files(&state, Distro::K3s, now(), &leases).is_empty());
}

#[test]
fn a_deletion_stuck_behind_a_split_on_an_affected_version_hangs_under_the_split() {
    let state = TestCluster::k3s()
        .server_with("s1", "v1.29.4+k3s1", reconciled(60))
        .server_with("s2", "v1.29.4+k3s1", reconciled(60))
        .lease("k3s", "s1", 1)
        .lease("k3s-etcd", "s2", 1)
        .snapshot_json(terminating(600))
        .build();
    let check = crate::diagnose::check::analyse_check(&state, Distro::K3s, now());
    let split = check
        .findings
        .iter()
        .find(|f| f.finding.code == FindingCode::LeaseSplit)
        .expect("split");
    let stuck: Vec<&Finding> = split
        .children
        .iter()
        .filter(|c| c.code == FindingCode::SnapshotDeletionStuck)
        .collect();
    assert_eq!(stuck.len(), 1, "{:#?}", check.findings);
    assert!(stuck[0].message.contains("k3s-io/k3s#10046"));
    assert_eq!(
        stuck[0].remediation_command,
        ["k3sdoctor", "leases", "follow", "--fix"]
    );
    let run = check
        .checks
        .iter()
        .find(|c| c.name == "snapshot-files")
        .unwrap();
    assert!(run.ran);
}

#[test]
fn several_stuck_deletions_are_one_finding_listing_each_patch() {
    let mut second = local("s2", 3600, "h");
    second["metadata"]["deletionTimestamp"] = json!(t(900));
    let found = run(cluster()
        .snapshot_json(terminating(600))
        .snapshot_json(second));
    let stuck = of(&found, FindingCode::SnapshotDeletionStuck);
    assert_eq!(stuck.len(), 1);
    assert_eq!(stuck[0].object_refs.len(), 2);
    assert!(
        stuck[0].message.contains("up to 15m"),
        "{}",
        stuck[0].message
    );
    assert_eq!(stuck[0].remediation.matches("kubectl patch").count(), 2);
    assert!(
        stuck[0].remediation_command.is_empty(),
        "no one argv fixes both"
    );
}

#[test]
fn failures_of_one_node_are_one_finding_naming_the_newest() {
    let found = run(cluster()
        .snapshot_json(failed_local("s1", 7200))
        .snapshot_json(failed_local("s1", 600))
        .snapshot_json(local("s2", 600, "h")));
    let failed = of(&found, FindingCode::SnapshotFailed);
    assert_eq!(failed.len(), 1);
    assert!(
        failed[0].message.starts_with(&format!(
            "2 local snapshots in the last 24 h, the newest etcd-snapshot-s1-{}",
            unix(600)
        )),
        "{}",
        failed[0].message
    );
}

#[test]
fn another_clusters_s3_objects_carry_its_token_and_are_no_rotation() {
    let mut theirs = s3("etcd-snapshot-prod-a-1717156800", "prod-a", 600);
    theirs["metadata"]["annotations"] =
        json!({"etcd.k3s.cattle.io/snapshot-token-hash": "ffffffffffff"});
    let found = run(cluster()
        .snapshot_json(local("s1", 600, "37831a857fac"))
        .snapshot_json(theirs));
    assert_eq!(of(&found, FindingCode::SnapshotS3Foreign).len(), 1);
    assert_eq!(
        of(&found, FindingCode::SnapshotTokenRotated).len(),
        0,
        "{found:#?}"
    );
}

#[test]
fn an_s3_client_that_failed_to_start_is_said_so() {
    let mut cr = failed_local("s3", 600);
    cr["spec"]["nodeName"] = json!("s3");
    cr["metadata"]["labels"] = json!({"etcd.k3s.cattle.io/snapshot-storage-node": "s3"});
    cr["status"]["error"]["message"] = json!("failed to initialize S3 client: bad endpoint");
    let found = run(cluster().snapshot_json(cr));
    let failed = of(&found, FindingCode::SnapshotFailed);
    assert_eq!(failed.len(), 1);
    assert!(
        failed[0].message.starts_with("s3 snapshot"),
        "{}",
        failed[0].message
    );
    assert!(
        failed[0]
            .message
            .contains("failed on S3 (the uploading node is not recorded)")
    );
}

#[test]
fn without_the_snapshot_crd_the_file_check_says_why_it_did_not_run() {
    let mut state = cluster().build();
    state.snapshot_crd_missing = true;
    let check = crate::diagnose::check::analyse_check(&state, Distro::K3s, now());
    let run = check
        .checks
        .iter()
        .find(|c| c.name == "snapshot-files")
        .unwrap();
    assert!(!run.ran);
    assert!(run.note.contains("CRD is not installed"), "{}", run.note);
}
