//! node-args on the real API server: the servers' flags as k3ssim writes them
//! (`<prog>.io/node-args`), its `local-snapshots-timestamp` going stale once a server is
//! killed, and what an operator's config puts into node-args (a session token, a different
//! retention), written by the admin client the way the agent half of k3s patches its Node.
//! S3 snapshots are objects the test creates: k3ssim has no S3.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::run_as;
use crate::support::envtest::servers::SimCluster;
use crate::support::envtest::{EnvTest, User};
use crate::support::harness::k3sdoctor;
use crate::support::objects::server;
use crate::support::scrape::{start_serve, wait_for_sample};
use crate::support::wait::wait_for;

const NODES: &str = "/api/v1/nodes";
const SNAPSHOTS: &str = "/apis/k3s.cattle.io/v1/etcdsnapshotfiles";
const STAMP: &str = "etcd.k3s.cattle.io/local-snapshots-timestamp";
const S3_STAMP: &str = "etcd.k3s.cattle.io/s3-snapshots-timestamp";

fn node_path(node: &str) -> String {
    format!("{NODES}/{node}")
}

fn annotation(env: &EnvTest, node: &str, key: &str) -> Option<String> {
    env.admin()
        .get(&node_path(node))?
        .pointer(&format!("/metadata/annotations/{}", key.replace('/', "~1")))?
        .as_str()
        .map(str::to_string)
}

fn annotate(env: &EnvTest, node: &str, key: &str, value: &str) {
    env.admin().merge_patch(
        &node_path(node),
        &json!({"metadata": {"annotations": {key: value}}}),
    );
}

