use super::*;
use crate::diagnose::finding::FindingCode::*;
use crate::diagnose::leases::lock_status::{LockKind, LockState};
use crate::diagnose::test_cluster::{TestCluster, now};

pub(super) const AFFECTED: &str = "v1.29.4+k3s1";
pub(super) const FIXED: &str = "v1.29.6+k3s1";
pub(super) const MULTILOCK: &str = "v1.27.10+k3s2";

pub(super) fn three_servers(version: &str) -> TestCluster {
    TestCluster::k3s()
        .server("s1", version)
        .server("s2", version)
        .server("s3", version)
        .agent("w1", version)
}

pub(super) fn codes(a: &LeaseAnalysis) -> Vec<(Severity, FindingCode)> {
    a.findings.iter().map(|f| (f.severity, f.code)).collect()
}

pub(super) fn analyse(state: TestCluster) -> LeaseAnalysis {
    analyse_leases(&state.build(), Distro::K3s, now())
}

#[test]
fn healthy_cluster_has_no_findings() {
    let a = analyse(
        three_servers(AFFECTED)
            .lease("k3s", "s2", 1)
            .lease("k3s-etcd", "s2", 2),
    );
    assert!(a.findings.is_empty(), "{:?}", a.findings);
    assert_eq!(a.locks[0].kind, LockKind::Lease);
    assert_eq!(a.locks[1].state, LockState::Held);
    assert_eq!(a.locks[1].node.as_ref().unwrap().name, "s2");
    assert_eq!(
        (a.cluster.servers, a.cluster.agents, a.cluster.etcd_members),
        (3, 1, 3)
    );
}

#[test]
fn split_on_an_affected_version_is_an_error_with_the_fixed_release() {
    let a = analyse(
        three_servers(AFFECTED)
            .lease("k3s", "s1", 1)
            .lease("k3s-etcd", "s2", 2),
    );
    assert_eq!(codes(&a), [(Severity::Error, LeaseSplit)]);
    let f = &a.findings[0];
    assert!(
        f.message.contains("k3s is held by s1 but k3s-etcd by s2"),
        "{}",
        f.message
    );
    assert!(f.remediation.contains("v1.29.6+k3s1"), "{}", f.remediation);
    assert!(
        f.remediation
            .starts_with("k3sdoctor leases follow --fix (moves k3s to s2"),
        "{}",
        f.remediation
    );
    assert_eq!(
        a.verdict_version.as_ref().map(ProductVersion::as_str),
        Some(AFFECTED)
    );
}

#[test]
fn split_on_a_fixed_version_is_info() {
    let a = analyse(
        three_servers(FIXED)
            .lease("k3s", "s1", 1)
            .lease("k3s-etcd", "s2", 2),
    );
    assert_eq!(codes(&a), [(Severity::Info, LeaseSplit)]);
}

#[test]
fn the_etcd_holders_version_decides_during_an_upgrade() {
    let upgraded_etcd_holder = TestCluster::k3s()
        .server("s1", AFFECTED)
        .server("s2", FIXED)
        .lease("k3s", "s1", 1)
        .lease("k3s-etcd", "s2", 1);
    let a = analyse(upgraded_etcd_holder);
    assert_eq!(
        codes(&a),
        [
            (Severity::Warning, MixedVersions),
            (Severity::Info, LeaseSplit)
        ]
    );
    assert_eq!(
        a.verdict_version.as_ref().map(ProductVersion::as_str),
        Some(FIXED)
    );

    let old_etcd_holder = TestCluster::k3s()
        .server("s1", FIXED)
        .server("s2", AFFECTED)
        .lease("k3s", "s1", 1)
        .lease("k3s-etcd", "s2", 1);
    assert_eq!(
        codes(&analyse(old_etcd_holder))[0],
        (Severity::Error, LeaseSplit)
    );
}

#[test]
fn holder_is_mapped_by_hostname_not_node_name() {
    let a = analyse(
        TestCluster::k3s()
            .server_named("node-a", "host-a.lan", AFFECTED)
            .server("node-b", AFFECTED)
            .lease("k3s", "host-a.lan", 1)
            .lease("k3s-etcd", "host-a.lan", 1),
    );
    assert!(a.findings.is_empty(), "{:?}", a.findings);
    let node = a.locks[0].node.as_ref().unwrap();
    assert_eq!(
        (node.name.as_str(), node.matched_by),
        (
            "node-a",
            crate::model::node::IdentityMatch::HostnameAnnotation
        )
    );
}

