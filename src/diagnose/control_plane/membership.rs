//! etcd membership as the Node objects show it (k3s `pkg/etcd/etcd.go`,
//! `member_controller.go`): member removals that did not
//! happen, members stuck terminating, members never synced, and how many more members etcd
//! can lose; learners, stale voter conditions and shared member names come from
//! etcd_members.rs.

use jiff::{SignedDuration, Timestamp};

use crate::diagnose::control_plane::etcd_members;
use crate::diagnose::control_plane::quorum::QuorumCheck;
use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::distro::Distro;
use crate::model::cluster_state::ClusterState;
use crate::model::node::{NodeFacts, Readiness};

/// Finalizer the member controller's OnRemove handler puts on every Node it syncs, agents
/// included: wrangler's remove handler adds it before any label filter runs
/// (`pkg/generic/remove.go`, `pkg/etcd/member_controller.go`).
pub(crate) const MEMBER_FINALIZER: &str = "wrangler.cattle.io/managed-etcd-controller";

/// How long a deletion may take before it counts as stuck.
const DELETION_GRACE: SignedDuration = SignedDuration::from_secs(60);

pub(crate) fn analyse_membership(
    state: &ClusterState,
    distro: Distro,
    now: Timestamp,
) -> Vec<Finding> {
    let Some(nodes) = &state.nodes else {
        // Reported once as dump-incomplete by the lease analyser.
        return Vec::new();
    };
    if state.nodes_from_table.is_some() {
        // A `kubectl get nodes` table shows no annotations, finalizers or conditions but
        // Ready: the members' bookkeeping cannot be judged from it, only quorum.
        return quorum_finding(state, now).into_iter().collect();
    }
    let mut findings = Vec::new();
    let controller_ever_ran = nodes
        .iter()
        .any(|n| n.finalizers.iter().any(|f| f == MEMBER_FINALIZER));
    let leader_silent = etcd_members::leader_silent(nodes, now);
    for node in nodes {
        findings.extend(member_bookkeeping(node, distro, now, controller_ever_ran));
        findings.extend(etcd_members::voter_findings(
            node,
            distro,
            now,
            leader_silent,
        ));
    }
    if leader_silent {
        findings.push(etcd_members::leader_silent_finding(nodes, distro, now));
    }
    findings.extend(etcd_members::duplicate_member_names(nodes, distro));
    findings.extend(quorum_finding(state, now));
    findings
}

/// The member controller's bookkeeping on one Node: a removal asked for and not done, a
/// deletion held by the member finalizer, an etcd Node without it.
fn member_bookkeeping(
    node: &NodeFacts,
    distro: Distro,
    now: Timestamp,
    controller_ever_ran: bool,
) -> Vec<Finding> {
    let annotation =
        |n: &NodeFacts, suffix: &str| n.annotations.get(&distro.etcd_annotation(suffix)).cloned();
    let mut findings = Vec::new();
    let object = format!("Node {}", node.name);
    if annotation(node, "remove").as_deref() == Some("true")
        && annotation(node, "node-name").is_some()
        && annotation(node, "removed-node-name").is_none()
    {
        findings.extend(removal_not_done(node, distro, now, &object));
    }
    let has_finalizer = node.finalizers.iter().any(|f| f == MEMBER_FINALIZER);
    let stuck = node
        .deletion_time
        .is_some_and(|t| now.duration_since(t) > DELETION_GRACE);
    if stuck && has_finalizer {
        findings.push(
            Finding::new(
                Severity::Error,
                FindingCode::MemberTerminatingStuck,
                &object,
                format!(
                    "{} has been terminating for {} on the finalizer {MEMBER_FINALIZER}: its etcd member has not \
                     been removed",
                    node.name,
                    crate::age::short(now.duration_since(node.deletion_time.unwrap_or(now)))
                ),
            )
            .fix(format!(
                "check the {} holder's log for \"Removing etcd member\"; do not remove the finalizer by hand while \
                 the member is still in the etcd cluster",
                distro.etcd_lock()
            )),
        );
    }
    if node.is_etcd_member() && !has_finalizer && !node.deleting {
        let why = if controller_ever_ran {
            "the member controller has not synced it yet (other Nodes carry the finalizer)"
        } else {
            "no Node carries it, agents included, so the member controller has never run"
        };
        findings.push(
            Finding::new(
                Severity::Warning,
                FindingCode::MemberFinalizerMissing,
                &object,
                format!(
                    "etcd Node {} lacks the finalizer {MEMBER_FINALIZER}: {why}; deleting the Node will not \
                     remove its etcd member",
                    node.name
                ),
            )
            .fix(format!("check that the {} lock is held and fresh (k3sdoctor leases)", distro.etcd_lock())),
        );
    }
    findings
}

