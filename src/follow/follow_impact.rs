//! What a planned `leases follow` move does to the cluster, in the lines the plan shows:
//! which server process exits, who takes the lock and what it then runs. Pure.

use crate::diagnose::control_plane::quorum::QuorumCheck;
use crate::diagnose::leases::lock_status::{LockPurpose, LockStatus};
use crate::distro::Distro;
use crate::model::node::NodeFacts;
use crate::version::SplitImpact;

use super::election_timing::ElectionTiming;

pub(super) fn impact(
    distro: Distro,
    lock_status: &LockStatus,
    from_node: Option<&str>,
    target: &NodeFacts,
    quorum: &QuorumCheck,
    // Moving the core lock onto a server that does not hold the etcd lock: its informer start
    // has no etcd controllers to start (they are registered on this holder).
    etcd_held_elsewhere: Option<&str>,
    timing: &ElectionTiming,
) -> Vec<String> {
    let deadline = format!("{}s", timing.renew_deadline_seconds);
    let (lock, purpose) = (lock_status.name.as_str(), lock_status.purpose);
    let from_holder = lock_status.holder.as_deref().unwrap_or_default();
    let unit = distro.server_unit();
    let mut lines = Vec::new();
    match (from_holder.is_empty(), from_node) {
        (true, _) => lines.push(format!("{lock} is released: no server loses it and nothing restarts")),
        (false, Some(node)) => {
            let etcd = match distro {
                Distro::K3s => "its embedded etcd member restarts with it",
                Distro::Rke2 => "etcd runs there as a static pod and should keep running",
            };
            let holder = if node == from_holder { String::new() } else { format!(" (holder {from_holder})") };
            lines.push(format!(
                "the {unit} process on {node}{holder} exits within the {deadline} renew deadline and is restarted \
                 by systemd; {etcd}{}",
                if quorum.applies() { format!(" ({})", quorum.describe()) } else { String::new() }
            ));
        }
        (false, None) => lines.push(format!(
            "the current holder {from_holder:?} matches no Node; if it is still running, its {unit} process exits \
             within the {deadline} renew deadline"
        )),
    }
    let affected = target.version.as_ref().is_some_and(|v| {
        matches!(
            v.split_impact(),
            SplitImpact::Affected { .. } | SplitImpact::Undetermined { .. }
        )
    });
    let runs = match (purpose, etcd_held_elsewhere) {
        (LockPurpose::Core, None) => {
            "runs the core controllers; its informer start also starts the etcd controllers registered there"
                .to_string()
        }
        (LockPurpose::Core, Some(etcd_holder)) => format!(
            "runs the core controllers; it does not hold {}, so no etcd controllers are registered there for its \
             informer start to start (they are registered on {etcd_holder})",
            distro.etcd_lock()
        ),
        // k3s `pkg/etcd/etcd.go` `Register`: before k3s-io/k3s#10047 the -etcd callback only registers handlers;
        // whether the target already started its factories or never will, they stay idle.
        (LockPurpose::Etcd, _) if affected => format!(
            "registers the etcd controllers, but on this version only the {} callback starts informers, so \
             the snapshot ConfigMap controller there stays idle",
            distro.core_lock()
        ),
        _ => "runs the etcd controllers".to_string(),
    };
    lines.push(format!(
        "{} takes {lock} on its next retry ({}-{:.1} s) and {runs}",
        target.name,
        timing.retry_period_seconds,
        timing.retry_period_seconds as f64 * 2.2
    ));
    if purpose == LockPurpose::Etcd && affected {
        lines.push(format!(
                "moving {lock} does not fix k3s-io/k3s#10046 on this version: the informers start only from the \
                 {} callback; move {} onto the {lock} holder instead (the default)",
                distro.core_lock(),
                distro.core_lock()
            ));
    }
    lines
}
