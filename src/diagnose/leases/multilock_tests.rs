//! The ConfigMap copies of the locks: alone before 1.24, beside the Lease (multilock) to 1.27,
//! ignored from 1.28.

use super::tests::{AFFECTED, MULTILOCK, analyse, codes, three_servers};
use super::*;
use crate::diagnose::finding::FindingCode::*;
use crate::diagnose::leases::lock_status::{LockKind, LockState};
use crate::diagnose::test_cluster::TestCluster;

#[test]
fn configmap_only_locks_on_old_versions() {
    let a = analyse(
        three_servers("v1.23.17+k3s1")
            .configmap_lock("k3s", "s1", 1)
            .lease("k3s-etcd", "s3", 1)
            .configmap_lock("k3s-etcd", "s1", 1),
    );
    // The stray Lease is not what 1.23 reads; the ConfigMap copies agree: healthy.
    assert!(a.findings.is_empty(), "{:?}", a.findings);
    assert_eq!(a.locks[0].kind, LockKind::ConfigMap);
}

#[test]
fn multilock_copies_are_both_read() {
    let agree = analyse(
        three_servers(MULTILOCK)
            .lease("k3s", "s1", 1)
            .configmap_lock("k3s", "s1", 1)
            .lease("k3s-etcd", "s1", 1)
            .configmap_lock("k3s-etcd", "s1", 1),
    );
    assert!(agree.findings.is_empty(), "{:?}", agree.findings);
    assert_eq!(agree.locks[0].kind, LockKind::Both);

    let disagree = analyse(
        three_servers(MULTILOCK)
            .lease("k3s", "s2", 1)
            .configmap_lock("k3s", "s1", 1)
            .lease("k3s-etcd", "s1", 1)
            .configmap_lock("k3s-etcd", "s1", 1),
    );
    assert_eq!(codes(&disagree), [(Severity::Error, LeaseCopiesDisagree)]);
    assert_eq!(disagree.locks[0].state, LockState::Disagreeing);
}

#[test]
fn mid_upgrade_a_1_28_holder_renews_only_the_lease_and_that_is_normal() {
    // s3 runs 1.28 and holds both locks; the 1.27 servers' ConfigMap copies still name s1.
    let c = || {
        TestCluster::k3s()
            .server("s1", MULTILOCK)
            .server("s2", MULTILOCK)
            .server("s3", "v1.28.11+k3s1")
            .lease("k3s", "s3", 1)
            .configmap_lock("k3s", "s1", 600)
            .lease("k3s-etcd", "s3", 1)
            .configmap_lock("k3s-etcd", "s1", 600)
    };
    let a = analyse(c());
    assert!(
        !codes(&a).contains(&(Severity::Error, LeaseCopiesDisagree)),
        "{:?}",
        codes(&a)
    );
    assert_eq!(a.locks[0].state, LockState::Held);
    assert_eq!(a.locks[0].holder.as_deref(), Some("s3"));
    // A 1.27 holder writes both copies: there, disagreeing copies are real.
    let old_holder = analyse(
        TestCluster::k3s()
            .server("s1", MULTILOCK)
            .server("s2", MULTILOCK)
            .server("s3", "v1.28.11+k3s1")
            .lease("k3s", "s2", 1)
            .configmap_lock("k3s", "s1", 1)
            .lease("k3s-etcd", "s1", 1)
            .configmap_lock("k3s-etcd", "s1", 1),
    );
    assert!(codes(&old_holder).contains(&(Severity::Error, LeaseCopiesDisagree)));
}

#[test]
fn multilock_split_names_both_copies_in_the_repair() {
    let a = analyse(
        three_servers(MULTILOCK)
            .lease("k3s", "s1", 1)
            .configmap_lock("k3s", "s1", 1)
            .lease("k3s-etcd", "s2", 1)
            .configmap_lock("k3s-etcd", "s2", 1),
    );
    assert_eq!(codes(&a), [(Severity::Error, LeaseSplit)]);
    assert!(
        a.findings[0]
            .remediation
            .contains("its Lease and ConfigMap copies")
    );
}

#[test]
fn stale_configmap_copies_are_ignored_from_1_28() {
    let a = analyse(
        three_servers(AFFECTED)
            .lease("k3s", "s1", 1)
            .lease("k3s-etcd", "s1", 1)
            .configmap_lock("k3s", "s3", 9_000_000)
            .configmap_annotation("k3s-etcd", "garbage"),
    );
    assert!(a.findings.is_empty(), "{:?}", a.findings);
    assert!(a.locks[0].copies.config_map_ignored);
}

#[test]
fn malformed_annotation_is_reported_where_it_is_read() {
    let a = analyse(
        three_servers(MULTILOCK)
            .lease("k3s", "s1", 1)
            .configmap_annotation("k3s", "{not json")
            .lease("k3s-etcd", "s1", 1)
            .configmap_lock("k3s-etcd", "s1", 1),
    );
    assert_eq!(codes(&a), [(Severity::Error, LeaseRecordMalformed)]);
}
