use serde_json::json;

use super::*;
use crate::diagnose::finding::{FindingCode, Severity};
use crate::diagnose::leases::analyse_leases;
use crate::diagnose::test_cluster::{TestCluster, now, snapshot_json};
use crate::model::snapshot_entry::encode;
use crate::model::snapshot_key::data_key;

pub(super) const AFFECTED: &str = "v1.29.4+k3s1";
/// NOW is 2024-05-31T12:10:40Z; snapshots are hours older.
pub(super) const T0: i64 = 1_717_142_400;

pub(super) fn servers(version: &str) -> TestCluster {
    TestCluster::k3s()
        .server("s1", version)
        .server("s2", version)
        .server("s3", version)
}

pub(super) fn aligned() -> TestCluster {
    servers(AFFECTED)
        .lease("k3s", "s1", 1)
        .lease("k3s-etcd", "s1", 1)
}

pub(super) fn split() -> TestCluster {
    servers(AFFECTED)
        .lease("k3s", "s1", 1)
        .lease("k3s-etcd", "s2", 1)
}

pub(super) fn analyse(cluster: TestCluster) -> SnapshotAnalysis {
    let state = cluster.build();
    let leases = analyse_leases(&state, Distro::K3s, now());
    analyse_snapshots(&state, Distro::K3s, now(), &leases)
}

pub(super) fn codes(a: &SnapshotAnalysis) -> Vec<(Severity, FindingCode)> {
    a.findings.iter().map(|f| (f.severity, f.code)).collect()
}

/// What k3s itself would have written for this CR.
pub(super) fn entry(node: &str, ts: i64) -> (String, String) {
    let file = SnapshotFile::from_json(&snapshot_json(node, ts, true));
    (data_key(&file), encode(&file, S3Shape::Embedded))
}

#[test]
fn no_extra_metadata_and_no_configmap_is_healthy() {
    let a = analyse(
        aligned()
            .snapshot("s1", T0, false)
            .snapshot("s2", T0 + 60, false),
    );
    assert!(a.findings.is_empty(), "{:?}", a.findings);
    assert!(!a.has_differences());
    assert!(
        a.snapshots
            .iter()
            .all(|r| r.state == EntryState::NotExpected)
    );
}

#[test]
fn entries_k3s_wrote_itself_are_present() {
    let (k1, v1) = entry("s1", T0);
    let (k2, v2) = entry("s2", T0 + 60);
    let a = analyse(
        aligned()
            .extra_metadata()
            .snapshot("s1", T0, true)
            .snapshot("s2", T0 + 60, true)
            .snapshot_configmap(&[(&k1, &v1), (&k2, &v2)]),
    );
    assert!(a.findings.is_empty(), "{:?}", a.findings);
    assert!(a.snapshots.iter().all(|r| r.state == EntryState::Present));
}

#[test]
fn missing_entries_on_a_split_name_the_root_cause() {
    let (k1, v1) = entry("s1", T0);
    let a = analyse(
        split()
            .extra_metadata()
            .snapshot("s1", T0, true)
            .snapshot("s2", T0 + 60, true)
            .snapshot_configmap(&[(&k1, &v1)]),
    );
    assert_eq!(
        codes(&a),
        [(Severity::Error, FindingCode::SnapshotMissingFromConfigmap)]
    );
    let f = &a.findings[0];
    assert!(
        f.message
            .contains("Cause: k3s and k3s-etcd are held by different servers"),
        "{}",
        f.message
    );
    assert!(
        f.remediation.starts_with("k3sdoctor leases follow --fix"),
        "{}",
        f.remediation
    );
    assert!(a.has_differences());
}

#[test]
fn missing_entries_without_a_split_point_to_backfill() {
    let a = analyse(
        aligned()
            .extra_metadata()
            .snapshot("s1", T0, true)
            .snapshot_configmap(&[]),
    );
    assert_eq!(
        a.findings[0].remediation,
        "k3sdoctor snapshots backfill --fix"
    );
}

#[test]
fn orphaned_and_stale_entries() {
    let (k1, v1) = entry("s1", T0);
    let stale = v1.replace("8417312", "1");
    let (k2, v2) = entry("gone", T0 + 5);
    let a = analyse(
        aligned()
            .extra_metadata()
            .snapshot("s1", T0, true)
            .snapshot_configmap(&[(&k1, &stale), (&k2, &v2)]),
    );
    assert_eq!(
        codes(&a),
        [
            (Severity::Warning, FindingCode::SnapshotStaleInConfigmap),
            (Severity::Warning, FindingCode::SnapshotOrphanedInConfigmap)
        ]
    );
    assert_eq!(a.snapshots[0].differences()[0].field, "size");
    assert_eq!(a.orphaned[0].key, k2);
}