/// With every member up, etcd tolerates the loss of a minority; once members are down and
/// one more loss would cost quorum (or it is lost already), that is an error.
fn quorum_finding(state: &ClusterState, now: Timestamp) -> Option<Finding> {
    let nodes = state.nodes();
    let q = QuorumCheck::new(nodes, None, now, &state.heartbeats);
    if !q.applies() || q.ready == q.members || q.ready > q.quorum {
        return None;
    }
    let down: Vec<&str> = nodes
        .iter()
        .filter(|n| n.is_etcd_member() && (n.readiness != Readiness::Ready || n.deleting))
        .map(|n| n.name.as_str())
        .collect();
    let state = if q.ready < q.quorum {
        "quorum is already lost"
    } else {
        "one more lost member loses quorum"
    };
    Some(
        Finding::new(
            Severity::Error,
            FindingCode::EtcdQuorumAtRisk,
            "etcd",
            format!(
                "{} of {} etcd members are Ready (quorum {}); {} NotReady: {state}",
                q.ready,
                q.members,
                q.quorum,
                down.join(", ")
            ),
        )
        .fix("bring the NotReady etcd members back before restarting or upgrading any server"),
    )
}

/// How long the member controller may take to act on a removal before it counts as stuck: it
/// acts within seconds on the `<prog>-etcd` holder, and retries for minutes while the member is
/// still syncing.
const REMOVAL_GRACE: SignedDuration = SignedDuration::from_mins(15);

