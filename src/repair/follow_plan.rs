//! Planning `leases follow`: which lock moves to which server identity, which objects are
//! written, what that costs, and every reason to refuse. Pure: state in, plan out.

use jiff::Timestamp;
use serde::Serialize;

use crate::cluster::ClusterState;
use crate::diagnose::leases::analyse_leases;
use crate::diagnose::lock_status::{LockPurpose, LockState, LockStatus};
use crate::diagnose::quorum::QuorumCheck;
use crate::distro::Distro;
use crate::model::node::{NodeFacts, Readiness, node_for_identity};
use crate::version::{LockStyle, SplitImpact};

#[derive(Debug, Clone, Default)]
pub struct FollowRequest {
    /// `--lease`: the lock to move (default `<prog>`).
    pub lease: Option<String>,
    /// `--to`: a node name or hostname (default: the holder of the other lock).
    pub to: Option<String>,
    /// `--force`: skip the target and quorum checks (never the permission check).
    pub force: bool,
}

/// A copy of a lock that the plan writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LockCopy {
    /// The `control-plane.alpha.kubernetes.io/leader` annotation of the ConfigMap.
    ConfigMap,
    Lease,
}

impl LockCopy {
    pub fn object(self, lock: &str) -> String {
        match self {
            LockCopy::ConfigMap => format!("ConfigMap kube-system/{lock}"),
            LockCopy::Lease => format!("Lease kube-system/{lock}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FollowPlan {
    pub lock: String,
    pub purpose: LockPurpose,
    /// Written in this order: client-go's MultiLock writes its primary (the ConfigMap) first.
    pub writes: Vec<LockCopy>,
    /// The identity in the lock now (`""` when released).
    pub from_holder: String,
    pub from_node: Option<String>,
    /// The identity the target's server process campaigns with (its hostname).
    pub to_identity: String,
    pub to_node: String,
    pub why: String,
    pub impact: Vec<String>,
    pub quorum: QuorumCheck,
    /// Checks `--force` skipped.
    pub overridden: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum FollowOutcome {
    /// Nothing to do: the lock already names the target.
    Aligned {
        lock: String,
        holder: String,
    },
    Move(Box<FollowPlan>),
}

/// Why a plan cannot be made; exit 2, nothing written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refusal(pub String);

pub fn plan_follow(
    state: &ClusterState,
    distro: Distro,
    now: Timestamp,
    req: &FollowRequest,
) -> Result<FollowOutcome, Refusal> {
    let analysis = analyse_leases(state, distro, now);
    let core_name = distro.core_lock();
    let etcd_name = distro.etcd_lock();
    let lock_name = req.lease.clone().unwrap_or_else(|| core_name.clone());
    if lock_name != core_name && lock_name != etcd_name {
        return Err(Refusal(format!(
            "--lease {lock_name}: k3sdoctor only moves the {core_name} and {etcd_name} locks; other elections \
             (kube-controller-manager, kube-scheduler, ...) exit on a lost lease and must not be edited"
        )));
    }
    let Some(style) = analysis.cluster.lock_style else {
        return Err(Refusal(
            "cannot tell which objects hold the locks: no server Node reports a k3s/RKE2 version"
                .into(),
        ));
    };
    let (lock, other) = if lock_name == core_name {
        (&analysis.locks[0], &analysis.locks[1])
    } else {
        (&analysis.locks[1], &analysis.locks[0])
    };
    if matches!(lock.state, LockState::Missing | LockState::NotApplicable) {
        return Err(Refusal(format!(
            "there is no {lock_name} lock to move: no server campaigns for it; check the {} service",
            distro.server_unit()
        )));
    }
    let nodes = state.nodes();
    let mut overridden = Vec::new();
    let (target, why) = match &req.to {
        Some(to) => (resolve_target(nodes, distro, to)?, format!("--to {to}")),
        None => default_target(nodes, distro, other, req.force, &mut overridden)?,
    };
    let to_identity = target.lock_identity(distro).to_string();
    let from_holder = lock.holder.clone().unwrap_or_default();
    if from_holder == to_identity && lock.state != LockState::Disagreeing {
        return Ok(FollowOutcome::Aligned {
            lock: lock_name,
            holder: from_holder,
        });
    }

    if let Some(problem) = not_a_candidate(target) {
        let message = format!(
            "target {} {problem}, so it cannot take {lock_name}",
            target.name
        );
        if !req.force {
            return Err(Refusal(format!(
                "{message}; pick a Ready server with --to, or override with --force"
            )));
        }
        overridden.push(message);
    }

    let from_node = node_for_identity(nodes, distro, &from_holder).map(|(n, _)| n.name.clone());
    let quorum = QuorumCheck::new(nodes, from_node.as_deref());
    if !quorum.holds() {
        let message = format!(
            "etcd would lose quorum while {} restarts ({})",
            from_node.as_deref().unwrap_or("the old holder"),
            quorum.describe()
        );
        if !req.force {
            return Err(Refusal(format!(
                "{message}; bring the other etcd members back first, or override with --force"
            )));
        }
        overridden.push(message);
    }

    let writes = match style {
        LockStyle::Lease => vec![LockCopy::Lease],
        LockStyle::ConfigMap => vec![LockCopy::ConfigMap],
        LockStyle::ConfigMapAndLease => vec![LockCopy::ConfigMap, LockCopy::Lease],
    };
    let impact = impact(
        distro,
        &lock_name,
        &from_holder,
        from_node.as_deref(),
        target,
        &quorum,
        lock.purpose,
    );
    Ok(FollowOutcome::Move(Box::new(FollowPlan {
        lock: lock_name,
        purpose: lock.purpose,
        writes,
        from_holder,
        from_node,
        to_identity,
        to_node: target.name.clone(),
        why,
        impact,
        quorum,
        overridden,
    })))
}

/// `--to` takes a node name or a hostname; a value that is one node's name and another's
/// hostname is refused rather than guessed.
fn resolve_target<'a>(
    nodes: &'a [NodeFacts],
    distro: Distro,
    to: &str,
) -> Result<&'a NodeFacts, Refusal> {
    let by_name = nodes.iter().find(|n| n.name == to);
    let by_hostname = nodes
        .iter()
        .find(|n| {
            n.hostname_annotation(distro) == Some(to) && by_name.is_none_or(|b| b.name != n.name)
        })
        .or_else(|| {
            nodes
                .iter()
                .find(|n| n.hostname_annotation(distro) == Some(to))
        });
    match (by_name, by_hostname) {
        (Some(a), Some(b)) if a.name != b.name => Err(Refusal(format!(
            "--to {to} is ambiguous: it is the name of Node {} and the hostname of Node {}; pass the other \
             node's name instead",
            a.name, b.name
        ))),
        (Some(n), _) | (None, Some(n)) => Ok(n),
        (None, None) => Err(Refusal(format!(
            "--to {to}: no Node has that name or {} annotation; see `kubectl get nodes`",
            distro.hostname_annotation()
        ))),
    }
}

/// Default: `<prog>` follows the `<prog>-etcd` holder (facts §1.9); `--lease <prog>-etcd`
/// follows the `<prog>` holder.
fn default_target<'a>(
    nodes: &'a [NodeFacts],
    distro: Distro,
    other: &LockStatus,
    force: bool,
    overridden: &mut Vec<String>,
) -> Result<(&'a NodeFacts, String), Refusal> {
    let holder = match (other.state, other.holder.as_deref()) {
        (LockState::Held | LockState::Expired, Some(h)) if !h.is_empty() => h,
        _ => {
            return Err(Refusal(format!(
                "{} has no holder to follow ({}); name a target with --to",
                other.name,
                match other.state {
                    LockState::Released => "it is released",
                    LockState::Disagreeing => "its copies disagree",
                    _ => "it is missing",
                }
            )));
        }
    };
    if other.state == LockState::Expired {
        let message = format!(
            "{} is expired, so {holder} may no longer run its controllers",
            other.name
        );
        if !force {
            return Err(Refusal(format!(
                "{message}; wait for a fresh holder, name one with --to, or override with --force"
            )));
        }
        overridden.push(message);
    }
    let Some((node, _)) = node_for_identity(nodes, distro, holder) else {
        return Err(Refusal(format!(
            "{} is held by {holder:?}, which matches no Node; name a target with --to",
            other.name
        )));
    };
    Ok((node, format!("{} is held by {holder}", other.name)))
}

fn not_a_candidate(node: &NodeFacts) -> Option<&'static str> {
    if node.deleting {
        Some("is being deleted")
    } else if node.readiness != Readiness::Ready {
        Some("is not Ready")
    } else if !node.runs_control_plane() {
        Some("is not a server with an API server (no control-plane role)")
    } else {
        None
    }
}

