use super::*;
use crate::diagnose::test_cluster::{TestCluster, now};

const AFFECTED: &str = "v1.29.4+k3s1";

fn split(version: &str) -> TestCluster {
    TestCluster::k3s()
        .server("s1", version)
        .server("s2", version)
        .server("s3", version)
        .agent("w1", version)
        .lease("k3s", "s1", 1)
        .lease("k3s-etcd", "s2", 1)
}

fn plan(cluster: TestCluster, req: FollowRequest) -> Result<FollowOutcome, Refusal> {
    plan_follow(&cluster.build(), Distro::K3s, now(), &req)
}

fn moved(outcome: Result<FollowOutcome, Refusal>) -> FollowPlan {
    match outcome {
        Ok(FollowOutcome::Move(p)) => *p,
        other => panic!("expected a move, got {other:?}"),
    }
}

#[test]
fn default_moves_core_onto_the_etcd_holder() {
    let p = moved(plan(split(AFFECTED), FollowRequest::default()));
    assert_eq!(
        (
            p.lock.as_str(),
            p.from_holder.as_str(),
            p.to_identity.as_str()
        ),
        ("k3s", "s1", "s2")
    );
    assert_eq!(p.writes, [LockCopy::Lease]);
    assert!(
        p.impact[0].contains("the k3s process on s1"),
        "{:?}",
        p.impact
    );
    assert!(p.overridden.is_empty());
}

#[test]
fn the_new_holder_is_the_targets_hostname_not_its_node_name() {
    let cluster = TestCluster::k3s()
        .server("s1", AFFECTED)
        .server_named("node-2", "host-2.lan", AFFECTED)
        .server("s3", AFFECTED)
        .lease("k3s", "s1", 1)
        .lease("k3s-etcd", "host-2.lan", 1);
    let p = moved(plan(
        cluster,
        FollowRequest {
            to: Some("node-2".into()),
            ..Default::default()
        },
    ));
    assert_eq!(
        (p.to_identity.as_str(), p.to_node.as_str()),
        ("host-2.lan", "node-2")
    );
}

#[test]
fn multilock_writes_the_configmap_first() {
    let v = "v1.27.10+k3s2";
    let cluster = split(v)
        .configmap_lock("k3s", "s1", 1)
        .configmap_lock("k3s-etcd", "s2", 1);
    assert_eq!(
        moved(plan(cluster, FollowRequest::default())).writes,
        [LockCopy::ConfigMap, LockCopy::Lease]
    );
}

#[test]
fn aligned_locks_need_no_plan() {
    let cluster = TestCluster::k3s()
        .server("s1", AFFECTED)
        .lease("k3s", "s1", 1)
        .lease("k3s-etcd", "s1", 1);
    assert!(matches!(
        plan(cluster, FollowRequest::default()),
        Ok(FollowOutcome::Aligned { .. })
    ));
}

#[test]
fn moving_the_etcd_lock_says_it_does_not_fix_the_bug() {
    let p = moved(plan(
        split(AFFECTED),
        FollowRequest {
            lease: Some("k3s-etcd".into()),
            ..Default::default()
        },
    ));
    assert_eq!(
        (p.from_holder.as_str(), p.to_identity.as_str()),
        ("s2", "s1")
    );
    assert!(
        p.impact
            .iter()
            .any(|l| l.contains("does not fix k3s-io/k3s#10046")),
        "{:?}",
        p.impact
    );
    // The target's line does not claim controllers that this version leaves idle.
    assert!(
        p.impact[1].contains("s1 takes k3s-etcd") && p.impact[1].contains("stays idle"),
        "{:?}",
        p.impact
    );
}

#[test]
fn refusals_name_the_reason() {
    let refused = |c: TestCluster, r: FollowRequest| plan(c, r).unwrap_err().0;
    assert!(
        refused(
            split(AFFECTED),
            FollowRequest {
                lease: Some("kube-scheduler".into()),
                ..Default::default()
            }
        )
        .contains("only moves the k3s and k3s-etcd locks")
    );
    assert!(
        refused(
            split(AFFECTED),
            FollowRequest {
                to: Some("nope".into()),
                ..Default::default()
            }
        )
        .contains("no Node has that name")
    );
    assert!(
        refused(
            split(AFFECTED),
            FollowRequest {
                to: Some("w1".into()),
                ..Default::default()
            }
        )
        .contains("not a server")
    );
    let expired = TestCluster::k3s()
        .server("s1", AFFECTED)
        .server("s2", AFFECTED)
        .server("s3", AFFECTED)
        .lease("k3s", "s1", 1)
        .lease("k3s-etcd", "s2", 600);
    assert!(refused(expired, FollowRequest::default()).contains("k3s-etcd is expired"));
}

#[test]
fn force_records_what_it_overrode() {
    let p = moved(plan(
        split(AFFECTED),
        FollowRequest {
            to: Some("w1".into()),
            force: true,
            ..Default::default()
        },
    ));
    assert_eq!(p.to_node, "w1");
    assert_eq!(p.overridden.len(), 2, "{:?}", p.overridden);
    assert!(p.split_after.as_ref().unwrap().kept);
}

#[test]
fn an_ambiguous_target_is_refused() {
    // "s2" is one node's name and another node's hostname.
    let cluster = TestCluster::k3s()
        .server("s1", AFFECTED)
        .server("s2", AFFECTED)
        .server_named("s3", "s2", AFFECTED)
        .lease("k3s", "s1", 1)
        .lease("k3s-etcd", "s1", 1);
    let err = plan(
        cluster,
        FollowRequest {
            to: Some("s2".into()),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(err.0.contains("ambiguous"), "{err}");
}

#[test]
fn a_move_that_keeps_the_split_is_refused_unless_forced_and_says_so() {
    let to_s3 = |force| FollowRequest {
        to: Some("s3".into()),
        force,
        ..Default::default()
    };
    let err = plan(split(AFFECTED), to_s3(false)).unwrap_err().0;
    assert!(
        err.contains("this keeps a split (k3s on s3, k3s-etcd on s2)"),
        "{err}"
    );
    assert!(err.contains("override with --force"), "{err}");
    let p = moved(plan(split(AFFECTED), to_s3(true)));
    assert!(p.split_after.is_some());
    let target_line = &p.impact[1];
    assert!(
        !target_line.contains("also starts the etcd controllers")
            && target_line.contains("it does not hold k3s-etcd"),
        "{target_line}"
    );
}

#[test]
fn moving_the_etcd_lock_off_an_aligned_pair_creates_a_split() {
    let aligned = TestCluster::k3s()
        .server("s1", AFFECTED)
        .server("s2", AFFECTED)
        .server("s3", AFFECTED)
        .lease("k3s", "s1", 1)
        .lease("k3s-etcd", "s1", 1);
    let err = plan(
        aligned,
        FollowRequest {
            lease: Some("k3s-etcd".into()),
            to: Some("s2".into()),
            ..Default::default()
        },
    )
    .unwrap_err()
    .0;
    assert!(err.contains("this creates a split"), "{err}");
}
