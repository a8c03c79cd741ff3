//! Every repair that writes leaves an events.k8s.io/v1 Event in kube-system, regarding the
//! object it changed; a failure to record it is a note, never a failed repair.

use serde_json::Value;

use crate::restore::{backfill_with_backup, restore};
use crate::support::fake_api::{FakeApi, Fault, Role};
use crate::support::harness::{Output, k3sdoctor};
use crate::support::objects::{NOW, agent, extra_metadata, lease, server, snapshot_cr};

const AFFECTED: &str = "v1.29.4+k3s1";

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

/// The Events in kube-system, oldest first.
pub(crate) fn events(fake: &FakeApi) -> Vec<Value> {
    fake.list("Event")
        .into_iter()
        .filter(|e| e["metadata"]["namespace"] == "kube-system")
        .collect()
}

/// `leases follow --fix --yes --now NOW` and `extra`, as the admin.
fn follow_fix(fake: &FakeApi, extra: &[&str]) -> Output {
    let mut args = vec!["leases", "follow", "--fix", "--yes", "--now", NOW];
    args.extend_from_slice(extra);
    k3sdoctor(args).cluster(fake, Role::Admin).run()
}

fn event_posts(fake: &FakeApi) -> usize {
    fake.requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("/events"))
        .count()
}

#[test]
fn a_moved_lock_leaves_a_lock_moved_event_on_the_lease_saying_who_asked() {
    let fake = static_split();
    follow_fix(&fake, &["--no-wait"]).code(0);
    assert_eq!(fake.lock_holder("Lease", "k3s").unwrap(), "s2");
    let events = events(&fake);
    assert_eq!(events.len(), 1, "{events:#?}");
    let e = &events[0];
    assert_eq!(e["apiVersion"], "events.k8s.io/v1");
    assert_eq!(e["reason"], "LockMoved");
    assert_eq!(e["type"], "Normal");
    assert_eq!(e["action"], "MoveLock");
    assert_eq!(e["reportingController"], "k3sdoctor.io/k3sdoctor");
    assert!(!e["reportingInstance"].as_str().unwrap().is_empty());
    assert_eq!(e["regarding"]["kind"], "Lease");
    assert_eq!(e["regarding"]["name"], "k3s");
    assert_eq!(e["regarding"]["namespace"], "kube-system");
    let lease_rv =
        fake.get("Lease", Some("kube-system"), "k3s").unwrap()["metadata"]["resourceVersion"]
            .clone();
    assert_eq!(e["regarding"]["resourceVersion"], lease_rv);
    let note = e["note"].as_str().unwrap();
    assert!(
        note.starts_with("moved lock kube-system/k3s from s1 to s2 (node s2)"),
        "{note}"
    );
    assert!(
        note.ends_with("asked by leases follow --fix, run by admin (context fake)."),
        "{note}"
    );
}

#[test]
fn a_forbidden_event_is_a_note_and_the_repair_still_succeeds_without_a_retry() {
    let fake = static_split();
    fake.inject(Fault::status("POST", "/events", 403));
    let out = follow_fix(&fake, &["--no-wait"]);
    out.code(0).stderr_has(
        "could not record the LockMoved Event on Lease kube-system/k3s: cannot create events.events.k8s.io",
    );
    assert!(
        out.stderr.contains("the repair itself is not affected"),
        "{}",
        out.stderr
    );
    assert_eq!(fake.lock_holder("Lease", "k3s").unwrap(), "s2");
    assert_eq!(event_posts(&fake), 1, "an Event is never retried");
}

#[test]
fn a_takeover_that_is_not_verified_leaves_a_lock_move_failed_warning() {
    // Nothing renews the lock in this fake: verification times out (exit 4).
    let fake = static_split();
    follow_fix(&fake, &["--timeout", "2s"]).code(4);
    let events = events(&fake);
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0]["reason"], "LockMoveFailed");
    assert_eq!(events[0]["type"], "Warning");
    assert!(
        events[0]["note"]
            .as_str()
            .unwrap()
            .starts_with("tried to move lock kube-system/k3s from s1 to s2"),
        "{:#}",
        events[0]
    );
}

#[test]
fn a_refused_write_leaves_a_lock_move_failed_event_and_nothing_else() {
    let fake = static_split();
    fake.inject(Fault::status("PUT", "leases/k3s?&fieldManager", 500).times(1));
    follow_fix(&fake, &["--no-wait"]).code(4);
    let events = events(&fake);
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0]["reason"], "LockMoveFailed");
    assert_eq!(fake.lock_holder("Lease", "k3s").unwrap(), "s1");
}

#[test]
fn plans_dry_runs_and_refusals_record_no_event() {
    let fake = static_split();
    k3sdoctor(["leases", "follow", "--now", NOW])
        .cluster(&fake, Role::Admin)
        .run()
        .code(1);
    // No terminal and no --yes: refused before anything is sent.
    k3sdoctor(["leases", "follow", "--fix", "--now", NOW])
        .cluster(&fake, Role::Admin)
        .run()
        .code(2);
    assert_eq!(event_posts(&fake), 0);
}

#[test]
fn backfill_and_restore_leave_their_events_on_the_snapshot_configmap() {
    let fake = FakeApi::with_objects(vec![
        server("s1", AFFECTED),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
        extra_metadata("k3s"),
        snapshot_cr("s1", 1_717_142_400, true),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let backup = dir.path().join("empty.json");
    // The ConfigMap is created by the first backfill; the second one has nothing to back up
    // from before, so back up the created one and restore it over a later change.
    // Exit 1 is the verdict after the verified write: no snapshot controller runs here.
    k3sdoctor(["snapshots", "backfill", "--fix", "--yes", "--now", NOW])
        .cluster(&fake, Role::Admin)
        .run()
        .code(1);
    fake.put(snapshot_cr("s1", 1_717_142_500, true));
    backfill_with_backup(&fake, &backup).code(1);
    restore(&fake, &backup, &["--fix", "--yes"]).code(1);
    let events = events(&fake);
    let reasons: Vec<&str> = events
        .iter()
        .map(|e| e["reason"].as_str().unwrap())
        .collect();
    assert_eq!(
        reasons,
        [
            "SnapshotEntriesBackfilled",
            "SnapshotEntriesBackfilled",
            "SnapshotEntriesRestored"
        ],
        "{events:#?}"
    );
    for e in &events {
        assert_eq!(e["regarding"]["kind"], "ConfigMap");
        assert_eq!(e["regarding"]["apiVersion"], "v1");
        assert_eq!(e["regarding"]["name"], "k3s-etcd-snapshots");
        assert_eq!(e["type"], "Normal");
    }
    assert!(
        events[0]["note"]
            .as_str()
            .unwrap()
            .contains("1 entries added, 0 updated, 0 removed"),
        "{:#}",
        events[0]
    );
    assert_eq!(events[1]["action"], "BackfillSnapshotEntries");
    assert_eq!(events[2]["action"], "RestoreSnapshotEntries");
    assert!(
        events[2]["note"]
            .as_str()
            .unwrap()
            .contains("restored from backup"),
        "{:#}",
        events[2]
    );
}
