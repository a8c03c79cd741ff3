// Test-only: its panics are assertions, never reached on bad input.
#![cfg(test)]
use serde_json::json;

use super::*;
use crate::diagnose::control_plane::membership::{MEMBER_FINALIZER, analyse_membership};
use crate::diagnose::test_cluster::{TestCluster, now};

const V: &str = "v1.29.4+k3s1";
const MIN: i64 = 60;

fn synced(member: &str) -> serde_json::Value {
    json!({"finalizers": [MEMBER_FINALIZER], "annotations": {"etcd.k3s.cattle.io/node-name": member}})
}

fn three() -> TestCluster {
    TestCluster::k3s()
        .server_with("a", V, synced("a-1a2b3c4d"))
        .server_with("b", V, synced("b-5e6f7a8b"))
        .server_with("c", V, synced("c-9c0d1e2f"))
}

fn analyse(c: TestCluster) -> Vec<Finding> {
    analyse_membership(&c.build(), Distro::K3s, now())
}

fn codes(findings: &[Finding]) -> Vec<(Severity, FindingCode, Option<FindingCode>)> {
    findings
        .iter()
        .map(|f| (f.severity, f.code, f.caused_by))
        .collect()
}

#[test]
fn a_fresh_voter_has_no_findings() {
    let c = three()
        .condition("a", VOTER_CONDITION, "True", "MemberNotLearner")
        .condition_times("a", VOTER_CONDITION, 3600 * MIN, 2 * MIN);
    assert!(analyse(c).is_empty());
}

#[test]
fn a_learner_past_fifteen_minutes_replaces_member_not_voter() {
    let young = three()
        .condition("b", VOTER_CONDITION, "False", "MemberIsLearner")
        .condition_times("b", VOTER_CONDITION, 14 * MIN, MIN);
    assert_eq!(
        codes(&analyse(young)),
        [(Severity::Warning, FindingCode::MemberNotVoter, None)]
    );
    let stuck = three()
        .condition("b", VOTER_CONDITION, "False", "MemberIsLearner")
        .condition_times("b", VOTER_CONDITION, 40 * MIN, MIN);
    let findings = analyse(stuck);
    assert_eq!(
        codes(&findings),
        [(Severity::Error, FindingCode::EtcdLearnerStuck, None)]
    );
    assert_eq!(findings[0].object, "Node b");
    assert!(
        findings[0].message.contains("a learner for 40m"),
        "{}",
        findings[0].message
    );
    assert!(findings[0].remediation.contains("systemctl restart k3s"));
}

#[test]
fn an_unhealthy_member_stays_member_not_voter_however_long() {
    let c = three()
        .condition("c", VOTER_CONDITION, "False", "Unhealthy")
        .condition_times("c", VOTER_CONDITION, 600 * MIN, MIN);
    assert_eq!(
        codes(&analyse(c)),
        [(Severity::Warning, FindingCode::MemberNotVoter, None)]
    );
}

/// The other two Nodes' conditions fresh: the etcd leader is refreshing, and skips one.
fn fresh_except(c: TestCluster, stale: &str) -> TestCluster {
    ["a", "b", "c"]
        .into_iter()
        .filter(|n| *n != stale)
        .fold(c, |c, n| {
            c.condition(n, VOTER_CONDITION, "True", "MemberNotLearner")
                .condition_times(n, VOTER_CONDITION, 600 * MIN, 2 * MIN)
        })
}

#[test]
fn one_stale_heartbeat_among_fresh_ones_blames_the_leaders_update_not_the_node() {
    let c = fresh_except(three(), "a")
        .condition("a", VOTER_CONDITION, "True", "MemberNotLearner")
        .condition_times("a", VOTER_CONDITION, 600 * MIN, 16 * MIN);
    let findings = analyse(c);
    assert_eq!(
        codes(&findings),
        [(
            Severity::Warning,
            FindingCode::EtcdVoterHeartbeatStale,
            None
        )]
    );
    let f = &findings[0];
    assert!(
        f.message.contains("last refreshed 16m ago"),
        "{}",
        f.message
    );
    assert!(
        f.message.contains("the etcd leader refreshes"),
        "{}",
        f.message
    );
    assert!(
        f.remediation
            .contains("\"Unable to set etcd status condition a-1a2b3c4d\""),
        "{}",
        f.remediation
    );
    assert!(
        !f.remediation.contains("systemctl restart"),
        "{}",
        f.remediation
    );
    // The learner status it shows may be out of date: the learner finding hangs under it.
    let learner = fresh_except(three(), "b")
        .condition("b", VOTER_CONDITION, "False", "MemberIsLearner")
        .condition_times("b", VOTER_CONDITION, 60 * MIN, 30 * MIN);
    assert_eq!(
        codes(&analyse(learner)),
        [
            (
                Severity::Warning,
                FindingCode::EtcdVoterHeartbeatStale,
                None
            ),
            (
                Severity::Error,
                FindingCode::EtcdLearnerStuck,
                Some(FindingCode::EtcdVoterHeartbeatStale)
            ),
        ]
    );
    // A NotReady server's controller is silent anyway; quorum speaks for it.
    let down = fresh_except(three(), "c")
        .condition("c", VOTER_CONDITION, "True", "MemberNotLearner")
        .condition_times("c", VOTER_CONDITION, 600 * MIN, 60 * MIN)
        .condition("c", "Ready", "False", "KubeletNotReady");
    assert_eq!(
        codes(&analyse(down)),
        [(Severity::Error, FindingCode::EtcdQuorumAtRisk, None)]
    );
}

