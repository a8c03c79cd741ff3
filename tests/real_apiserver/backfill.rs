//! `snapshots backfill --fix` during a split writes exactly the bytes k3s's own controller
//! writes: once the controller runs (after the split is healed) it changes none of them.

use std::collections::BTreeMap;

use crate::common::{run_as, until_exit, until_reported};
use crate::support::envtest::servers::{SimCluster, TRANSITION};
use crate::support::envtest::{EnvTest, User};
use crate::support::wait::wait_for;

#[test]
fn real_backfill_during_a_split_writes_what_the_controller_leaves_unchanged() {
    let Some(env) =
        EnvTest::start("real_backfill_during_a_split_writes_what_the_controller_leaves_unchanged")
    else {
        return;
    };
    let cluster = SimCluster::start(&env, "k3s", "v1.29.4+k3s1", 3, &[]);
    let admin = env.admin();
    assert!(wait_for(TRANSITION, || admin.snapshot_files().len() >= 3));
    until_exit(&env, &["snapshots", "diff"], 0);
    cluster.split_etcd_onto("server-2");
    until_reported(
        &env,
        &["snapshots", "diff"],
        "snapshot-missing-from-configmap",
    );

    let before = admin.configmap_data("k3s-etcd-snapshots");
    run_as(
        &env,
        User::Admin,
        &["snapshots", "backfill", "--fix", "--yes"],
    )
    // Verified, and the re-read cluster has no error: the unprocessed CRs are seconds old, younger
    // than the minute after which a missing controller finalizer counts as an idle controller.
    .code(0)
    .stderr_has("server-side dry run: accepted");
    let backfilled = admin.configmap_data("k3s-etcd-snapshots");
    let written: BTreeMap<&String, &serde_json::Value> = backfilled
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(*v))
        .collect();
    assert!(!written.is_empty(), "backfill wrote nothing");
    // The real API server took its Event, on the snapshot ConfigMap.
    let events = admin
        .get("/apis/events.k8s.io/v1/namespaces/kube-system/events")
        .expect("events");
    let backfilled_events: Vec<&serde_json::Value> = events["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["reason"] == "SnapshotEntriesBackfilled")
        .collect();
    assert_eq!(backfilled_events.len(), 1, "{events:#}");
    assert_eq!(
        backfilled_events[0]["regarding"]["name"],
        "k3s-etcd-snapshots"
    );
    assert!(
        before.keys().all(|k| backfilled.contains_key(k)),
        "backfill lost entries"
    );

    // Heal the split: the controller starts on server-2, syncs every CR and reconciles.
    run_as(&env, User::Admin, &["leases", "follow", "--fix", "--yes"]).code(0);
    assert!(
        cluster.wait_log(
            "server-2",
            "snapshot ConfigMap controller: initial sync complete",
            1
        ),
        "the snapshot controller did not start on server-2"
    );
    let processed: usize = env
        .sim_log("server-2")
        .lines()
        .find_map(|l| l.split("initial sync complete: processed=").nth(1))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .expect("the controller logs how many CRs it processed");
    assert!(
        processed >= written.len(),
        "the controller processed {processed} CRs, fewer than the {} backfilled",
        written.len()
    );
    let after = admin.configmap_data("k3s-etcd-snapshots");
    for (key, value) in &written {
        assert_eq!(
            after.get(*key),
            Some(*value),
            "the controller rewrote backfilled entry {key}"
        );
    }
    let writes: Vec<String> = env
        .sim_log("server-2")
        .lines()
        .filter(|l| l.contains(" cm-write "))
        .map(str::to_string)
        .collect();
    for line in &writes {
        assert!(
            cm_write_keys(line, "changed").is_empty(),
            "the controller changed entries: {line}"
        );
        let deleted = cm_write_keys(line, "deleted");
        assert!(
            written.keys().all(|k| !deleted.contains(&k.as_str())),
            "the controller removed backfilled entries: {line}"
        );
    }
    until_exit(&env, &["snapshots", "diff"], 0);
}

/// The keys a simulator `cm-write ... added=a,b changed= deleted=c` line lists under `field`.
fn cm_write_keys<'a>(line: &'a str, field: &str) -> Vec<&'a str> {
    line.split_whitespace()
        .find_map(|t| t.strip_prefix(field)?.strip_prefix('='))
        .map(|list| list.split(',').filter(|k| !k.is_empty()).collect())
        .unwrap_or_default()
}
