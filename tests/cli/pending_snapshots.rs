//! A snapshot younger than the controller's normal delay (a minute) whose
//! entry k3s has not written yet is `pending` in `snapshots list|diff` (table and JSON), and
//! never a difference, a finding or exit 1.

use serde_json::Value;

use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::k3sdoctor;
use crate::support::objects::{
    NOW, extra_metadata, lease, server, snapshot_configmap, snapshot_cr,
};

const V: &str = "v1.29.4+k3s1";

fn cluster(age_secs: i64) -> FakeApi {
    let now: jiff::Timestamp = NOW.parse().unwrap();
    FakeApi::with_objects([
        server("s1", V),
        server("s2", V),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
        extra_metadata("k3s"),
        snapshot_configmap("k3s", &[]),
        snapshot_cr("s1", now.as_second() - age_secs, true),
    ])
}

#[test]
fn a_snapshot_seconds_old_without_its_entry_is_pending() {
    let fake = cluster(3);
    let run = |args: &[&str]| {
        k3sdoctor(args)
            .args(&["--now", NOW])
            .cluster(&fake, Role::ReadOnly)
            .run()
    };
    run(&["snapshots", "diff"])
        .code(0)
        .stdout_has("pending  local-on-demand-s1-")
        .stdout_has("not a difference");
    run(&["snapshots", "list"]).code(0).stdout_has("pending");
    run(&["check"]).code(0).stdout_has("1 pending");
    for (args, list) in [
        (["snapshots", "list", "-o", "json"], "snapshots"),
        (["snapshots", "diff", "-o", "json"], "snapshots"),
    ] {
        let out = run(&args);
        out.code(0);
        let report: Value = out.json();
        assert_eq!(report[list][0]["state"], "pending", "{args:?}: {report}");
        assert_eq!(report["findings"], serde_json::json!([]), "{args:?}");
    }
    let check: Value = run(&["check", "-o", "json"]).json();
    assert_eq!(check["snapshots"]["pending"], 1);
    assert_eq!(check["snapshots"]["missing"], 0);
}

#[test]
fn a_minute_later_the_same_gap_is_missing() {
    let fake = cluster(61);
    k3sdoctor(["snapshots", "diff", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(1)
        .stdout_has("missing  local-on-demand-s1-")
        .stderr_has("snapshot-missing-from-configmap");
}

/// On v1.29.4 with the locks split, the `-etcd` holder's controller never
/// started, so a CR 10 s old will not get its entry: it is missing now, not pending. `diff`
/// exits 1 and `backfill --fix` writes it.
#[test]
fn on_a_split_affected_cluster_a_young_snapshot_is_missing_not_pending() {
    let now: jiff::Timestamp = NOW.parse().unwrap();
    let young = snapshot_cr("s1", now.as_second() - 10, true);
    let name = young["metadata"]["name"].as_str().unwrap().to_string();
    let fake = FakeApi::with_objects([
        server("s1", V),
        server("s2", V),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s2", 1),
        extra_metadata("k3s"),
        snapshot_configmap("k3s", &[]),
        young,
    ]);
    let run = |args: &[&str]| {
        k3sdoctor(args)
            .args(&["--now", NOW])
            .cluster(&fake, Role::ReadOnly)
            .run()
    };
    let diff = run(&["snapshots", "diff"]);
    diff.code(1)
        .stdout_has("missing  local-on-demand-s1-")
        .stderr_has("snapshot-missing-from-configmap");
    assert!(!diff.stdout.contains("shortly"), "{}", diff.stdout);
    assert!(!diff.stderr.contains("shortly"), "{}", diff.stderr);
    let check = run(&["check"]);
    check.code(1);
    assert!(!check.stdout.contains("pending"), "{}", check.stdout);
    let report: Value = run(&["check", "-o", "json"]).json();
    assert_eq!(report["snapshots"]["missing"], 1, "{report}");
    assert_eq!(report["snapshots"]["pending"], 0, "{report}");
    let diff_json: Value = run(&["snapshots", "diff", "-o", "json"]).json();
    assert_eq!(diff_json["snapshots"][0]["state"], "missing", "{diff_json}");
    assert!(
        diff_json["controllerNotWriting"]
            .as_str()
            .is_some_and(|w| w.contains("10046")),
        "{diff_json}"
    );

    k3sdoctor(["snapshots", "backfill", "--fix", "--yes", "--now", NOW])
        .cluster(&fake, Role::Admin)
        .run()
        .code(0)
        .stdout_has("1 to add");
    let data = fake
        .get("ConfigMap", Some("kube-system"), "k3s-etcd-snapshots")
        .and_then(|cm| cm["data"].as_object().cloned())
        .unwrap_or_default();
    assert_eq!(data.len(), 1, "{data:?}");
    assert!(
        data.values()
            .any(|v| v.as_str().is_some_and(|v| v.contains("on-demand-s1-"))),
        "{name}: {data:?}"
    );
}
