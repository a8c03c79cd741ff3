//! Whether a Node's kubelet still beats. The Ready condition lags: the node controller marks
//! a silent node Unknown only after its grace period, and not at all while the server that
//! ran it is the one that died. The kubelet's Lease in kube-node-lease is renewed every 10 s.

use jiff::{SignedDuration, Timestamp};

use crate::diagnose::leases::lock_status::CLOCK_SKEW_ALLOWANCE;
use crate::model::node::NodeFacts;

/// kube-controller-manager's `--node-monitor-grace-period` default: how long the node
/// controller waits for a heartbeat before it calls the node's state unknown.
pub(crate) const NODE_MONITOR_GRACE: SignedDuration = SignedDuration::from_secs(40);

/// How long `node` has been silent, when its heartbeat was read and is older than the grace
/// period. The kubelet stamps `renewTime` with its own clock, so a clock that runs behind ours
/// by up to [`CLOCK_SKEW_ALLOWANCE`] is allowed for; one further behind looks silent (the gate
/// refuses, `--force` overrides), and one ahead looks alive longer.
pub(crate) fn silent_for(node: &NodeFacts, now: Timestamp) -> Option<SignedDuration> {
    let age = now.duration_since(node.heartbeat?);
    (age > NODE_MONITOR_GRACE + CLOCK_SKEW_ALLOWANCE).then_some(age)
}

/// "no heartbeat for 1m7s (…)": why a silent node counts as down.
pub(crate) fn describe_silence(age: SignedDuration) -> String {
    format!(
        "no heartbeat for {} (its Lease in kube-node-lease; past the {} s node-monitor grace and the {} s \
         allowed for its clock)",
        crate::age::short(age),
        NODE_MONITOR_GRACE.as_secs(),
        CLOCK_SKEW_ALLOWANCE.as_secs()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::test_cluster::{TestCluster, now};

    fn node_beating(ago: i64) -> NodeFacts {
        let mut node = TestCluster::k3s()
            .server("a", "v1.29.4+k3s1")
            .build()
            .nodes()[0]
            .clone();
        node.heartbeat = Some(now() - SignedDuration::from_secs(ago));
        node
    }

    #[test]
    fn a_heartbeat_within_the_grace_and_the_clock_allowance_is_alive() {
        assert_eq!(silent_for(&node_beating(10), now()), None);
        assert_eq!(silent_for(&node_beating(50), now()), None);
        // A kubelet clock ahead of ours stamps the future: alive.
        assert_eq!(silent_for(&node_beating(-30), now()), None);
    }

    #[test]
    fn a_heartbeat_past_them_is_silent_for_its_age() {
        assert_eq!(
            silent_for(&node_beating(67), now()),
            Some(SignedDuration::from_secs(67))
        );
        assert!(
            describe_silence(SignedDuration::from_secs(67)).starts_with("no heartbeat for 67s")
        );
    }

    #[test]
    fn an_unread_heartbeat_is_never_silent() {
        let mut node = node_beating(0);
        node.heartbeat = None;
        assert_eq!(silent_for(&node, now()), None);
    }
}
