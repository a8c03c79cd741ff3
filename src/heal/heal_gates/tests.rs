use super::*;
use crate::diagnose::test_cluster::{TestCluster, now};
use serde_json::json;

const AFFECTED: &str = "v1.29.4+k3s1";
const FIXED: &str = "v1.29.6+k3s1";

fn three(version: &str) -> TestCluster {
    TestCluster::k3s()
        .server("s1", version)
        .server("s2", version)
        .server("s3", version)
}

fn split(cluster: TestCluster) -> TestCluster {
    cluster.lease("k3s", "s1", 1).lease("k3s-etcd", "s2", 1)
}

fn judge(cluster: TestCluster, outside: &Outside) -> Option<SplitCandidate> {
    heal_candidate(&cluster.build(), Distro::K3s, now(), outside)
}

fn gates(candidate: &SplitCandidate) -> Vec<&'static str> {
    candidate.blocked.iter().map(|b| b.gate.label()).collect()
}

#[test]
fn aligned_locks_are_no_candidate() {
    let c = three(AFFECTED)
        .lease("k3s", "s2", 1)
        .lease("k3s-etcd", "s2", 1);
    assert_eq!(judge(c, &Outside::default()), None);
}

#[test]
fn a_split_on_an_affected_version_with_every_gate_open_may_move() {
    let c = judge(split(three(AFFECTED)), &Outside::default()).unwrap();
    assert_eq!(
        (c.lock.as_str(), c.from.as_str(), c.to.as_str()),
        ("k3s", "s1", "s2")
    );
    assert!(c.blocked.is_empty(), "{:?}", c.blocked);
    assert_eq!(c.plan.unwrap().to_identity, "s2");
}

#[test]
fn a_split_on_a_fixed_version_is_never_a_move() {
    let c = judge(split(three(FIXED)), &Outside::default()).unwrap();
    assert_eq!(gates(&c), ["fixed-version"]);
}

#[test]
fn a_not_ready_target_blocks_with_its_reason() {
    let c = split(three(AFFECTED)).condition("s2", "Ready", "False", "KubeletNotReady");
    let c = judge(c, &Outside::default()).unwrap();
    assert!(gates(&c).contains(&"target-not-ready"), "{:?}", c.blocked);
    assert!(!gates(&c).contains(&"plan-refused"), "{:?}", c.blocked);
}

#[test]
fn a_learner_target_blocks() {
    let c = split(three(AFFECTED)).condition("s2", "EtcdIsVoter", "False", "MemberIsLearner");
    assert_eq!(
        gates(&judge(c, &Outside::default()).unwrap()),
        ["target-not-voter"]
    );
}

#[test]
fn quorum_at_risk_blocks() {
    let c = split(
        TestCluster::k3s()
            .server("s1", AFFECTED)
            .server("s2", AFFECTED)
            .not_ready_server("s3", AFFECTED),
    );
    let c = judge(c, &Outside::default()).unwrap();
    assert_eq!(gates(&c), ["quorum-at-risk"], "{:?}", c.blocked);
}

#[test]
fn a_member_removal_in_flight_blocks() {
    let c = split(
        TestCluster::k3s()
            .server("s1", AFFECTED)
            .server("s2", AFFECTED)
            .server("s3", AFFECTED)
            .server_with(
                "s4",
                AFFECTED,
                json!({"annotations": {"etcd.k3s.cattle.io/remove": "true"}}),
            ),
    );
    let c = judge(c, &Outside::default()).unwrap();
    assert_eq!(gates(&c), ["member-removal"], "{:?}", c.blocked);
}

#[test]
fn a_stale_lock_blocks() {
    let c = three(AFFECTED)
        .lease("k3s", "s1", 120)
        .lease("k3s-etcd", "s2", 1);
    let c = judge(c, &Outside::default()).unwrap();
    assert!(gates(&c).contains(&"lock-not-fresh"), "{:?}", c.blocked);
}

#[test]
fn pause_and_a_reboot_lock_block_and_say_their_values() {
    let outside = Outside {
        paused: Some("maintenance until 18:00".into()),
        reboot_lock: Some("{\"nodeID\":\"s3\"}".into()),
    };
    let c = judge(split(three(AFFECTED)), &outside).unwrap();
    assert_eq!(gates(&c), ["reboot-in-progress", "paused"]);
    assert!(c.blocked[1].why.contains("maintenance until 18:00"));
    // The plan is still made: dry-run and the report show the move that waits.
    assert!(c.plan.is_some());
}

#[test]
fn a_holder_known_to_leases_by_its_localhost_hostname_is_a_ready_target() {
    // k3s annotates a server whose kernel hostname is `localhost…` with its node name, and
    // that server elects as `localhost`: `leases` and `follow` know it, so the heal must too.
    let c = TestCluster::k3s()
        .server_named("s1", "ip-10-0-0-1", AFFECTED)
        .server("s2", AFFECTED)
        .server_named("s3", "ip-10-0-0-3", AFFECTED)
        .lease("k3s", "ip-10-0-0-1", 1)
        .lease("k3s-etcd", "localhost", 1);
    let c = judge(c, &Outside::default()).unwrap();
    assert!(!gates(&c).contains(&"target-not-ready"), "{:?}", c.blocked);
    assert!(!gates(&c).contains(&"lock-not-fresh"), "{:?}", c.blocked);
}
