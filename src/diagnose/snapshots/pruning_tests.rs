//! Entries missing because k3s pruned the oldest at the 1 MiB limit.

use serde_json::json;

use super::tests::{T0, aligned, analyse, codes};
use super::*;
use crate::diagnose::finding::{FindingCode, Severity};
use crate::diagnose::test_cluster::snapshot_json;
use crate::model::snapshot_entry::encode;
use crate::model::snapshot_key::data_key;

/// A CR whose metadata (Rancher's compressed cluster spec) makes its entry ~10 KiB.
fn big(node: &str, ts: i64) -> serde_json::Value {
    let mut cr = snapshot_json(node, ts, true);
    cr["spec"]["metadata"]["provisioning-cluster-spec"] = json!("A".repeat(7600));
    cr
}

#[test]
fn old_entries_pruned_at_the_size_limit_are_explained() {
    let mut cluster = aligned().extra_metadata().snapshot_json(big("s1", T0));
    let mut entries = Vec::new();
    for i in 0..100 {
        let cr = big("s2", T0 + 1000 + i);
        let file = SnapshotFile::from_json(&cr);
        entries.push((data_key(&file), encode(&file, S3Shape::Embedded)));
        cluster = cluster.snapshot_json(cr);
    }
    let refs: Vec<(&str, &str)> = entries
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let a = analyse(cluster.snapshot_configmap(&refs));
    assert_eq!(
        a.snapshots[0].state,
        EntryState::PrunedForSize,
        "{} bytes",
        a.configmap_bytes
    );
    assert_eq!(
        codes(&a),
        [(Severity::Info, FindingCode::SnapshotPrunedForSize)]
    );
    assert!(!a.has_differences());
    // The message and the docs (docs/snapshots.md) state the same rule.
    let readme = include_str!("../../../docs/snapshots.md")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let message = &a.findings[0].message;
    for part in [
        "no newer than the oldest entry left",
        "would pass",
        "within four of its largest entries",
    ] {
        assert!(message.contains(part), "message lacks {part:?}: {message}");
        assert!(readme.contains(part), "docs/snapshots.md lacks {part:?}");
    }

    // The same CR missing from a ConfigMap far from the limit is an error.
    let small = analyse(
        aligned()
            .extra_metadata()
            .snapshot_json(big("s1", T0))
            .snapshot_configmap(&refs[..10]),
    );
    assert_eq!(small.snapshots[0].state, EntryState::Missing);
}

#[test]
fn a_reconcile_sized_gap_of_the_oldest_entries_is_explained() {
    // 46 entries remain (about 470 KiB, far from the limit) and the 84 older CRs have none:
    // all 130 together pass the limit, so k3s had to drop the oldest (a reconcile drops 4, 12,
    // 24, 40 … at once, and later writes go on dropping the oldest).
    let mut cluster = aligned().extra_metadata();
    let mut entries = Vec::new();
    for i in 0..130 {
        let cr = big("s2", T0 + i);
        if i >= 84 {
            let file = SnapshotFile::from_json(&cr);
            entries.push((data_key(&file), encode(&file, S3Shape::Embedded)));
        }
        cluster = cluster.snapshot_json(cr);
    }
    let refs: Vec<(&str, &str)> = entries
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let a = analyse(cluster.snapshot_configmap(&refs));
    assert!(
        a.configmap_bytes < CONFIGMAP_LIMIT / 2,
        "{}",
        a.configmap_bytes
    );
    let pruned = a
        .snapshots
        .iter()
        .filter(|r| r.state == EntryState::PrunedForSize)
        .count();
    assert_eq!(pruned, 84);
    assert_eq!(
        codes(&a),
        [(Severity::Info, FindingCode::SnapshotPrunedForSize)]
    );
    // A gap whose entries would all fit is no pruning: they are missing.
    let mut few = aligned().extra_metadata();
    let mut kept = Vec::new();
    for i in 0..20 {
        let cr = big("s2", T0 + i);
        if i >= 10 {
            let file = SnapshotFile::from_json(&cr);
            kept.push((data_key(&file), encode(&file, S3Shape::Embedded)));
        }
        few = few.snapshot_json(cr);
    }
    let refs: Vec<(&str, &str)> = kept.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let a = analyse(few.snapshot_configmap(&refs));
    assert!(a.snapshots.iter().any(|r| r.state == EntryState::Missing));
}
