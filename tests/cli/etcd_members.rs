//! etcd members beyond quorum: a member name on two Nodes, a learner that
//! stays one, `EtcdIsVoter` conditions the etcd leader stopped refreshing, and servers too
//! old to publish the condition, live and from a dump.

use serde_json::{Value, json};

use crate::report::CheckReport;
use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::k3sdoctor;
use crate::support::objects::{NOW, etcd_voter_condition, lease, server, write_dump};

const V: &str = "v1.29.6+k3s1";
const MIN: i64 = 60;

fn with_voter(mut node: Value, condition: Value) -> Value {
    node["status"]["conditions"]
        .as_array_mut()
        .unwrap()
        .push(condition);
    node
}

fn voter(name: &str, version: &str) -> Value {
    with_voter(
        server(name, version),
        etcd_voter_condition("True", "MemberNotLearner", 600 * MIN, 2 * MIN),
    )
}

fn check(fake: &FakeApi) -> (i32, CheckReport) {
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW])
        .cluster(fake, Role::ReadOnly)
        .run();
    (out.code, out.json())
}

#[test]
fn a_stuck_learner_a_silent_controller_and_a_cloned_member_name() {
    let learner = with_voter(
        server("s2", V),
        etcd_voter_condition("False", "MemberIsLearner", 40 * MIN, MIN),
    );
    let silent = with_voter(
        server("s3", V),
        etcd_voter_condition("True", "MemberNotLearner", 600 * MIN, 25 * MIN),
    );
    let mut clone = voter("s4", V);
    clone["metadata"]["annotations"]["etcd.k3s.cattle.io/node-name"] = json!("s1-5f2c1a9e");
    clone["metadata"]["creationTimestamp"] = json!("2024-05-31T09:00:00Z");
    let mut original = voter("s1", V);
    original["metadata"]["creationTimestamp"] = json!("2024-01-02T09:00:00Z");
    let fake = FakeApi::with_objects(vec![
        original,
        learner,
        silent,
        clone,
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
    ]);
    let (code, report) = check(&fake);
    assert_eq!(code, 1);
    let codes = report.codes();
    for expected in [
        "error/etcd-member-name-duplicate",
        "error/etcd-learner-stuck",
        "warning/etcd-voter-heartbeat-stale",
    ] {
        assert!(
            codes.contains(&expected.to_string()),
            "{expected} not in {codes:?}"
        );
    }
    assert!(
        !codes.contains(&"warning/member-not-voter".to_string()),
        "a stuck learner is not also a plain non-voter: {codes:?}"
    );
    let finding = |code: &str| {
        &report
            .findings
            .iter()
            .find(|f| f.finding.code == code)
            .unwrap()
            .finding
    };
    let dup = finding("etcd-member-name-duplicate");
    assert_eq!(dup.object, "Node s4");
    assert!(
        dup.message
            .contains("Nodes s1, s4 carry one etcd member name \"s1-5f2c1a9e\""),
        "{}",
        dup.message
    );
    assert!(dup.remediation.contains("/var/lib/rancher/k3s/server/db"));
    assert!(
        finding("etcd-learner-stuck")
            .message
            .contains("a learner for 40m")
    );
    let stale = finding("etcd-voter-heartbeat-stale");
    assert_eq!(stale.object, "Node s3");
    assert!(
        stale.message.contains("last refreshed 25m ago"),
        "{}",
        stale.message
    );
    assert!(
        report.checks.iter().all(|c| c.name != "etcd-voter"),
        "{:?}",
        report.checks
    );
    k3sdoctor(["check", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(1)
        .stdout_has("etcd-member-name-duplicate")
        .stdout_has("etcd-learner-stuck");
}

#[test]
fn a_learner_under_a_stale_heartbeat_hangs_under_it() {
    let learner = with_voter(
        server("s2", V),
        etcd_voter_condition("False", "MemberIsLearner", 60 * MIN, 30 * MIN),
    );
    let fake = FakeApi::with_objects(vec![
        voter("s1", V),
        learner,
        voter("s3", V),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
    ]);
    let (_, report) = check(&fake);
    assert_eq!(report.codes(), ["warning/etcd-voter-heartbeat-stale"]);
    assert_eq!(report.child_codes(0), ["etcd-learner-stuck"]);
}

/// Only the etcd leader refreshes `EtcdIsVoter`, for every Node: when none is fresh, one
/// finding names the leader's side, and no server is told to restart but the leader.
#[test]
fn every_heartbeat_stale_is_one_finding_about_the_etcd_leader() {
    let stale = |name: &str, age: i64| {
        with_voter(
            server(name, V),
            etcd_voter_condition("True", "MemberNotLearner", 600 * MIN, age * MIN),
        )
    };
    let fake = FakeApi::with_objects(vec![
        stale("s1", 20),
        stale("s2", 21),
        stale("s3", 22),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
    ]);
    let (_, report) = check(&fake);
    assert_eq!(report.codes(), ["warning/etcd-voter-heartbeat-stale"]);
    let finding = &report.findings[0].finding;
    assert_eq!(finding.object, "etcd leader");
    assert!(
        finding.message.contains("(s1 20m, s2 21m, s3 22m)"),
        "{}",
        finding.message
    );
    assert_eq!(
        finding.remediation.matches("systemctl restart").count(),
        1,
        "{}",
        finding.remediation
    );
    // One of three stale while the others are fresh: the leader's update of it fails, and
    // restarting that server is not the advice.
    let fake = FakeApi::with_objects(vec![
        voter("s1", V),
        voter("s2", V),
        stale("s3", 22),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
    ]);
    let (_, report) = check(&fake);
    let finding = &report.findings[0].finding;
    assert_eq!(finding.object, "Node s3");
    assert!(
        !finding.remediation.contains("systemctl restart"),
        "{}",
        finding.remediation
    );
    assert!(
        finding.remediation.contains("etcd leader"),
        "{}",
        finding.remediation
    );
}

#[test]
fn servers_before_the_condition_are_not_checked_never_healthy() {
    let old = "v1.26.10+k3s2";
    let objects = vec![
        server("s1", old),
        server("s2", old),
        voter("s3", "v1.26.11+k3s1"),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
    ];
    let fake = FakeApi::with_objects(objects.clone());
    let (_, report) = check(&fake);
    let run = report
        .checks
        .iter()
        .find(|c| c.name == "etcd-voter")
        .unwrap_or_else(|| panic!("{:?}", report.checks));
    assert!(!run.ran);
    assert!(
        run.note.starts_with(
            "EtcdIsVoter not published by this version on s1 (v1.26.10+k3s2, first in v1.26.11+k3s1), s2"
        ),
        "{}",
        run.note
    );
    k3sdoctor(["check", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .stdout_has("not checked: etcd-voter (EtcdIsVoter not published by this version");
    // A dump says the same.
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("dump.yaml");
    write_dump(&dump, &objects);
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW, "--from-file"])
        .arg(dump.to_str().unwrap())
        .run();
    let from_dump: CheckReport = out.json();
    let run = from_dump
        .checks
        .iter()
        .find(|c| c.name == "etcd-voter")
        .unwrap();
    assert!(
        !run.ran && run.note.contains("s1 (v1.26.10+k3s2"),
        "{}",
        run.note
    );
}