#[test]
fn expired_lock() {
    let a = analyse(
        three_servers(AFFECTED)
            .lease("k3s", "s1", 1)
            .lease("k3s-etcd", "s1", 300),
    );
    assert_eq!(codes(&a), [(Severity::Error, LeaseExpired)]);
    assert_eq!(a.locks[1].state, LockState::Expired);
    assert!(
        a.findings[0].message.contains("5m ago"),
        "{}",
        a.findings[0].message
    );
}

#[test]
fn renewals_within_the_skew_allowance_are_fresh() {
    let a = analyse(
        three_servers(AFFECTED)
            .lease("k3s", "s1", 54)
            .lease("k3s-etcd", "s1", 1),
    );
    assert!(a.findings.is_empty(), "{:?}", a.findings);
}

#[test]
fn released_lock_is_a_warning_at_first_and_an_error_when_it_stays() {
    let fresh = analyse(
        three_servers(AFFECTED)
            .lease("k3s", "", 3)
            .lease("k3s-etcd", "s1", 1),
    );
    assert_eq!(codes(&fresh), [(Severity::Warning, LeaseReleased)]);
    assert_eq!(fresh.locks[0].state, LockState::Released);
    let stuck = analyse(
        three_servers(AFFECTED)
            .lease("k3s", "", 120)
            .lease("k3s-etcd", "s1", 1),
    );
    assert_eq!(codes(&stuck), [(Severity::Error, LeaseReleased)]);
}

#[test]
fn holder_without_a_node_but_with_a_live_apiserver_is_an_agentless_server() {
    let a = analyse(
        three_servers(AFFECTED)
            .apiserver_identity("cp-1", 5)
            .lease("k3s", "cp-1", 1)
            .lease("k3s-etcd", "s1", 1),
    );
    assert!(
        codes(&a).contains(&(Severity::Info, LeaseHolderAgentless)),
        "{:?}",
        codes(&a)
    );
    assert!(!codes(&a).contains(&(Severity::Error, LeaseHolderUnknown)));
    // An identity lease that stopped being renewed an hour ago proves nothing.
    let stale = analyse(
        three_servers(AFFECTED)
            .apiserver_identity("cp-1", 2 * 3600)
            .lease("k3s", "cp-1", 1)
            .lease("k3s-etcd", "cp-1", 1),
    );
    assert_eq!(
        codes(&stale),
        [
            (Severity::Error, LeaseHolderUnknown),
            (Severity::Error, LeaseHolderUnknown)
        ]
    );
}

#[test]
fn holder_that_is_no_node_or_not_ready() {
    let a = analyse(
        three_servers(AFFECTED)
            .lease("k3s", "gone", 1)
            .lease("k3s-etcd", "gone", 1),
    );
    assert_eq!(
        codes(&a),
        [
            (Severity::Error, LeaseHolderUnknown),
            (Severity::Error, LeaseHolderUnknown)
        ]
    );
    let b = analyse(
        TestCluster::k3s()
            .not_ready_server("s1", AFFECTED)
            .server("s2", AFFECTED)
            .lease("k3s", "s1", 1)
            .lease("k3s-etcd", "s1", 1),
    );
    assert_eq!(
        codes(&b),
        [
            (Severity::Error, LeaseHolderNotReady),
            (Severity::Error, LeaseHolderNotReady)
        ]
    );
    let agent = analyse(
        three_servers(AFFECTED)
            .lease("k3s", "w1", 1)
            .lease("k3s-etcd", "s1", 1),
    );
    assert!(codes(&agent).contains(&(Severity::Error, LeaseHolderNotReady)));
}

#[test]
fn missing_etcd_lock_where_managed_etcd_runs() {
    let a = analyse(three_servers(AFFECTED).lease("k3s", "s1", 1));
    assert_eq!(codes(&a), [(Severity::Error, LeaseMissing)]);
    assert_eq!(a.locks[1].state, LockState::Missing);
}

