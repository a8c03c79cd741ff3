//! What the ETCDSnapshotFiles themselves say: `snapshots list` columns and filters,
//! the `snapshot-files` findings in `check`, `snapshots list|diff`, dumps and `serve`. The same
//! on the real API server with simulated servers: tests/real_apiserver/snapshot_files.rs.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::{assert_matches_schema, k3sdoctor};
use crate::support::objects::{NOW, lease, renewed_now, server, snapshot_cr, write_dump};
use crate::support::report_checks::check_run;
use crate::support::scrape::{metrics, sample, start_serve, wait_for_sample};

const V: &str = "v1.33.4+k3s1";
/// 10 minutes before NOW (2024-05-31T12:10:40Z).
const TEN_MIN_AGO: i64 = 1_717_157_440 - 600;

/// As k3s leaves a CR once its controller has seen it: named with the digest of node and
/// location (pkg/etcd/snapshot/types.go), carrying the controller's finalizer.
fn as_k3s_keeps(mut cr: Value) -> Value {
    use sha2::{Digest, Sha256};
    let node = cr["spec"]["nodeName"].as_str().unwrap().to_string();
    let location = cr["spec"]["location"].as_str().unwrap().to_string();
    let digest: String = Sha256::digest(format!("{node}{location}").as_bytes())
        .iter()
        .take(3)
        .map(|b| format!("{b:02x}"))
        .collect();
    let prefix = if location.starts_with("s3://") {
        "s3"
    } else {
        "local"
    };
    let file = cr["spec"]["snapshotName"].as_str().unwrap().to_lowercase();
    cr["metadata"]["name"] = json!(format!("{prefix}-{file}-{digest}"));
    cr["metadata"]["finalizers"] = json!(["wrangler.cattle.io/managed-etcd-snapshots-controller"]);
    cr
}

fn stamped(mut cr: Value, hash: &str) -> Value {
    cr["metadata"]["annotations"] = json!({"etcd.k3s.cattle.io/snapshot-token-hash": hash});
    cr
}

/// A failed save on `node` at unix `ts`, as k3s records it: no location, size 0,
/// no token hash.
fn failed(node: &str, ts: i64) -> Value {
    let mut cr = snapshot_cr(node, ts, false);
    let time = jiff::Timestamp::from_second(ts).unwrap().to_string();
    cr["spec"]["location"] = json!("");
    cr["status"] = json!({"readyToUse": false, "size": "0", "creationTime": time,
        "error": {"time": time, "message": "write /var/lib/rancher/k3s/server/db/snapshots: no space left on device"}});
    as_k3s_keeps(cr)
}

fn s3_upload(file: &str, uploader: &str, ts: i64) -> Value {
    let time = jiff::Timestamp::from_second(ts).unwrap().to_string();
    as_k3s_keeps(json!({
        "apiVersion": "k3s.cattle.io/v1", "kind": "ETCDSnapshotFile",
        "metadata": {"name": format!("s3-{file}-0a1b2c"), "creationTimestamp": time,
                     "labels": {"etcd.k3s.cattle.io/snapshot-storage-node": "s3"},
                     "annotations": {"etcd.k3s.cattle.io/snapshot-token-hash": "37831a857fac"}},
        "spec": {"snapshotName": file, "nodeName": uploader, "location": format!("s3://backups/k3s/{file}"),
                 "s3": {"bucket": "backups", "prefix": "k3s", "endpoint": "s3.amazonaws.com"}},
        "status": {"readyToUse": true, "size": "8417312", "creationTime": time}
    }))
}

/// Two 1.33 servers; s1 snapshots fine under the new token, s2's save failed, an older s1
/// snapshot carries the old token, and one S3 upload is this cluster's.
fn objects() -> Vec<Value> {
    vec![
        server("s1", V),
        server("s2", V),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
        stamped(
            as_k3s_keeps(snapshot_cr("s1", TEN_MIN_AGO - 43_200, false)),
            "aaaaaaaaaaaa",
        ),
        stamped(
            as_k3s_keeps(snapshot_cr("s1", TEN_MIN_AGO, false)),
            "37831a857fac",
        ),
        failed("s2", TEN_MIN_AGO),
        s3_upload(
            &format!("etcd-snapshot-s1-{TEN_MIN_AGO}"),
            "s1",
            TEN_MIN_AGO,
        ),
    ]
}

fn list(fake: &FakeApi, extra: &[&str]) -> Value {
    let mut args = vec![
        "snapshots",
        "list",
        "-o",
        "json",
        "--now",
        NOW,
        "--fail-on",
        "never",
    ];
    args.extend_from_slice(extra);
    k3sdoctor(&args)
        .cluster(fake, Role::ReadOnly)
        .run()
        .code(0)
        .json()
}