#[test]
fn controller_idle_when_old_crs_lack_the_finalizer() {
    let mut cr = snapshot_json("s2", T0, false);
    cr["metadata"]["finalizers"] = json!([]);
    let a = analyse(split().snapshot_json(cr));
    let idle = a
        .findings
        .iter()
        .find(|f| f.code == FindingCode::SnapshotControllerIdle)
        .unwrap();
    assert_eq!(idle.severity, Severity::Error);
    assert!(idle.message.contains("never started"), "{}", idle.message);
}

#[test]
fn digest_mismatch_and_legacy_keys_are_reported() {
    let mut cr = snapshot_json("s1", T0, false);
    cr["spec"]["nodeName"] = json!("s9");
    let a = analyse(
        aligned()
            .snapshot_json(cr)
            .snapshot_configmap(&[("etcd-snapshot-s1-1634567890", "{\"name\":\"x\"}")]),
    );
    let found: Vec<FindingCode> = a.findings.iter().map(|f| f.code).collect();
    assert!(found.contains(&FindingCode::SnapshotNameDigestMismatch));
    // One name: the verb agrees ("1 name does not match", never "1 name do not match").
    let mismatch = a
        .findings
        .iter()
        .find(|f| f.code == FindingCode::SnapshotNameDigestMismatch)
        .unwrap();
    assert!(
        mismatch
            .message
            .starts_with("1 name does not match its node and location"),
        "{}",
        mismatch.message
    );
    assert!(found.contains(&FindingCode::ConfigmapLegacyFormat));
    assert_eq!(a.legacy_keys, ["etcd-snapshot-s1-1634567890"]);
}

#[test]
fn before_the_metadata_rule_every_cr_gets_an_entry() {
    let v = "v1.28.3+k3s1";
    let cluster = servers(v)
        .lease("k3s", "s1", 1)
        .lease("k3s-etcd", "s1", 1)
        .snapshot("s1", T0, false)
        .snapshot_configmap(&[]);
    let a = analyse(cluster);
    assert_eq!(a.entries_need_metadata, Some(false));
    assert_eq!(a.snapshots[0].state, EntryState::Missing);
}

#[test]
fn rke2_uses_its_own_configmap() {
    let state = TestCluster::new(Distro::Rke2)
        .server("r1", "v1.29.5+rke2r1")
        .lease("rke2", "r1", 1)
        .lease("rke2-etcd", "r1", 1)
        .extra_metadata()
        .snapshot("r1", T0, true)
        .snapshot_configmap(&[])
        .build();
    let leases = analyse_leases(&state, Distro::Rke2, now());
    let a = analyse_snapshots(&state, Distro::Rke2, now(), &leases);
    assert_eq!(a.configmap, "rke2-etcd-snapshots");
    assert!(a.findings[0].object.contains("rke2-etcd-snapshots"));
}

#[test]
fn a_node_named_s3_may_hold_its_entry_under_either_key() {
    // k3s's OnChange path keys this local snapshot `s3-…`, its reconcile `local-…`.
    let cluster = || {
        TestCluster::k3s()
            .server("s1", AFFECTED)
            .server("s3", AFFECTED)
            .server("s2", AFFECTED)
            .lease("k3s", "s1", 1)
            .lease("k3s-etcd", "s1", 1)
            .extra_metadata()
            .snapshot("s3", T0, true)
    };
    let (local_key, value) = entry("s3", T0);
    let s3_key = local_key.replacen("local-", "s3-", 1);
    for key in [&local_key, &s3_key] {
        let a = analyse(cluster().snapshot_configmap(&[(key, &value)]));
        assert!(a.findings.is_empty(), "{key}: {:?}", a.findings);
        assert_eq!(a.snapshots[0].state, EntryState::Present);
        assert_eq!(&a.snapshots[0].key(), key);
        assert_eq!(a.snapshots[0].key_note().is_some(), key == &s3_key);
    }
    // Both at once: neither is an orphan.
    let a = analyse(cluster().snapshot_configmap(&[(&local_key, &value), (&s3_key, &value)]));
    assert!(a.orphaned.is_empty(), "{:?}", a.orphaned);
    // Neither: missing under the key reconcile uses.
    let a = analyse(cluster().snapshot_configmap(&[]));
    assert_eq!(a.snapshots[0].state, EntryState::Missing);
    assert_eq!(a.snapshots[0].key(), local_key);
}

#[test]
fn an_entry_for_a_snapshot_without_metadata_is_one_k3s_reconcile_treats_as_orphaned() {
    let cr = snapshot_json("s1", T0, false);
    let file = SnapshotFile::from_json(&cr);
    let (key, value) = (data_key(&file), encode(&file, S3Shape::Embedded));
    let a = analyse(
        aligned()
            .extra_metadata()
            .snapshot_json(cr)
            .snapshot_configmap(&[(&key, &value)]),
    );
    assert_eq!(a.snapshots[0].state, EntryState::Extra);
    assert_eq!(a.orphaned.len(), 1);
    assert_eq!(
        a.orphaned[0].cr_without_entry.as_deref(),
        Some(a.snapshots[0].name())
    );
    assert!(a.has_differences());
}
