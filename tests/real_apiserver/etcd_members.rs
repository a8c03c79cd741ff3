//! etcd members on the real API server: Nodes carrying the `EtcdIsVoter` condition and
//! the member-name annotation the way k3s writes them. The condition goes in through a
//! strategic-merge PATCH of the status subresource, as `setEtcdStatusCondition` does
//! (component-helpers `SetNodeCondition`), so the real server merges it by type beside Ready.
//! A member removal is asked the way `kubectl annotate` asks it, and dated by the real
//! server's managedFields.

use serde_json::{Value, json};

use crate::common::run_as;
use crate::support::envtest::{EnvTest, User};
use crate::support::harness::k3sdoctor;
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

    // A removal asked just now, as `kubectl annotate` asks it: the real server dates it in
    // managedFields, so it is in progress, not stuck.
    env.admin()
        .request(
            "PATCH",
            &format!("{NODES}/s5?fieldManager=kubectl-annotate"),
            "application/merge-patch+json",
            Some(&json!({"metadata": {"annotations": {"etcd.k3s.cattle.io/remove": "true"}}})),
        )
        .unwrap_or_else(|e| panic!("PATCH s5: {e:?}"));
    let s5 = env.admin().get(&format!("{NODES}/s5")).unwrap();
    assert!(
        s5["metadata"]["managedFields"]
            .to_string()
            .contains("f:etcd.k3s.cattle.io/remove"),
        "{}",
        s5["metadata"]["managedFields"]
    );
    let (found, _) = check(&env);
    assert!(
        found.iter().all(|(c, _)| c != "member-removal-stuck"),
        "{found:?}"
    );
    // The same Nodes as `kubectl get nodes -o yaml` dumps them, without managedFields: the
    // request's age is unknown, which is said, as a warning.
    let mut nodes = env.admin().get(NODES).unwrap();
    for node in nodes["items"].as_array_mut().unwrap() {
        node["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("managedFields");
    }
    let dump = env.scratch().join("nodes.json");
    std::fs::write(&dump, nodes.to_string()).unwrap();
    let out = k3sdoctor(["check", "-o", "json", "--fail-on", "never", "--from-file"])
        .args(&[dump.display().to_string()])
        .run();
    let report: Value = out.json();
    let removal: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "member-removal-stuck")
        .collect();
    assert_eq!(removal.len(), 1, "{}", report["findings"]);
    assert_eq!(removal[0]["severity"], "warning");
    assert_eq!(removal[0]["object"], "Node s5");
    assert!(
        removal[0]["message"]
            .as_str()
            .unwrap()
            .contains("asked at an unknown time"),
        "{}",
        removal[0]["message"]
    );
}