/// `(code, object)` of every finding of `check -o json`.
fn findings(env: &EnvTest, extra: &[&str]) -> Vec<(String, String, String)> {
    let mut args = vec!["check", "-o", "json", "--fail-on", "never"];
    args.extend_from_slice(extra);
    let out = run_as(env, User::Admin, &args);
    out.code(0);
    let report: Value = out.json();
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .flat_map(|f| {
            std::iter::once(f.clone()).chain(f["children"].as_array().cloned().unwrap_or_default())
        })
        .map(|f| {
            (
                f["code"].as_str().unwrap_or_default().to_string(),
                f["object"].as_str().unwrap_or_default().to_string(),
                f["message"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn rfc3339_ago(mins: i64) -> String {
    (jiff::Timestamp::now() - jiff::SignedDuration::from_mins(mins))
        .round(jiff::Unit::Second)
        .expect("rounds")
        .to_string()
}

/// A killed 1.33 server's stamp goes stale and is reported; the live one's is not; a killed
/// 1.32.2 server (before periodic reconcile) is judged by its 12 h schedule and is not. An
/// unredacted session token and a retention only one server has are reported from the
/// node-args the servers run with, and `serve` exports the secret as an error.
#[test]
fn real_node_args_secret_drift_and_a_stalled_reconcile() {
    let Some(env) = EnvTest::start("real_node_args_secret_drift_and_a_stalled_reconcile") else {
        return;
    };
    let cluster = SimCluster::start(&env, "k3s", "v1.33.5+k3s1", 2, &[]);
    let _ = &cluster;
    // A third server on a release before periodic reconcile (an upgrade in progress).
    let flags: Vec<String> = [
        "--node-name",
        "ip-10-0-0-13",
        "--internal-ip",
        "10.0.0.13",
        "--version",
        "v1.32.2+k3s1",
        "--snapshot-interval",
        "20s",
        "--snapshot-retention",
        "100",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    env.start_sim("server-3", &flags).expect("server-3 starts");
    let [s1, s2, s3] = ["ip-10-0-0-11", "ip-10-0-0-12", "ip-10-0-0-13"];
    // k3ssim stamps each Node after its first snapshot round.
    assert!(
        wait_for(Duration::from_secs(60), || [s1, s2, s3]
            .iter()
            .all(|n| annotation(&env, n, STAMP).is_some())),
        "the servers never stamped their Nodes"
    );
    let args = annotation(&env, s1, "k3s.io/node-args").expect("k3ssim writes node-args");
    assert!(args.starts_with(r#"["server""#), "{args}");

    // Healthy: nothing of this part fires.
    let ours = |f: &Vec<(String, String, String)>, code: &str| -> Vec<String> {
        f.iter()
            .filter(|(c, _, _)| c == code)
            .map(|(_, o, _)| o.clone())
            .collect()
    };
    let before = findings(&env, &[]);
    for code in [
        "snapshot-reconcile-stalled",
        "node-args-secret-exposed",
        "etcd-config-drift",
    ] {
        assert!(ours(&before, code).is_empty(), "{code}: {before:#?}");
    }

    // Crashes: nothing stamps their Nodes any more; the stamps are set back to 20 minutes
    // ago instead of waiting for them to age.
    env.kill_sim("server-2");
    env.kill_sim("server-3");
    for node in [s2, s3] {
        annotate(&env, node, STAMP, &rfc3339_ago(20));
    }
    // The operator's flags, as the agent half of k3s writes them at start.
    annotate(
        &env,
        s1,
        "k3s.io/node-args",
        &format!(
            r#"["server","--node-name","{s1}","--cluster-init","--etcd-s3","true","--etcd-s3-session-token","FwoGZXIvYXdzEXAMPLE","--etcd-snapshot-retention","12"]"#
        ),
    );
    // k3ssim writes node-args at start only: a snapshot round later the patch is still there.
    std::thread::sleep(Duration::from_secs(25));
    assert!(
        annotation(&env, s1, "k3s.io/node-args")
            .unwrap()
            .contains("session-token"),
        "k3ssim overwrote node-args"
    );
    let after = findings(&env, &[]);
    assert_eq!(
        ours(&after, "snapshot-reconcile-stalled"),
        [format!("Node {s2}")],
        "{after:#?}"
    );
    assert_eq!(
        ours(&after, "node-args-secret-exposed"),
        [format!("Node {s1}")]
    );
    let all = format!("{after:?}");
    assert!(
        !all.contains("FwoGZXIvYXdzEXAMPLE"),
        "the secret was printed: {all}"
    );
    let drift: Vec<&String> = after
        .iter()
        .filter(|(c, _, _)| c == "etcd-config-drift")
        .map(|(_, _, m)| m)
        .collect();
    assert!(
        drift
            .iter()
            .any(|m| m.contains("--etcd-snapshot-retention") && m.contains(&format!("{s1}=12"))),
        "{drift:#?}"
    );
    // The secret is an error: check fails by default.
    run_as(&env, User::Admin, &["check"]).code(1);

    // serve exports it.
    let (_serve, address) =
        start_serve(k3sdoctor(["serve"]).kubeconfig(&env.kubeconfig(User::Admin)));
    wait_for_sample(
        address,
        r#"k3sdoctor_findings{code="node-args-secret-exposed",severity="error"}"#,
        1.0,
        Duration::from_secs(30),
    );
}

/// S3 on 1.34.5 (inside k3s-io/k3s#13769's window) and 1.34.6 (fixed): the objects k3s
/// writes, created by the admin client. A raised `--etcd-snapshot-retention` without
/// `--etcd-s3-retention` is reported on 1.34.5 only; a fresh S3 stamp with only old S3
/// snapshots is a suspect listing until a recent one appears; three uploaders share the count.
/// The schedule is `@every 10s` so that the Nodes, created now, are soon older than a
/// schedule's gap (a younger server is not expected to have uploaded yet).
#[test]
fn real_s3_retention_and_listing_follow_the_version() {
    let Some(env) = EnvTest::start("real_s3_retention_and_listing_follow_the_version") else {
        return;
    };
    let admin = env.admin();
    let args = r#"["server","--etcd-s3","true","--etcd-s3-bucket","backups","--etcd-snapshot-retention","10","--etcd-snapshot-schedule-cron","@every 10s"]"#;
    for (name, version) in [
        ("s1", "v1.34.5+k3s1"),
        ("s2", "v1.34.6+k3s1"),
        ("s3", "v1.34.6+k3s1"),
    ] {
        let mut node = server(name, version);
        node["metadata"]["annotations"]["k3s.io/node-args"] = json!(args);
        node["metadata"]["annotations"][STAMP] = json!(rfc3339_ago(2));
        node["metadata"]["annotations"][S3_STAMP] = json!(rfc3339_ago(2));
        admin.create(NODES, &node);
    }
    let s3_snapshot = |node: &str, hours_ago: i64| {
        let t = jiff::Timestamp::now() - jiff::SignedDuration::from_hours(hours_ago);
        let file = format!("etcd-snapshot-{node}-{}", t.as_second());
        json!({
            "apiVersion": "k3s.cattle.io/v1", "kind": "ETCDSnapshotFile",
            "metadata": {"name": format!("s3-{file}-a1b2c3"),
                         "labels": {"etcd.k3s.cattle.io/snapshot-storage-node": "s3"}},
            "spec": {"snapshotName": file, "nodeName": node, "location": format!("s3://backups/{file}"),
                     "s3": {"bucket": "backups", "endpoint": "s3.amazonaws.com", "region": "us-east-1"}},
            "status": {"readyToUse": true, "creationTime": t.round(jiff::Unit::Second).unwrap().to_string(), "size": "1000"}
        })
    };
    admin.create(SNAPSHOTS, &s3_snapshot("s1", 20));
    // Past the gap and its margin (10 s + 10 s) since the Nodes were created.
    std::thread::sleep(Duration::from_secs(22));

    let found = findings(&env, &[]);
    let with = |code: &str| -> Vec<(String, String)> {
        found
            .iter()
            .filter(|(c, _, _)| c == code)
            .map(|(_, o, m)| (o.clone(), m.clone()))
            .collect()
    };
    let retention = with("snapshot-s3-retention");
    assert_eq!(retention.len(), 1, "{found:#?}");
    assert_eq!(retention[0].0, "Node s1");
    assert!(
        retention[0].1.contains("k3s-io/k3s#13769"),
        "{}",
        retention[0].1
    );
    let listing = with("snapshot-s3-listing-suspect");
    assert_eq!(listing.len(), 1, "{found:#?}");
    assert!(listing[0].1.contains("20h"), "{}", listing[0].1);
    // 5 (s1's S3 retention on 1.34.5) across 3 uploaders, each keeping 10 locally.
    assert_eq!(
        with("snapshot-s3-retention-cluster-wide").len(),
        1,
        "{found:#?}"
    );

    // A fresh upload clears the listing suspicion.
    admin.create(SNAPSHOTS, &s3_snapshot("s2", 0));
    let found = findings(&env, &[]);
    assert!(
        found
            .iter()
            .all(|(c, _, _)| c != "snapshot-s3-listing-suspect"),
        "{found:#?}"
    );
}
