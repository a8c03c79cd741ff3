//! Snapshot records read from a pasted table: judged on what a row shows.

use serde_json::json;

use super::*;
use crate::diagnose::finding::FindingCode;
use crate::diagnose::leases::analyse_leases;
use crate::diagnose::test_cluster::{TestCluster, now};

/// What a `kubectl get etcdsnapshotfiles` row becomes: no time, finalizer, metadata or S3
/// settings. The name's digest is wrong for its node and location.
fn row(snapshot: &str) -> serde_json::Value {
    json!({
        "metadata": {"name": format!("local-{snapshot}-000000")},
        "spec": {"snapshotName": snapshot, "nodeName": "s1",
                 "location": format!("file:///db/{snapshot}")},
        "status": {"size": "8417312"}
    })
}

fn analyse(from_table: bool) -> SnapshotAnalysis {
    let mut state = TestCluster::k3s()
        .server("s1", "v1.30.6+k3s1")
        .lease("k3s", "s1", 1)
        .lease("k3s-etcd", "s1", 1)
        .snapshot_json(row("etcd-snapshot-s1-1717142400"))
        .snapshot_json(row("etcd-snapshot-s1-1717146000"))
        // An entry that differs from anything the row could encode.
        .snapshot_configmap(&[("local-etcd-snapshot-s1-1717142400", "{\"name\":\"x\"}")])
        .build();
    if from_table {
        state.snapshots_from_table = Some("table.txt".into());
    }
    let leases = analyse_leases(&state, Distro::K3s, now());
    analyse_snapshots(&state, Distro::K3s, now(), &leases)
}

fn codes(a: &SnapshotAnalysis) -> Vec<FindingCode> {
    a.findings.iter().map(|f| f.code).collect()
}

#[test]
fn table_rows_are_present_or_missing_and_never_stale_mismatched_or_idle() {
    let a = analyse(true);
    let states: Vec<EntryState> = a.snapshots.iter().map(|r| r.state).collect();
    assert_eq!(states, [EntryState::Present, EntryState::Missing]);
    let codes = codes(&a);
    for code in [
        FindingCode::SnapshotStaleInConfigmap,
        FindingCode::SnapshotNameDigestMismatch,
        FindingCode::SnapshotControllerIdle,
        FindingCode::SnapshotOrphanedInConfigmap,
    ] {
        assert!(!codes.contains(&code), "{code:?}: {codes:?}");
    }
    assert!(codes.contains(&FindingCode::SnapshotMissingFromConfigmap));
    assert!(codes.contains(&FindingCode::DumpIncomplete), "{codes:?}");
}

#[test]
fn the_same_records_as_objects_are_judged_on_every_field() {
    // The control: without the table's mark the missing fields are read as differences.
    let codes = codes(&analyse(false));
    assert!(
        codes.contains(&FindingCode::SnapshotNameDigestMismatch),
        "{codes:?}"
    );
    assert!(!codes.contains(&FindingCode::DumpIncomplete), "{codes:?}");
}
