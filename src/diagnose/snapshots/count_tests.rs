//! The snapshot ConfigMap read from a pasted `kubectl get configmaps` table:
//! its entry count judged against the CRs k3s gives an entry, by k3s's rules.
// Test-only: its panics are assertions, never reached on bad input.
#![cfg(test)]

use std::collections::BTreeMap;

use super::*;
use crate::diagnose::finding::{FindingCode, Severity};
use crate::diagnose::leases::analyse_leases;
use crate::diagnose::test_cluster::{TestCluster, now};
use crate::model::configmap_listing::ConfigMapListing;

/// Four CRs on v1.30 (entries need metadata): three with metadata, one without, one more of
/// them being deleted; the ConfigMap shown only as `k3s-etcd-snapshots <entries>`.
fn analyse(entries: Option<usize>, with_object: bool) -> SnapshotAnalysis {
    let t = now().as_second();
    let mut deleting = crate::diagnose::test_cluster::snapshot_json("s1", t - 9000, true);
    deleting["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z".into();
    let mut cluster = TestCluster::k3s()
        .server("s1", "v1.30.6+k3s1")
        .lease("k3s", "s1", 1)
        .lease("k3s-etcd", "s1", 1)
        .snapshot("s1", t - 7200, true)
        .snapshot("s1", t - 3600, true)
        .snapshot("s1", t - 1800, false)
        .snapshot_json(deleting);
    if with_object {
        cluster = cluster.snapshot_configmap(&[]);
    }
    let mut state = cluster.build();
    if !with_object {
        state.configmaps = None;
    }
    state.configmap_listing = Some(ConfigMapListing {
        file: "cm.txt".into(),
        entries: entries
            .map(|n| BTreeMap::from([("k3s-etcd-snapshots".to_string(), n)]))
            .unwrap_or_default(),
        whole_namespace: true,
    });
    let leases = analyse_leases(&state, Distro::K3s, now());
    analyse_snapshots(&state, Distro::K3s, now(), &leases)
}

fn missing(a: &SnapshotAnalysis) -> Vec<String> {
    a.findings
        .iter()
        // The info finding of the CR without metadata shares the code.
        .filter(|f| {
            f.code == FindingCode::SnapshotMissingFromConfigmap && f.severity != Severity::Info
        })
        .map(|f| f.message.to_string())
        .collect()
}

#[test]
fn a_count_is_judged_against_the_crs_k3s_gives_an_entry() {
    let a = analyse(Some(1), false);
    let count = a.entry_count.as_ref().expect("a count");
    // Two: the one without metadata gets none on v1.30, the deleting one loses its entry.
    assert_eq!(
        (
            count.entries,
            count.should_have_entry,
            count.without_entry_at_least
        ),
        (1, 2, 1)
    );
    assert!(a.has_differences());
    assert!(
        a.snapshots
            .iter()
            .all(|r| matches!(r.state, EntryState::Unknown | EntryState::Deleting))
    );
    assert_eq!(a.configmap_entries, 1);
    assert!(a.configmap_present);
    let [message] = &missing(&a)[..] else {
        panic!("{:?}", a.findings)
    };
    assert!(message.contains("so at least 1 has none"), "{message}");
    let enough = analyse(Some(2), false);
    assert!(!enough.has_differences() && missing(&enough).is_empty());
}

#[test]
fn data_0_or_absent_from_a_listing_is_known_empty_and_named() {
    for entries in [Some(0), None] {
        let a = analyse(entries, false);
        assert_eq!(a.entry_count, None);
        let states: Vec<EntryState> = a.snapshots.iter().map(|r| r.state).collect();
        assert_eq!(
            states.iter().filter(|s| **s == EntryState::Missing).count(),
            2,
            "{states:?}"
        );
        assert_eq!(a.configmap_present, entries.is_some());
        let [message] = &missing(&a)[..] else {
            panic!("{:?}", a.findings)
        };
        assert!(
            message
                .starts_with("2 snapshots that k3s lists should be in k3s-etcd-snapshots (cm.txt"),
            "{message}"
        );
    }
}

#[test]
fn the_object_wins_over_the_table() {
    let a = analyse(Some(7), true);
    assert_eq!(a.entry_count, None);
    assert_eq!(a.configmap_entries, 0);
    let [message] = &missing(&a)[..] else {
        panic!("{:?}", a.findings)
    };
    assert!(!message.contains("cm.txt"), "{message}");
}