/// A removal asked for and not done: stuck once older than [`REMOVAL_GRACE`], in progress
/// before. Without managedFields its age is unknown, which is said rather than judged.
fn removal_not_done(
    node: &NodeFacts,
    distro: Distro,
    now: Timestamp,
    object: &str,
) -> Option<Finding> {
    let age = node.removal_asked.map(|asked| now.duration_since(asked));
    if age.is_some_and(|age| age < REMOVAL_GRACE) {
        return None;
    }
    let member = node
        .annotations
        .get(&distro.etcd_annotation("node-name"))
        .cloned()
        .unwrap_or_default();
    let asked = match age {
        Some(age) => format!("asked {} ago", crate::age::short(age)),
        None => {
            "asked at an unknown time (the input has no managedFields; `kubectl get nodes -o yaml \
                 --show-managed-fields` keeps them), so it may still be in progress"
                .to_string()
        }
    };
    let severity = if age.is_some() {
        Severity::Error
    } else {
        Severity::Warning
    };
    Some(
        Finding::new(
            severity,
            FindingCode::MemberRemovalStuck,
            object,
            format!(
                "{} asks for member removal ({}=true, {asked}) but still carries {} {member:?} and no {}: the \
                 member removal controller on the {} holder has not acted",
                node.name,
                distro.etcd_annotation("remove"),
                distro.etcd_annotation("node-name"),
                distro.etcd_annotation("removed-node-name"),
                distro.etcd_lock()
            ),
        )
        .fix(format!(
            "check the {} holder's log for \"Removing etcd member\" (k3sdoctor leases shows the holder)",
            distro.etcd_lock()
        )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::test_cluster::{TestCluster, now};
    use serde_json::json;

    const V: &str = "v1.29.4+k3s1";

    fn codes(findings: &[Finding]) -> Vec<(Severity, FindingCode)> {
        findings.iter().map(|f| (f.severity, f.code)).collect()
    }

    fn analyse(c: TestCluster) -> Vec<Finding> {
        analyse_membership(&c.build(), Distro::K3s, now())
    }

    fn synced(name: &str) -> serde_json::Value {
        json!({"finalizers": [MEMBER_FINALIZER], "annotations": {"etcd.k3s.cattle.io/node-name": format!("{name}-1a2b3c4d")}})
    }

    #[test]
    fn healthy_members_have_no_findings() {
        let c = TestCluster::k3s()
            .server_with("a", V, synced("a"))
            .server_with("b", V, synced("b"))
            .server_with("c", V, synced("c"));
        assert!(analyse(c).is_empty());
    }

    /// Node `c` asked for removal, by a managedFields entry stamped `asked` when given.
    fn removal_asked(asked: Option<&str>) -> TestCluster {
        let mut meta = synced("c");
        meta["annotations"]["etcd.k3s.cattle.io/remove"] = json!("true");
        if let Some(time) = asked {
            meta["managedFields"] = json!([
                {"manager": "kubelet", "operation": "Update", "apiVersion": "v1",
                 "time": "2024-05-01T00:00:00Z", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:status": {"f:conditions": {}}}},
                {"manager": "kubectl-annotate", "operation": "Update", "apiVersion": "v1",
                 "time": time, "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:annotations": {"f:etcd.k3s.cattle.io/remove": {}}}}}
            ]);
        }
        TestCluster::k3s()
            .server_with("a", V, synced("a"))
            .server_with("b", V, synced("b"))
            .server_with("c", V, meta)
    }

    #[test]
    fn a_removal_asked_long_ago_and_not_done_is_stuck() {
        // NOW is 12:10:40; asked 20 minutes before.
        let findings = analyse(removal_asked(Some("2024-05-31T11:50:40Z")));
        assert_eq!(
            codes(&findings),
            [(Severity::Error, FindingCode::MemberRemovalStuck)]
        );
        assert!(
            findings[0].message.contains("asked 20m ago"),
            "{}",
            findings[0].message
        );
    }

    #[test]
    fn a_removal_asked_minutes_ago_is_in_progress_not_a_fault() {
        assert!(analyse(removal_asked(Some("2024-05-31T12:00:40Z"))).is_empty());
        // A clock ahead of ours: asked "in the future" is as fresh as it gets.
        assert!(analyse(removal_asked(Some("2024-05-31T12:12:00Z"))).is_empty());
    }

    #[test]
    fn a_removal_of_unknown_age_is_said_to_be_unknown_not_an_error() {
        let findings = analyse(removal_asked(None));
        assert_eq!(
            codes(&findings),
            [(Severity::Warning, FindingCode::MemberRemovalStuck)]
        );
        assert!(
            findings[0].message.contains("asked at an unknown time")
                && findings[0].message.contains("--show-managed-fields"),
            "{}",
            findings[0].message
        );
    }

    #[test]
    fn terminating_on_the_member_finalizer() {
        let mut meta = synced("c");
        meta["deletionTimestamp"] = json!("2024-05-31T11:00:00Z");
        let c = TestCluster::k3s()
            .server_with("a", V, synced("a"))
            .server_with("b", V, synced("b"))
            .server_with("c", V, meta);
        let found = codes(&analyse(c));
        assert!(
            found.contains(&(Severity::Error, FindingCode::MemberTerminatingStuck)),
            "{found:?}"
        );
    }

    #[test]
    fn never_synced_member() {
        let c = TestCluster::k3s()
            .server_with("a", V, synced("a"))
            .server_with("b", V, json!({}));
        assert_eq!(
            codes(&analyse(c)),
            [(Severity::Warning, FindingCode::MemberFinalizerMissing)]
        );
    }

    #[test]
    fn finalizer_on_an_agent_shows_the_controller_ran() {
        let never = TestCluster::k3s()
            .server_with("a", V, json!({}))
            .agent("w", V);
        assert!(analyse(never)[0].message.contains("has never run"));
        let c = TestCluster::k3s()
            .server_with("a", V, json!({}))
            .agent("w", V)
            .finalizer("w", MEMBER_FINALIZER);
        let findings = analyse(c);
        assert_eq!(
            codes(&findings),
            [(Severity::Warning, FindingCode::MemberFinalizerMissing)]
        );
        assert!(findings[0].message.contains("has not synced it yet"));
    }

    #[test]
    fn a_removed_member_does_not_count_towards_quorum() {
        // k3s removed c's member: its Node stays, NotReady, with removed-node-name.
        let removed = json!({"finalizers": [MEMBER_FINALIZER], "annotations": {
            "etcd.k3s.cattle.io/remove": "true",
            "etcd.k3s.cattle.io/removed-node-name": "c-1a2b3c4d"}});
        let c = TestCluster::k3s()
            .server_with("a", V, synced("a"))
            .server_with("b", V, synced("b"))
            .server_with("c", V, removed)
            .condition("c", "Ready", "False", "KubeletNotReady");
        assert!(analyse(c).is_empty());
    }

    #[test]
    fn learner_is_not_a_voter() {
        let c = TestCluster::k3s()
            .server_with("a", V, synced("a"))
            .server_with("b", V, synced("b"))
            .condition("b", "EtcdIsVoter", "False", "MemberIsLearner");
        assert_eq!(
            codes(&analyse(c)),
            [(Severity::Warning, FindingCode::MemberNotVoter)]
        );
    }

    #[test]
    fn quorum_at_risk_when_members_are_down() {
        let c = TestCluster::k3s()
            .server_with("a", V, synced("a"))
            .server_with("b", V, synced("b"))
            .server_with("c", V, synced("c"));
        let down = c.condition("c", "Ready", "False", "KubeletNotReady");
        let findings = analyse(down);
        assert_eq!(
            codes(&findings),
            [(Severity::Error, FindingCode::EtcdQuorumAtRisk)]
        );
        assert!(
            findings[0]
                .message
                .contains("2 of 3 etcd members are Ready (quorum 2); c NotReady")
        );
        // Five members with one down still tolerate another loss.
        let mut five = TestCluster::k3s();
        for n in ["a", "b", "c", "d", "e"] {
            five = five.server_with(n, V, synced(n));
        }
        assert!(analyse(five.condition("e", "Ready", "False", "KubeletNotReady")).is_empty());
    }
}
