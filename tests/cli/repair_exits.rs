//! A repair never makes things worse, and its exit code never lies. Exit 4 only
//! when the write did not happen or was not verified; after a verified write the exit code is
//! the verdict of the cluster read again, under `--fail-on`.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::k3sdoctor;
use crate::support::k3s_sim::snapshot_entry::{S3ConfigShape, data_key, entry_value};
use crate::support::k3s_sim::{K3sSim, LockStyle, SimConfig, holder};
use crate::support::objects::{
    NOW, agent, extra_metadata, lease, server, snapshot_configmap, snapshot_cr,
};
use crate::support::wait::wait_for;

const AFFECTED: &str = "v1.29.4+k3s1";
const T0: i64 = 1_717_142_400;

fn static_split() -> FakeApi {
    FakeApi::with_objects(vec![
        server("s1", AFFECTED),
        server("s2", AFFECTED),
        server("s3", AFFECTED),
        agent("w1", AFFECTED),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s2", 1),
    ])
}

#[test]
fn a_move_that_keeps_the_split_is_refused_without_force() {
    let fake = static_split();
    k3sdoctor([
        "leases", "follow", "--fix", "--yes", "--to", "s3", "--now", NOW,
    ])
    .cluster(&fake, Role::Admin)
    .run()
    .code(2)
    .one_line_error()
    .stderr_has("this keeps a split (k3s on s3, k3s-etcd on s2)")
    .stderr_has("override with --force");
    assert!(fake.writes().is_empty(), "{:?}", fake.writes());
}

#[test]
fn a_forced_plan_that_keeps_the_split_says_so_in_its_first_line() {
    let fake = static_split();
    let out = k3sdoctor(["leases", "follow", "--to", "s3", "--force", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    out.code(1);
    let first = out.stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("Plan: move k3s from s1 to s3 (node s3); this keeps a split")
            && first.contains("etcd controllers on s2 never start")
            && first.contains("v1.29.6+k3s1"),
        "{first}"
    );
    assert!(
        !out.stdout.contains("also starts the etcd controllers"),
        "{}",
        out.stdout
    );
    out.stdout_has("it does not hold k3s-etcd");
}

#[test]
fn a_verified_move_that_leaves_a_split_exits_1() {
    let fake = Arc::new(FakeApi::start());
    let config = SimConfig::new("k3s", AFFECTED, LockStyle::Lease, true, &["s1", "s2", "s3"]);
    K3sSim::seed_holders(&fake, &config, "s1", "s2");
    let sim = K3sSim::start(fake.clone(), config.clone());
    assert!(wait_for(Duration::from_secs(20), || {
        let log = sim.log();
        log.iter().any(|l| l == "s1 acquired k3s")
            && log.iter().any(|l| l == "s2 acquired k3s-etcd")
    }));
    let out = k3sdoctor([
        "leases",
        "follow",
        "--fix",
        "--yes",
        "--force",
        "--to",
        "s3",
        "--timeout",
        "30s",
        "-o",
        "json",
    ])
    .cluster(&fake, Role::Admin)
    .run();
    out.code(1).stderr_has("s3 renewed k3s itself");
    let result: Value = out.json();
    assert_eq!(result["outcome"], "verified", "{result:#}");
    assert_eq!(result["after"]["findings"][0]["code"], "lease-split");
    assert_eq!(holder(&fake, &config, "k3s").as_deref(), Some("s3"));
}

#[test]
fn backfill_that_leaves_only_orphans_exits_on_the_verdict_not_4() {
    let processed = |mut cr: Value| {
        cr["metadata"]["finalizers"] =
            serde_json::json!(["wrangler.cattle.io/managed-etcd-snapshots-controller"]);
        cr
    };
    let missing = processed(snapshot_cr("s1", T0, true));
    let gone = snapshot_cr("s3", T0 - 3600, true);
    let orphan = (data_key(&gone), entry_value(&gone, S3ConfigShape::Legacy));
    let objects = vec![
        server("s1", AFFECTED),
        server("s2", AFFECTED),
        server("s3", AFFECTED),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
        missing.clone(),
        extra_metadata("k3s"),
        snapshot_configmap("k3s", std::slice::from_ref(&orphan)),
    ];
    let fake = FakeApi::with_objects(objects.clone());
    k3sdoctor(["snapshots", "backfill", "--fix", "--yes", "--now", NOW])
        .cluster(&fake, Role::Admin)
        .run()
        .code(0)
        .stdout_has("snapshot-orphaned-in-configmap");
    let data = fake
        .get("ConfigMap", Some("kube-system"), "k3s-etcd-snapshots")
        .unwrap()["data"]
        .clone();
    assert_eq!(
        data[data_key(&missing)],
        entry_value(&missing, S3ConfigShape::Legacy)
    );
    assert_eq!(
        data[&orphan.0], orphan.1,
        "the orphan stays without --prune"
    );

    // The same repair under --fail-on warning: written and verified, the orphan remains.
    let fake = FakeApi::with_objects(objects);
    k3sdoctor([
        "snapshots",
        "backfill",
        "--fix",
        "--yes",
        "--fail-on",
        "warning",
        "--now",
        NOW,
    ])
    .cluster(&fake, Role::Admin)
    .run()
    .code(1)
    .stderr_has("wrote ConfigMap kube-system/k3s-etcd-snapshots");
}

#[test]
fn after_a_verified_repair_check_still_warns_about_the_affected_version() {
    let fake = Arc::new(FakeApi::start());
    let config = SimConfig::new("k3s", AFFECTED, LockStyle::Lease, true, &["s1", "s2", "s3"]);
    K3sSim::seed_holders(&fake, &config, "s1", "s2");
    let sim = K3sSim::start(fake.clone(), config.clone());
    assert!(wait_for(Duration::from_secs(20), || sim
        .log()
        .iter()
        .any(|l| l == "s2 acquired k3s-etcd")));
    k3sdoctor(["leases", "follow", "--fix", "--yes", "--timeout", "30s"])
        .cluster(&fake, Role::Admin)
        .run()
        .code(0);
    let out = k3sdoctor(["check", "-o", "json", "--fail-on", "warning"])
        .cluster(&fake, Role::ReadOnly)
        .run();
    out.code(1);
    let report: Value = out.json();
    let findings = report["findings"].as_array().unwrap();
    let affected: Vec<&Value> = findings
        .iter()
        .filter(|f| f["code"] == "version-affected")
        .collect();
    assert_eq!(affected.len(), 1, "{report:#}");
    assert_eq!(affected[0]["severity"], "warning");
    assert!(
        affected[0]["remediation"]
            .as_str()
            .unwrap()
            .contains("v1.29.6+k3s1"),
        "{report:#}"
    );
    assert!(
        findings.iter().all(|f| f["code"] != "lease-split"),
        "{report:#}"
    );
}
