//! etcd members on the real API server: Nodes carrying the `EtcdIsVoter` condition and
//! the member-name annotation the way k3s writes them. The condition goes in through a
//! strategic-merge PATCH of the status subresource, as `setEtcdStatusCondition` does
//! (component-helpers `SetNodeCondition`), so the real server merges it by type beside Ready.

use serde_json::{Value, json};

use crate::common::run_as;
use crate::support::envtest::{EnvTest, User};
use crate::support::objects::{etcd_voter_condition, server};

const NODES: &str = "/api/v1/nodes";
const V: &str = "v1.29.6+k3s1";

fn rfc3339_ago(mins: i64) -> String {
    (jiff::Timestamp::now() - jiff::SignedDuration::from_mins(mins))
        .round(jiff::Unit::Second)
        .expect("rounds")
        .to_string()
}

/// Sets `EtcdIsVoter` on `node`, changed `transition_mins` and refreshed `heartbeat_mins`
/// minutes ago by the real clock.
fn set_voter(
    env: &EnvTest,
    node: &str,
    status: &str,
    reason: &str,
    transition_mins: i64,
    heartbeat_mins: i64,
) {
    let mut condition = etcd_voter_condition(status, reason, 0, 0);
    condition["lastTransitionTime"] = json!(rfc3339_ago(transition_mins));
    condition["lastHeartbeatTime"] = json!(rfc3339_ago(heartbeat_mins));
    env.admin()
        .request(
            "PATCH",
            &format!("{NODES}/{node}/status"),
            "application/strategic-merge-patch+json",
            Some(&json!({"status": {"conditions": [condition]}})),
        )
        .unwrap_or_else(|e| panic!("PATCH {node}/status: {e:?}"));
}

/// Creates a Node and writes its status (a POST drops `status`).
fn create_node(env: &EnvTest, node: Value) {
    let name = node["metadata"]["name"].as_str().unwrap().to_string();
    env.admin().create(NODES, &node);
    env.admin()
        .request(
            "PATCH",
            &format!("{NODES}/{name}/status"),
            "application/strategic-merge-patch+json",
            Some(&json!({"status": node["status"]})),
        )
        .unwrap_or_else(|e| panic!("PATCH {name}/status: {e:?}"));
}

/// `(code, object, caused_by)` of every finding of `check -o json`, children included, and
/// the report.
fn check(env: &EnvTest) -> (Vec<(String, String)>, Value) {
    let out = run_as(
        env,
        User::Admin,
        &["check", "-o", "json", "--fail-on", "never"],
    );
    out.code(0);
    let report: Value = out.json();
    let found = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .flat_map(|f| {
            std::iter::once(f.clone()).chain(f["children"].as_array().cloned().unwrap_or_default())
        })
        .map(|f| {
            (
                f["code"].as_str().unwrap_or_default().to_string(),
                f["object"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    (found, report)
}

#[test]
fn real_etcd_members_learners_heartbeats_and_cloned_names() {
    let Some(env) = EnvTest::start("real_etcd_members_learners_heartbeats_and_cloned_names") else {
        return;
    };
    let mut clone = server("s4", V);
    clone["metadata"]["annotations"]["etcd.k3s.cattle.io/node-name"] = json!("s1-5f2c1a9e");
    for node in [
        server("s1", V),
        server("s2", V),
        server("s3", V),
        clone,
        server("s5", "v1.26.10+k3s2"),
    ] {
        create_node(&env, node);
    }
    set_voter(&env, "s1", "True", "MemberNotLearner", 600, 2);
    set_voter(&env, "s2", "False", "MemberIsLearner", 40, 1);
    set_voter(&env, "s3", "True", "MemberNotLearner", 600, 25);
    set_voter(&env, "s4", "True", "MemberNotLearner", 600, 2);
    let s2 = env.admin().get(&format!("{NODES}/s2")).unwrap();
    let mut types: Vec<&str> = s2["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["type"].as_str())
        .collect();
    // The real server puts a patched-in type first; the order is not what matters.
    types.sort_unstable();
    assert_eq!(
        types,
        ["EtcdIsVoter", "Ready"],
        "merged by type beside Ready"
    );

    let (found, report) = check(&env);
    let ours = |code: &str| -> Vec<&str> {
        found
            .iter()
            .filter(|(c, _)| c == code)
            .map(|(_, o)| o.as_str())
            .collect()
    };
    assert_eq!(ours("etcd-member-name-duplicate"), ["Node s4"], "{found:?}");
    assert_eq!(ours("etcd-learner-stuck"), ["Node s2"], "{found:?}");
    assert_eq!(ours("etcd-voter-heartbeat-stale"), ["Node s3"], "{found:?}");
    assert!(ours("member-not-voter").is_empty(), "{found:?}");
    let voter_check = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "etcd-voter")
        .unwrap_or_else(|| panic!("{}", report["checks"]));
    assert_eq!(voter_check["ran"], false);
    let note = voter_check["note"].as_str().unwrap();
    assert!(
        note.contains(
            "not published by this version on s5 (v1.26.10+k3s2, first in v1.26.11+k3s1)"
        ),
        "{note}"
    );

    // Promoted: k3s flips the condition and its transition time; the learner finding goes.
    set_voter(&env, "s2", "True", "MemberNotLearner", 0, 0);
    let (found, _) = check(&env);
    assert!(
        found
            .iter()
            .all(|(c, _)| c != "etcd-learner-stuck" && c != "member-not-voter"),
        "{found:?}"
    );
}
