//! Whether etcd keeps quorum while one server restarts.

use serde::Serialize;

use crate::model::node::{NodeFacts, Readiness};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct QuorumCheck {
    /// Nodes carrying the etcd role.
    pub members: usize,
    /// Of those, Ready and not being deleted.
    pub ready: usize,
    /// Ready members while the restarting server is down.
    pub ready_during_restart: usize,
    /// Majority of `members`.
    pub quorum: usize,
}

impl QuorumCheck {
    /// `restarting`: the node whose server process will exit, if it is known.
    pub fn new(nodes: &[NodeFacts], restarting: Option<&str>) -> QuorumCheck {
        let members: Vec<&NodeFacts> = nodes.iter().filter(|n| n.is_etcd_member()).collect();
        let is_up = |n: &NodeFacts| n.readiness == Readiness::Ready && !n.deleting;
        let ready = members.iter().filter(|n| is_up(n)).count();
        let goes_down = members
            .iter()
            .any(|n| Some(n.name.as_str()) == restarting && is_up(n));
        QuorumCheck {
            members: members.len(),
            ready,
            ready_during_restart: ready - usize::from(goes_down),
            quorum: members.len() / 2 + 1,
        }
    }

    /// No etcd members known (external datastore): nothing to protect.
    pub fn applies(&self) -> bool {
        self.members > 0
    }

    pub fn holds(&self) -> bool {
        !self.applies() || self.ready_during_restart >= self.quorum
    }

    pub fn describe(&self) -> String {
        format!(
            "{} etcd members, {} Ready, {} Ready during the restart, quorum {}",
            self.members, self.ready, self.ready_during_restart, self.quorum
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::test_cluster::TestCluster;

    #[test]
    fn three_healthy_members_survive_one_restart() {
        let state = TestCluster::k3s()
            .server("a", "v1.29.4+k3s1")
            .server("b", "v1.29.4+k3s1")
            .server("c", "v1.29.4+k3s1")
            .build();
        let q = QuorumCheck::new(state.nodes(), Some("a"));
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
        assert!(!QuorumCheck::new(state.nodes(), Some("a")).holds());
        // Restarting the member that is already down costs nothing more.
        assert!(QuorumCheck::new(state.nodes(), Some("c")).holds());
    }

    #[test]
    fn two_members_never_survive_a_restart() {
        let state = TestCluster::k3s()
            .server("a", "v1.29.4+k3s1")
            .server("b", "v1.29.4+k3s1")
            .build();
        assert!(!QuorumCheck::new(state.nodes(), Some("a")).holds());
        assert!(QuorumCheck::new(state.nodes(), None).holds());
    }
}
