//! Whether etcd keeps quorum while one server restarts.

use jiff::Timestamp;
use serde::Serialize;

use super::heartbeat::{describe_silence, silent_for};
use crate::model::collected::Collected;
use crate::model::node::{NodeFacts, Readiness};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct QuorumCheck {
    /// Nodes carrying the etcd role.
    pub members: usize,
    /// Of those, Ready, not being deleted and, where heartbeats were read, beating.
    pub ready: usize,
    /// Ready members while the restarting server is down.
    pub ready_during_restart: usize,
    /// Majority of `members`.
    pub quorum: usize,
    /// Members whose Node says Ready but whose kubelet has gone silent: counted down, each
    /// with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub silent: Vec<String>,
    /// Heartbeats were asked for and could not be read: Ready alone was judged. Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeats_unread: Option<String>,
}

impl QuorumCheck {
    /// `restarting`: the node whose server process will exit, if it is known. A member whose
    /// heartbeat (when read) is older than the node-monitor grace counts as down, whatever its
    /// Ready condition still says.
    pub(crate) fn new(
        nodes: &[NodeFacts],
        restarting: Option<&str>,
        now: Timestamp,
        heartbeats: &Collected<()>,
    ) -> QuorumCheck {
        let members: Vec<&NodeFacts> = nodes.iter().filter(|n| n.is_etcd_member()).collect();
        let says_ready = |n: &NodeFacts| n.readiness == Readiness::Ready && !n.deleting;
        let is_up = |n: &NodeFacts| says_ready(n) && silent_for(n, now).is_none();
        let ready = members.iter().filter(|n| is_up(n)).count();
        let goes_down = members
            .iter()
            .any(|n| Some(n.name.as_str()) == restarting && is_up(n));
        let silent = members
            .iter()
            .filter(|n| says_ready(n))
            .filter_map(|n| {
                Some(format!(
                    "{}: {}",
                    n.name,
                    describe_silence(silent_for(n, now)?)
                ))
            })
            .collect();
        QuorumCheck {
            members: members.len(),
            ready,
            ready_during_restart: ready - usize::from(goes_down),
            quorum: members.len() / 2 + 1,
            silent,
            heartbeats_unread: heartbeats.why_not().map(str::to_string),
        }
    }

    /// No etcd members known (external datastore): nothing to protect.
    pub(crate) fn applies(&self) -> bool {
        self.members > 0
    }

    pub(crate) fn holds(&self) -> bool {
        !self.applies() || self.ready_during_restart >= self.quorum
    }

    pub(crate) fn describe(&self) -> String {
        let mut said = format!(
            "{} etcd members, {} Ready, {} Ready during the restart, quorum {}",
            self.members, self.ready, self.ready_during_restart, self.quorum
        );
        if !self.silent.is_empty() {
            said.push_str(&format!(
                "; counted down though Ready: {}",
                self.silent.join("; ")
            ));
        }
        if let Some(why) = &self.heartbeats_unread {
            said.push_str(&format!(
                "; judged by Ready alone, heartbeats not read: {why}"
            ));
        }
        said
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::test_cluster::{TestCluster, now};

    #[test]
    fn three_healthy_members_survive_one_restart() {
        let state = TestCluster::k3s()
            .server("a", "v1.29.4+k3s1")
            .server("b", "v1.29.4+k3s1")
            .server("c", "v1.29.4+k3s1")
            .build();
        let q = QuorumCheck::new(state.nodes(), Some("a"), now(), &Collected::NotAsked);
        assert_eq!(
            (q.members, q.ready, q.ready_during_restart, q.quorum),
            (3, 3, 2, 2)
        );
        assert!(q.holds());
    }

    #[test]
    fn a_down_member_puts_quorum_at_risk() {
        let state = TestCluster::k3s()
            .server("a", "v1.29.4+k3s1")
            .server("b", "v1.29.4+k3s1")
            .not_ready_server("c", "v1.29.4+k3s1")
            .build();
        assert!(!QuorumCheck::new(state.nodes(), Some("a"), now(), &Collected::NotAsked).holds());
        // Restarting the member that is already down costs nothing more.
        assert!(QuorumCheck::new(state.nodes(), Some("c"), now(), &Collected::NotAsked).holds());
    }

    #[test]
    fn two_members_never_survive_a_restart() {
        let state = TestCluster::k3s()
            .server("a", "v1.29.4+k3s1")
            .server("b", "v1.29.4+k3s1")
            .build();
        assert!(!QuorumCheck::new(state.nodes(), Some("a"), now(), &Collected::NotAsked).holds());
        assert!(QuorumCheck::new(state.nodes(), None, now(), &Collected::NotAsked).holds());
    }

    #[test]
    fn a_ready_member_without_a_heartbeat_counts_down() {
        let mut state = TestCluster::k3s()
            .server("a", "v1.29.4+k3s1")
            .server("b", "v1.29.4+k3s1")
            .server("c", "v1.29.4+k3s1")
            .build();
        let beat = |ago: i64| Some(now() - jiff::SignedDuration::from_secs(ago));
        let nodes = state.nodes.as_mut().expect("nodes");
        for (node, ago) in nodes.iter_mut().zip([5, 8, 67]) {
            node.heartbeat = beat(ago);
        }
        let q = QuorumCheck::new(state.nodes(), Some("a"), now(), &Collected::Read(()));
        assert_eq!((q.ready, q.ready_during_restart, q.quorum), (2, 1, 2));
        assert!(!q.holds());
        assert!(
            q.describe()
                .contains("counted down though Ready: c: no heartbeat for 67s"),
            "{}",
            q.describe()
        );
    }

    #[test]
    fn unread_heartbeats_leave_ready_alone_and_say_so() {
        let state = TestCluster::k3s()
            .server("a", "v1.29.4+k3s1")
            .server("b", "v1.29.4+k3s1")
            .server("c", "v1.29.4+k3s1")
            .build();
        let unread = Collected::Refused("forbidden".into());
        let q = QuorumCheck::new(state.nodes(), Some("a"), now(), &unread);
        assert!(q.holds());
        assert!(
            q.describe()
                .ends_with("judged by Ready alone, heartbeats not read: forbidden")
        );
    }
}