#[test]
fn no_etcd_lock_is_fine_with_an_external_datastore() {
    let kine = TestCluster::k3s().agent("w1", AFFECTED);
    let mut state = kine.build();
    // A server without the etcd role: kine / external SQL.
    let server: k8s_openapi::api::core::v1::Node = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "s1", "labels": {"node-role.kubernetes.io/control-plane": "true"}},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}
    }))
    .unwrap();
    state
        .nodes
        .as_mut()
        .unwrap()
        .push(crate::model::node::NodeFacts::from_api(&server));
    let lease: k8s_openapi::api::coordination::v1::Lease =
        serde_json::from_value(crate::diagnose::test_cluster::lease_json("k3s", "s1", 1)).unwrap();
    state.leases = Some(vec![crate::model::lease::LeaseFacts::from_api(&lease)]);
    let a = analyse_leases(&state, Distro::K3s, now());
    assert!(a.findings.is_empty(), "{:?}", a.findings);
    assert_eq!(a.locks[1].state, LockState::NotApplicable);
}

#[test]
fn rke2_uses_its_own_names() {
    let state = TestCluster::new(Distro::Rke2)
        .server("r1", "v1.29.5+rke2r1")
        .server("r2", "v1.29.5+rke2r1")
        .lease("rke2", "r1", 1)
        .lease("rke2-etcd", "r2", 1)
        .build();
    assert_eq!(state.detect_distro(), Some(Distro::Rke2));
    let a = analyse_leases(&state, Distro::Rke2, now());
    assert_eq!(codes(&a), [(Severity::Error, LeaseSplit)]);
    assert!(a.findings[0].remediation.contains("v1.29.6+rke2r1"));
    assert!(
        a.findings[0]
            .message
            .contains("kube-system/rke2-etcd-snapshots")
    );
}

#[test]
fn a_dump_without_nodes_says_so_instead_of_judging() {
    let a = analyse(
        TestCluster::k3s()
            .lease("k3s", "s1", 1)
            .lease("k3s-etcd", "s2", 1)
            .without_nodes()
            .into_dump(),
    );
    assert_eq!(
        codes(&a),
        [
            (Severity::Warning, LeaseSplit),
            (Severity::Warning, DumpIncomplete)
        ]
    );
    assert!(a.locks[0].node.is_none());
}

#[test]
fn other_elections_are_shown_not_judged() {
    let a = analyse(
        three_servers(AFFECTED)
            .lease("k3s", "s1", 1)
            .lease("k3s-etcd", "s1", 1)
            .lease(
                "kube-controller-manager",
                "s2_0c8d6a4e-1111-2222-3333-444455556666",
                900,
            ),
    );
    assert!(a.findings.is_empty());
    assert_eq!(a.other_elections[0].node.as_deref(), Some("s2"));
}

/// A v1.21 cluster's `kubectl get leases` has no `k3s` Lease because its
/// lock is a ConfigMap annotation. Without Nodes the version is unknown, so the absence
/// cannot be judged: the lock is `unknown`, never `lease-missing`. With ConfigMaps read as
/// well, a lock in neither place is missing whatever the version.
#[test]
fn an_absent_lock_on_an_unknown_version_from_leases_alone_is_not_judged() {
    let mut leases_only = TestCluster::k3s()
        .lease("kube-scheduler", "s1_0c8914f7", 1)
        .lease("kube-controller-manager", "s1_5e1b2a90", 1)
        .into_dump()
        .without_nodes()
        .build();
    leases_only.configmaps = None;
    let a = analyse_leases(&leases_only, Distro::K3s, now());
    assert!(
        !codes(&a).iter().any(|(_, c)| *c == LeaseMissing),
        "{:?}",
        a.findings
    );
    assert!(
        a.findings.iter().all(|f| f.severity != Severity::Error),
        "{:?}",
        a.findings
    );
    assert_eq!(a.locks[0].state, LockState::Unknown);

    let with_configmaps = TestCluster::k3s()
        .lease("kube-scheduler", "s1_0c8914f7", 1)
        .extra_metadata()
        .into_dump()
        .without_nodes();
    let b = analyse(with_configmaps);
    assert!(
        codes(&b).contains(&(Severity::Error, LeaseMissing)),
        "{:?}",
        b.findings
    );
    assert_eq!(b.locks[0].state, LockState::Missing);
}