fn impact(
    distro: Distro,
    lock: &str,
    from_holder: &str,
    from_node: Option<&str>,
    target: &NodeFacts,
    quorum: &QuorumCheck,
    purpose: LockPurpose,
) -> Vec<String> {
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
                "the {unit} process on {node}{holder} exits within the 30s renew deadline and is restarted by \
                 systemd; {etcd}{}",
                if quorum.applies() { format!(" ({})", quorum.describe()) } else { String::new() }
            ));
        }
        (false, None) => lines.push(format!(
            "the current holder {from_holder:?} matches no Node; if it is still running, its {unit} process exits \
             within the 30s renew deadline"
        )),
    }
    let runs = if purpose == LockPurpose::Core {
        "the core controllers; its informer start also starts the etcd controllers registered there"
    } else {
        "the etcd controllers"
    };
    lines.push(format!(
        "{} takes {lock} on its next retry (2-4 s) and runs {runs}",
        target.name
    ));
    if purpose == LockPurpose::Etcd {
        let affected = target.version.as_ref().is_some_and(|v| {
            matches!(
                v.split_impact(),
                SplitImpact::Affected { .. } | SplitImpact::Undetermined { .. }
            )
        });
        if affected {
            lines.push(format!(
                "moving {lock} does not fix k3s-io/k3s#10046 on this version: the informers start only from the \
                 {} callback; move {} onto the {lock} holder instead (the default)",
                distro.core_lock(),
                distro.core_lock()
            ));
        }
    }
    lines
}

#[cfg(test)]
mod tests;
