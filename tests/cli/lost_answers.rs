//! A write whose answer is lost — a 500 after etcd stored it, a reset, a reply that never
//! comes and a person who stops waiting — may have landed. Each repair reads the object again
//! and says what it holds: written (with its Event), not written, or changed by another writer;
//! never "nothing was written" on a guess.

use std::time::Duration;

use serde_json::Value;

use crate::common::follow_fix;
use crate::faults::backfill;
use crate::repair_events::events;
use crate::restore::{backed_up, restore};
use crate::support::fake_api::{AfterCommit, FakeApi, Fault, Role};
use crate::support::harness::{Output, k3sdoctor};
use crate::support::objects::NOW;

const LEASE_WRITE: &str = "leases/k3s?&fieldManager";
const CONFIGMAP_WRITE: &str = "configmaps/k3s-etcd-snapshots?&fieldManager";
const WAIT: Duration = Duration::from_secs(20);

/// A split cluster whose snapshot ConfigMap holds one foreign entry and misses a snapshot.
fn split() -> FakeApi {
    FakeApi::with_objects(crate::faults::split())
}

fn entries(fake: &FakeApi) -> usize {
    fake.get("ConfigMap", Some("kube-system"), "k3s-etcd-snapshots")
        .unwrap()["data"]
        .as_object()
        .map_or(0, |d| d.len())
}