/// Every Node stale: one writer stopped, so one finding about the etcd leader, not a restart
/// of every server.
#[test]
fn every_stale_heartbeat_is_one_finding_about_the_etcd_leader() {
    let c = ["a", "b", "c"]
        .into_iter()
        .zip([20, 25, 30])
        .fold(three(), |c, (n, age)| {
            c.condition(n, VOTER_CONDITION, "True", "MemberNotLearner")
                .condition_times(n, VOTER_CONDITION, 600 * MIN, age * MIN)
        })
        .condition("b", VOTER_CONDITION, "False", "MemberIsLearner")
        .condition_times("b", VOTER_CONDITION, 60 * MIN, 25 * MIN);
    let findings = analyse(c);
    assert_eq!(
        codes(&findings),
        [
            (
                Severity::Error,
                FindingCode::EtcdLearnerStuck,
                Some(FindingCode::EtcdVoterHeartbeatStale)
            ),
            (
                Severity::Warning,
                FindingCode::EtcdVoterHeartbeatStale,
                None
            ),
        ]
    );
    let leader = &findings[1];
    assert_eq!(leader.object, "etcd leader");
    assert!(
        leader.message.contains("(a 20m, b 25m, c 30m)"),
        "{}",
        leader.message
    );
    assert!(
        leader
            .message
            .contains("the etcd leader alone refreshes it"),
        "{}",
        leader.message
    );
    assert_eq!(
        leader.remediation.matches("systemctl restart").count(),
        1,
        "{}",
        leader.remediation
    );
    assert!(leader.remediation.contains("restart only that server"));
}

#[test]
fn one_member_name_on_two_nodes() {
    let mut clone = synced("a-1a2b3c4d");
    clone["creationTimestamp"] = json!("2024-05-30T00:00:00Z");
    let mut original = synced("a-1a2b3c4d");
    original["creationTimestamp"] = json!("2024-01-01T00:00:00Z");
    let c = TestCluster::k3s()
        .server_with("z-clone", V, original)
        .server_with("a-clone", V, clone)
        .server_with("c", V, synced("c-9c0d1e2f"));
    let findings = analyse(c);
    assert_eq!(
        codes(&findings),
        [(Severity::Error, FindingCode::EtcdMemberNameDuplicate, None)]
    );
    let f = &findings[0];
    assert_eq!(f.object, "Node a-clone", "the younger Node is the copy");
    assert!(
        f.message
            .contains("Nodes z-clone, a-clone carry one etcd member name \"a-1a2b3c4d\"")
    );
    assert_eq!(f.object_refs.len(), 2);
    assert!(
        f.remediation
            .starts_with("on a-clone (the Node created last): stop k3s")
    );
    // RKE2 reads its own annotation.
    let rke2 = analyse_membership(&three().build(), Distro::Rke2, now());
    assert!(
        rke2.iter()
            .all(|f| f.code != FindingCode::EtcdMemberNameDuplicate)
    );
}

#[test]
fn versions_before_the_condition_are_noted_never_healthy() {
    let nodes = |c: TestCluster| c.build().nodes.unwrap();
    let old = TestCluster::k3s()
        .server("a", "v1.26.10+k3s2")
        .server("b", "v1.26.11+k3s1")
        .server("c", "v1.26.11+k3s-d00ad9db");
    let note = voter_not_published(&nodes(old)).unwrap();
    assert_eq!(
        note,
        "EtcdIsVoter not published by this version on a (v1.26.10+k3s2, first in v1.26.11+k3s1); \
         EtcdIsVoter absent and the version cannot tell whether it should be on c (v1.26.11+k3s-d00ad9db): \
         learners and stalled etcd controllers not checked there"
    );
    // A version that publishes it and a server that shows it need no note; agents never do.
    let new = TestCluster::k3s()
        .server("a", V)
        .server("b", "v1.26.10+k3s2")
        .condition("b", VOTER_CONDITION, "True", "MemberNotLearner")
        .agent("w", "v1.20.1+k3s1");
    assert_eq!(voter_not_published(&nodes(new)), None);
}
