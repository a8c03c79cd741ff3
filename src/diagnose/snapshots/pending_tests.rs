//! Entries not written yet (pending), and entries of CRs being deleted: the controller's
//! normal delay is no difference.
// Test-only: its panics are assertions, never reached on bad input.
#![cfg(test)]

use serde_json::json;

use super::tests::{AFFECTED, aligned, analyse, codes, entry, servers, split};
use super::*;
use crate::diagnose::finding::{FindingCode, Severity};
use crate::diagnose::test_cluster::{TestCluster, now, snapshot_json};

/// A CR younger than the controller's normal delay has no entry yet because
/// k3s has not had time to write it: pending, never a difference or a finding.
#[test]
fn a_cr_younger_than_a_minute_is_pending_not_missing() {
    let now_s = now().as_second();
    for (age, expected) in [
        (-1, EntryState::Pending),
        (0, EntryState::Pending),
        (59, EntryState::Pending),
        (60, EntryState::Missing),
        (3600, EntryState::Missing),
    ] {
        let a = analyse(
            aligned()
                .extra_metadata()
                .snapshot("s1", now_s - age, true)
                .snapshot_configmap(&[]),
        );
        assert_eq!(a.snapshots[0].state, expected, "{age}s old");
        if expected == EntryState::Pending {
            assert!(a.findings.is_empty(), "{age}s old: {:?}", a.findings);
            assert!(!a.has_differences());
        } else {
            assert!(
                a.findings
                    .iter()
                    .any(|f| f.code == FindingCode::SnapshotMissingFromConfigmap),
                "{age}s old: {:?}",
                a.findings
            );
        }
    }
}

/// A CR seconds old on a cluster whose controller cannot write (a split on
/// an affected version, no `-etcd` holder, or an idle controller) is missing now: nothing will
/// write its entry.
#[test]
fn a_young_cr_is_missing_when_nothing_writes() {
    let young = now().as_second() - 10;
    let with = |c: TestCluster| {
        analyse(
            c.extra_metadata()
                .snapshot("s1", young, true)
                .snapshot_configmap(&[]),
        )
    };
    let writing = with(aligned());
    assert_eq!(writing.snapshots[0].state, EntryState::Pending);
    assert_eq!(writing.controller_not_writing, None);
    let split = with(split());
    assert_eq!(split.snapshots[0].state, EntryState::Missing);
    assert!(split.has_differences());
    assert!(
        codes(&split).contains(&(Severity::Error, FindingCode::SnapshotMissingFromConfigmap)),
        "{:?}",
        split.findings
    );
    let expired = with(
        servers(AFFECTED)
            .lease("k3s", "s1", 1)
            .lease("k3s-etcd", "s1", 900),
    );
    assert_eq!(expired.snapshots[0].state, EntryState::Missing);
    let missing = &expired
        .findings
        .iter()
        .find(|f| f.code == FindingCode::SnapshotMissingFromConfigmap)
        .unwrap()
        .message;
    assert!(
        missing.contains("Nothing writes them now: k3s-etcd is expired"),
        "{missing}"
    );
    // An older CR without the controller's finalizer: the controller is idle.
    let mut unprocessed = snapshot_json("s2", now().as_second() - 3600, true);
    unprocessed["metadata"]["finalizers"] = json!([]);
    let idle = with(aligned().snapshot_json(unprocessed));
    assert!(
        idle.snapshots
            .iter()
            .all(|r| r.state == EntryState::Missing)
    );
}

/// The entry of a CR whose deletion began seconds ago is about to go, not an
/// orphan; one whose deletion has hung past the grace is; and on a split the idle controller
/// never removes it, so no grace.
#[test]
fn the_entry_of_a_cr_deleted_seconds_ago_is_not_an_orphan_yet() {
    let ts = now().as_second() - 7200;
    let (key, value) = entry("s1", ts);
    let deleting = |secs_ago: i64| {
        let mut cr = snapshot_json("s1", ts, true);
        let at = Timestamp::from_second(now().as_second() - secs_ago).unwrap();
        cr["metadata"]["deletionTimestamp"] = json!(at.to_string());
        cr
    };
    let with = |c: TestCluster, secs_ago: i64| {
        analyse(
            c.extra_metadata()
                .snapshot_json(deleting(secs_ago))
                .snapshot_configmap(&[(&key, &value)]),
        )
    };
    let moment = with(aligned(), 1);
    assert!(moment.orphaned.is_empty(), "{:?}", moment.orphaned);
    assert!(moment.findings.is_empty(), "{:?}", moment.findings);
    assert!(!moment.has_differences());
    let hung = with(aligned(), 300);
    assert_eq!(hung.orphaned.len(), 1);
    assert!(codes(&hung).contains(&(Severity::Warning, FindingCode::SnapshotOrphanedInConfigmap)));
    let on_split = with(split(), 1);
    assert_eq!(on_split.orphaned.len(), 1);
}