fn files(report: &Value) -> Vec<String> {
    report["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["snapshotName"].as_str().unwrap().to_string())
        .collect()
}

fn codes(findings: &Value) -> Vec<String> {
    crate::support::report_checks::severity_codes(findings)
}

#[test]
fn snapshots_list_shows_location_state_node_and_token_hash_and_filters() {
    let fake = FakeApi::with_objects(objects());
    let all = list(&fake, &[]);
    assert_matches_schema(&all, "SnapshotList");
    assert_eq!(files(&all).len(), 4);
    let row = |name: &str| {
        all["snapshots"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["snapshotName"] == name)
            .cloned()
            .unwrap()
    };
    let s2 = row(&format!("on-demand-s2-{TEN_MIN_AGO}"));
    assert_eq!(s2["fileState"], "failed");
    assert_eq!(s2["node"], "s2");
    assert_eq!(s2["location"], "");
    assert!(s2["error"].as_str().unwrap().contains("no space left"));
    assert!(
        s2.get("tokenHash").is_none(),
        "a failed snapshot has no hash"
    );
    let s1 = row(&format!("on-demand-s1-{TEN_MIN_AGO}"));
    assert_eq!(
        (
            s1["fileState"].as_str(),
            s1["tokenHash"].as_str(),
            s1["storage"].as_str()
        ),
        (Some("ready"), Some("37831a857fac"), Some("local"))
    );
    assert!(
        s1["location"]
            .as_str()
            .unwrap()
            .starts_with("file:///var/lib/rancher/k3s/")
    );
    let up = row(&format!("etcd-snapshot-s1-{TEN_MIN_AGO}"));
    assert_eq!(
        up["location"],
        format!("s3://backups/k3s/etcd-snapshot-s1-{TEN_MIN_AGO}")
    );
    assert_eq!(up["storage"], "s3");

    // The findings of the snapshot-files check come with the list.
    let found = codes(&all["findings"]);
    for code in ["warning/snapshot-failed", "info/snapshot-token-rotated"] {
        assert!(found.contains(&code.to_string()), "{found:?}");
    }

    assert_eq!(
        files(&list(&fake, &["--failed"])),
        [format!("on-demand-s2-{TEN_MIN_AGO}")]
    );
    assert_eq!(
        files(&list(&fake, &["--node", "s1", "--storage", "s3"])),
        [format!("etcd-snapshot-s1-{TEN_MIN_AGO}")]
    );
    assert_eq!(
        files(&list(&fake, &["--storage", "local", "--node", "s1"])).len(),
        2
    );
    assert!(files(&list(&fake, &["--node", "nobody"])).is_empty());
    // Filters choose rows; the verdict stays the cluster's.
    assert_eq!(list(&fake, &["--node", "s1"])["summary"], all["summary"]);

    let table = k3sdoctor(["snapshots", "list", "--now", NOW, "--fail-on", "never"])
        .cluster(&fake, Role::ReadOnly)
        .run();
    table
        .code(0)
        .stdout_has("FAILED")
        .stderr_has("snapshot-failed");
    let wide = k3sdoctor([
        "snapshots",
        "list",
        "-o",
        "wide",
        "--now",
        NOW,
        "--fail-on",
        "never",
    ])
    .cluster(&fake, Role::ReadOnly)
    .run();
    wide.code(0)
        .stdout_has("TOKEN HASH")
        .stdout_has("37831a857fac")
        .stdout_has("s3://backups/k3s/");
    k3sdoctor(["snapshots", "list", "--storage", "tape"])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(2);
}

#[test]
fn check_and_diff_report_the_file_findings_live_and_on_a_dump() {
    let mut objects = objects();
    objects.push(s3_upload(
        &format!("etcd-snapshot-prod-a-{TEN_MIN_AGO}"),
        "prod-a",
        TEN_MIN_AGO,
    ));
    let fake = FakeApi::with_objects(objects.clone());
    let live: Value = k3sdoctor(["check", "-o", "json", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(0)
        .json();
    let run = check_run(&live, "snapshot-files").clone();
    assert_eq!(run["ran"], true);
    let found = codes(&live["findings"]);
    for code in [
        "warning/snapshot-failed",
        "warning/snapshot-s3-foreign",
        "info/snapshot-token-rotated",
    ] {
        assert!(found.contains(&code.to_string()), "{found:?}");
    }
    let foreign = live["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "snapshot-s3-foreign")
        .unwrap();
    assert_eq!(
        foreign["objectRefs"].as_array().unwrap().len(),
        1,
        "only the other cluster's"
    );

    // `snapshots diff` shows them too, though the ConfigMap has no difference.
    let diff: Value = k3sdoctor(["snapshots", "diff", "-o", "json", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(0)
        .json();
    assert!(codes(&diff["findings"]).contains(&"warning/snapshot-failed".to_string()));

    // The same objects as a dump give the same findings.
    let dir = tempfile::tempdir().unwrap();
    write_dump(&dir.path().join("all.yaml"), &objects);
    let dumped: Value = k3sdoctor(["check", "-o", "json", "--now", NOW, "--from-file"])
        .arg(dir.path().display().to_string())
        .run()
        .json();
    let mut dumped_codes = codes(&dumped["findings"]);
    let mut live_codes = found.clone();
    dumped_codes.retain(|c| c.contains("/snapshot-"));
    live_codes.retain(|c| c.contains("/snapshot-"));
    assert_eq!(dumped_codes, live_codes);
}

#[test]
fn a_dump_without_nodes_says_the_file_check_did_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let only_files: Vec<Value> = objects()
        .into_iter()
        .filter(|o| o["kind"] == "ETCDSnapshotFile")
        .collect();
    write_dump(&dir.path().join("esf.yaml"), &only_files);
    let report: Value = k3sdoctor(["check", "-o", "json", "--now", NOW, "--from-file"])
        .arg(dir.path().display().to_string())
        .run()
        .json();
    let run = check_run(&report, "snapshot-files").clone();
    assert_eq!(run["ran"], false, "{run}");
    assert!(
        run["note"]
            .as_str()
            .unwrap()
            .contains("Nodes were not read")
    );
    assert!(
        !codes(&report["findings"])
            .iter()
            .any(|c| c.ends_with("/snapshot-failed"))
    );
}

#[test]
fn serve_counts_a_failed_snapshot_and_clears_it_when_k3s_drops_the_record() {
    let now = jiff::Timestamp::now().as_second();
    let fake = FakeApi::start();
    for o in [
        server("s1", V),
        server("s2", V),
        renewed_now("k3s", "s1"),
        renewed_now("k3s-etcd", "s1"),
        stamped(snapshot_cr("s1", now - 60, false), "37831a857fac"),
    ] {
        fake.put(o);
    }
    let bad = fake.put(failed("s2", now - 60));
    let (serve, address) = start_serve(k3sdoctor(["serve"]).cluster(&fake, Role::ReadOnly));
    let series = r#"k3sdoctor_findings{code="snapshot-failed",severity="warning"}"#;
    wait_for_sample(address, series, 1.0, Duration::from_secs(30));
    fake.remove(
        "ETCDSnapshotFile",
        None,
        bad["metadata"]["name"].as_str().unwrap(),
    );
    let gone = crate::support::wait::wait_for(Duration::from_secs(30), || {
        sample(&metrics(address), series).unwrap_or(0.0) == 0.0
    });
    assert!(gone, "{}", metrics(address));
    serve.signal_and_wait(libc::SIGTERM).code(0);
}

/// What the multi-server S3 save race leaves (issue 29, item 11; k3s-io/k3s#10989): S3 records
/// with node `s3`, no location and size 0, not failed, all named with the digest of `s3` and
/// an empty location.
fn raced(file: &str, ts: i64) -> Value {
    let mut cr = s3_upload(file, "s3", ts);
    cr["spec"]["location"] = json!("");
    cr["status"]["size"] = json!("0");
    as_k3s_keeps(cr)
}

#[test]
fn empty_s3_records_from_the_save_race_are_an_error_naming_the_race_and_the_fix() {
    const RACY: &str = "v1.29.4+k3s1";
    let fake = FakeApi::with_objects([
        server("s1", RACY),
        server("s2", RACY),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
        s3_upload(
            &format!("etcd-snapshot-s1-{}", TEN_MIN_AGO - 43_200),
            "s1",
            TEN_MIN_AGO - 43_200,
        ),
        raced(&format!("etcd-snapshot-s1-{TEN_MIN_AGO}"), TEN_MIN_AGO),
        raced(&format!("etcd-snapshot-s2-{TEN_MIN_AGO}"), TEN_MIN_AGO),
    ]);
    let run = |args: &[&str]| {
        k3sdoctor(args)
            .args(&["--now", NOW])
            .cluster(&fake, Role::ReadOnly)
            .run()
    };
    let out = run(&["check", "-o", "json"]);
    out.code(1);
    let report: Value = out.json();
    assert_matches_schema(&report, "check with empty records");
    let finding = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "snapshot-record-empty")
        .unwrap_or_else(|| panic!("{report}"));
    assert_eq!(finding["severity"], "error", "{finding}");
    let message = finding["message"].as_str().unwrap();
    for part in [
        "k3s-io/k3s#10989",
        "fixed in v1.29.10+k3s1",
        "2 of them share the name digest 41242b",
        "The newest S3 snapshot is one of them",
    ] {
        assert!(message.contains(part), "{part}: {message}");
    }
    run(&["check"]).code(1).stdout_has("snapshot-record-empty");
}