fn reasons(fake: &FakeApi) -> Vec<String> {
    events(fake)
        .iter()
        .map(|e| e["reason"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// `leases follow --fix --yes --no-wait`, as admin.
fn follow(fake: &FakeApi) -> Output {
    follow_fix(fake, &["--no-wait"])
}

/// Waits until the fake has received the real (not dry-run) write to `path`.
fn until_sent(fake: &FakeApi, path: &str) {
    let sent = |fake: &FakeApi| {
        fake.requests()
            .iter()
            .any(|r| r.method == "PUT" && r.path.ends_with(path) && !r.query.contains("dryRun"))
    };
    let start = std::time::Instant::now();
    while !sent(fake) {
        assert!(start.elapsed() < WAIT, "the write to {path} was never sent");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_backfill_stored_before_its_answer_was_lost_is_reported_written_with_its_event() {
    for lost in [AfterCommit::Status(500), AfterCommit::Reset] {
        let fake = split();
        fake.inject(Fault::after_commit("PUT", CONFIGMAP_WRITE, lost.clone()).times(1));
        let out = backfill(&fake);
        // Written and read back: the exit is the verdict (nothing runs the snapshot
        // controller here), not a failed repair.
        out.code(1)
            .stderr_has(
                "read again, ConfigMap kube-system/k3s-etcd-snapshots holds the planned change",
            )
            .stderr_has("the write landed")
            .stderr_has("wrote ConfigMap kube-system/k3s-etcd-snapshots (resourceVersion");
        assert!(
            !out.stderr.contains("nothing was written"),
            "{lost:?}: {}",
            out.stderr
        );
        assert_eq!(entries(&fake), 2, "{lost:?}");
        assert_eq!(reasons(&fake), ["SnapshotEntriesBackfilled"], "{lost:?}");
    }
}

#[test]
fn a_backfill_the_server_failed_before_storing_is_reported_not_written_after_reading_again() {
    let fake = split();
    fake.inject(Fault::status("PUT", CONFIGMAP_WRITE, 500).times(1));
    backfill(&fake)
        .code(4)
        .one_line_error()
        .stderr_has("read again, ConfigMap kube-system/k3s-etcd-snapshots is unchanged: the write did not land; nothing was written");
    assert_eq!(entries(&fake), 1);
    assert!(reasons(&fake).is_empty());
}

#[test]
fn a_restore_stored_before_its_answer_was_lost_is_reported_written_with_its_event() {
    let (fake, _dir, backup, original) = backed_up();
    let before = reasons(&fake);
    fake.inject(Fault::after_commit("PUT", CONFIGMAP_WRITE, AfterCommit::Status(500)).times(1));
    restore(&fake, &backup, &["--fix", "--yes"])
        .stderr_has("the write landed")
        .stderr_has("wrote ConfigMap kube-system/k3s-etcd-snapshots");
    assert_eq!(
        fake.get("ConfigMap", Some("kube-system"), "k3s-etcd-snapshots")
            .unwrap()["data"],
        original
    );
    let after = reasons(&fake);
    assert_eq!(after.len(), before.len() + 1);
    assert_eq!(after.last().unwrap(), "SnapshotEntriesRestored");
}

#[test]
fn a_lock_move_stored_before_its_answer_was_lost_is_a_move_with_its_event() {
    for lost in [AfterCommit::Status(500), AfterCommit::Reset] {
        let fake = split();
        fake.inject(Fault::after_commit("PUT", LEASE_WRITE, lost.clone()).times(1));
        let out = follow(&fake);
        out.code(0)
            .stderr_has("read again, Lease kube-system/k3s holds the planned change")
            .stderr_has("wrote Lease kube-system/k3s (resourceVersion");
        assert!(
            !out.stderr.contains("nothing was written"),
            "{lost:?}: {}",
            out.stderr
        );
        assert_eq!(fake.lock_holder("Lease", "k3s").unwrap(), "s2");
        assert_eq!(reasons(&fake), ["LockMoved"], "{lost:?}");
    }
}

#[test]
fn a_lock_move_the_server_failed_before_storing_says_it_read_the_lease_again() {
    let fake = split();
    fake.inject(Fault::status("PUT", LEASE_WRITE, 503));
    follow(&fake)
        .code(4)
        .one_line_error()
        .stderr_has("read again, Lease kube-system/k3s is unchanged: the write did not land; nothing was written");
    assert_eq!(fake.lock_holder("Lease", "k3s").unwrap(), "s1");
    assert_eq!(reasons(&fake), ["LockMoveFailed"]);
}

/// The reply never comes; the person interrupts twice. What landed is read again, and the
/// Event is recorded for it.
#[test]
fn stopping_a_backfill_whose_answer_hangs_reports_the_stored_write_and_records_it() {
    let fake = split();
    fake.inject(Fault::after_commit(
        "PUT",
        CONFIGMAP_WRITE,
        AfterCommit::Hang,
    ));
    let mut run = k3sdoctor(["snapshots", "backfill", "--fix", "--yes", "--now", NOW])
        .cluster(&fake, Role::Admin)
        .spawn()
        .stream();
    until_sent(&fake, "configmaps/k3s-etcd-snapshots");
    run.signal(libc::SIGTERM);
    assert!(
        run.stderr_line_matching(WAIT, |l| l
            .contains("is already sent, so k3sdoctor first waits"))
            .is_some(),
        "the first signal was not acknowledged"
    );
    let out = run.signal_and_wait(libc::SIGTERM);
    out.code(4)
        .one_line_error()
        .stderr_has("stopped by a second interrupt before the answer to the write of ConfigMap kube-system/k3s-etcd-snapshots came; read again")
        .stderr_has("the write landed")
        .stderr_has("interrupted: finished the write first: wrote ConfigMap kube-system/k3s-etcd-snapshots");
    assert_eq!(entries(&fake), 2);
    assert_eq!(reasons(&fake), ["SnapshotEntriesBackfilled"]);
}

#[test]
fn stopping_a_lock_move_whose_answer_hangs_records_the_move_that_landed() {
    let fake = split();
    fake.inject(Fault::after_commit("PUT", LEASE_WRITE, AfterCommit::Hang));
    let mut run = k3sdoctor([
        "leases",
        "follow",
        "--fix",
        "--yes",
        "--no-wait",
        "--now",
        NOW,
    ])
    .cluster(&fake, Role::Admin)
    .spawn()
    .stream();
    until_sent(&fake, "leases/k3s");
    run.signal(libc::SIGTERM);
    assert!(
        run.stderr_line_matching(WAIT, |l| l.contains("interrupted: a write is already sent"))
            .is_some(),
        "the first signal was not acknowledged"
    );
    let out = run.signal_and_wait(libc::SIGTERM);
    out.code(4)
        .one_line_error()
        .stderr_has("stopped by a second interrupt")
        .stderr_has("read again, Lease kube-system/k3s names \"s2\"");
    assert_eq!(fake.lock_holder("Lease", "k3s").unwrap(), "s2");
    let events: Vec<Value> = events(&fake);
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0]["reason"], "LockMoved");
    assert!(
        events[0]["regarding"]["resourceVersion"].is_string(),
        "{events:#?}"
    );
}
