//! Every ETCDSnapshotFile missing from the ConfigMap: the snapshot
//! controller never ran (no `-etcd` Lease, no finalizers, no entries), as on a split cluster
//! whose shared S3 folder lists thousands of objects. The analysis no longer keeps each missing
//! row's ConfigMap value; the report and what a backfill writes must not change for it.
//!
//! The expected report is `tests/fixtures/all-missing/diff.json`, written by the build before
//! that change; `K3SDOCTOR_UPDATE_GOLDEN=1 cargo test --locked --test cli all_missing` rewrites
//! it (review the diff: the report is a contract).

use serde_json::Value;

use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::k3sdoctor;
use crate::support::k3s_sim::snapshot_entry::{S3ConfigShape, data_key, entry_value};
use crate::support::objects::{
    NOW, extra_metadata, numbered_snapshot_cr, server, snapshot_configmap,
};

const SERVERS: [&str; 3] = ["server-1", "server-2", "server-3"];
const COUNT: usize = 300;
/// The newest snapshot (an hour before NOW); every server takes one an hour.
const NEWEST: i64 = 1_717_153_840;
const GOLDEN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/all-missing/diff.json"
);
const GOLDEN_PLAN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/all-missing/backfill-plan.txt"
);

/// `output` is byte for byte the file at `golden` (rewritten under `K3SDOCTOR_UPDATE_GOLDEN`).
fn assert_golden(output: &str, golden: &str) {
    if std::env::var_os("K3SDOCTOR_UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(std::path::Path::new(golden).parent().unwrap()).unwrap();
        std::fs::write(golden, output).unwrap();
    }
    let expected = std::fs::read_to_string(golden).expect("the golden output");
    // Compared as text, not as parsed JSON: the bytes are the contract (field order, spacing).
    assert!(
        output == expected,
        "the output differs from {golden}; first differing line: {:?}",
        output.lines().zip(expected.lines()).find(|(a, b)| a != b)
    );
}

/// The `i`-th newest snapshot, with no finalizer (the controller never saw it).
fn snapshot(i: usize) -> Value {
    numbered_snapshot_cr(i, &SERVERS, NEWEST)
}

/// Three servers, no Leases (no snapshot controller runs), `COUNT` CRs and an empty ConfigMap.
fn all_missing() -> FakeApi {
    let mut objects: Vec<Value> = SERVERS.iter().map(|s| server(s, "v1.29.4+k3s1")).collect();
    objects.extend((0..COUNT).map(snapshot));
    objects.extend([snapshot_configmap("k3s", &[]), extra_metadata("k3s")]);
    FakeApi::with_objects(objects)
}

#[test]
fn an_all_missing_diff_is_byte_for_byte_the_report_it_was() {
    let fake = all_missing();
    let out = k3sdoctor(["snapshots", "diff", "-o", "json", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    out.code(1);
    let report: Value = out.json();
    let states: Vec<&str> = report["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, vec!["missing"; COUNT], "every CR is missing");
    assert_golden(&out.stdout, GOLDEN);
}

#[test]
fn an_all_missing_backfill_plans_and_writes_what_k3s_would() {
    let fake = all_missing();
    let plan = k3sdoctor(["snapshots", "backfill", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    assert_golden(&plan.stdout, GOLDEN_PLAN);
    k3sdoctor(["snapshots", "backfill", "--fix", "--yes", "--now", NOW])
        .cluster(&fake, Role::Admin)
        .run()
        .code(1)
        .stdout_has(&format!("{COUNT} to add"));
    let cm = fake
        .get("ConfigMap", Some("kube-system"), "k3s-etcd-snapshots")
        .unwrap();
    let data = cm["data"].as_object().unwrap();
    assert_eq!(data.len(), COUNT);
    // The simulator's own encoder of k3s v1.29.4's values, independent of k3sdoctor's.
    for cr in fake.list("ETCDSnapshotFile") {
        assert_eq!(
            data[&data_key(&cr)],
            entry_value(&cr, S3ConfigShape::Legacy),
            "{}",
            cr["metadata"]["name"]
        );
    }
}
