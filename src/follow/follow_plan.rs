//! Planning `leases follow`: which lock moves to which server identity, which objects are
//! written, what that costs, and every reason to refuse. Pure: state in, plan out.

use jiff::Timestamp;
use serde::Serialize;

use crate::diagnose::control_plane::quorum::QuorumCheck;
use crate::diagnose::leases::lock_status::{LockPurpose, LockState, LockStatus};
use crate::diagnose::leases::{LeaseAnalysis, analyse_leases};
use crate::distro::Distro;
use crate::model::cluster_state::ClusterState;
use crate::model::node::{NodeFacts, node_for_identity};
use crate::version::LockStyle;

use super::election_timing::{ElectionTiming, election_timing};
use super::follow_impact::impact;
pub(crate) use super::follow_request::{FollowRequest, Refusal};
use super::follow_target::{Target, choose_target, not_a_candidate};
use super::lock_edit::HolderEdit;
use super::split_after_move::{SplitAfterMove, split_after_move};

/// A copy of a lock that the plan writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum LockCopy {
    /// The `control-plane.alpha.kubernetes.io/leader` annotation of the ConfigMap.
    ConfigMap,
    Lease,
}

impl LockCopy {
    pub(crate) fn object(self, lock: &str) -> String {
        match self {
            LockCopy::ConfigMap => format!("ConfigMap kube-system/{lock}"),
            LockCopy::Lease => format!("Lease kube-system/{lock}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FollowPlan {
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
    /// The target is a server without an agent: no Node; `to_node` is its hostname.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub to_agentless: bool,
    pub why: String,
    pub impact: Vec<String>,
    pub quorum: QuorumCheck,
    /// Set when the locks end up on different servers (only with `--force`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_after: Option<SplitAfterMove>,
    /// Checks `--force` skipped.
    pub overridden: Vec<String>,
    /// The election timings the impact and the default wait assume, and where they come from.
    pub timing: ElectionTiming,
    /// Set when the record was released (`release()` leaves a 1 s duration): the edit writes
    /// this duration back, or a third server would take the lock a second later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore_duration_seconds: Option<i64>,
}

impl FollowPlan {
    /// What every written copy of the lock gets.
    pub(crate) fn edit(&self) -> HolderEdit<'_> {
        HolderEdit {
            holder: &self.to_identity,
            restore_duration_seconds: self.restore_duration_seconds,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub(crate) enum FollowOutcome {
    /// Nothing to do: the lock already names the target.
    Aligned {
        lock: String,
        holder: String,
    },
    Move(Box<FollowPlan>),
}

pub(crate) fn plan_follow(
    state: &ClusterState,
    distro: Distro,
    now: Timestamp,
    req: &FollowRequest,
) -> Result<FollowOutcome, Refusal> {
    let analysis = analyse_leases(state, distro, now);
    let (lock_name, lock, other, style) = lock_to_move(&analysis, distro, req)?;
    let mut overridden = Vec::new();
    let target = choose_target(state, distro, now, req, other, &mut overridden)?;
    let from_holder = lock.holder.clone().unwrap_or_default();
    if from_holder == target.identity && lock.state != LockState::Disagreeing {
        return Ok(FollowOutcome::Aligned {
            lock: lock_name,
            holder: from_holder,
        });
    }
    let mut gate = ForceGate {
        force: req.force,
        overridden,
    };
    let node = &*target.node;
    if let Some(problem) = not_a_candidate(node, now) {
        gate.pass(
            format!(
                "target {} {problem}, so it cannot take {lock_name}",
                node.name
            ),
            "pick a Ready server with --to, or override with --force",
        )?;
    }
    let nodes = state.nodes();
    let moves_core = lock.purpose == LockPurpose::Core;
    let (core_now, etcd_now) = if moves_core {
        (lock.holder.as_deref(), other.holder.as_deref())
    } else {
        (other.holder.as_deref(), lock.holder.as_deref())
    };
    let split_after = split_left_behind(
        &analysis, distro, nodes, moves_core, &target, core_now, etcd_now,
    );
    if let Some(split) = &split_after {
        gate.pass(
            format!("moving {lock_name} to {}: {}", node.name, split.summary),
            &format!(
                "to end the split move {} onto the {} holder (leases follow without --to or --lease), \
                 or override with --force",
                distro.core_lock(),
                distro.etcd_lock()
            ),
        )?;
    }
    let from_node = node_for_identity(nodes, distro, &from_holder).map(|(n, _)| n.name.clone());
    let quorum = QuorumCheck::new(nodes, from_node.as_deref(), now, &state.heartbeats);
    if !quorum.holds() {
        gate.pass(
            format!(
                "etcd would lose quorum while {} restarts ({})",
                from_node.as_deref().unwrap_or("the old holder"),
                quorum.describe()
            ),
            "bring the other etcd members back first, or override with --force",
        )?;
    }
    let holder_version = node_for_identity(nodes, distro, &from_holder)
        .and_then(|(n, _)| n.version.as_ref())
        .or(node.version.as_ref());
    let timing = election_timing(
        lock.lease_duration_seconds,
        other.lease_duration_seconds,
        holder_version,
    );
    let released = from_holder.is_empty() || lock.lease_duration_seconds.is_some_and(|d| d <= 1);
    let impact = impact(
        distro,
        lock,
        from_node.as_deref(),
        node,
        &quorum,
        etcd_now.filter(|h| moves_core && !h.is_empty() && *h != target.identity),
        &timing,
    );
    Ok(FollowOutcome::Move(Box::new(FollowPlan {
        lock: lock_name,
        purpose: lock.purpose,
        writes: copies_written(style),
        from_holder,
        from_node,
        to_agentless: nodes.iter().all(|n| n.name != node.name),
        to_node: node.name.clone(),
        to_identity: target.identity,
        why: target.why,
        impact,
        quorum,
        split_after,
        overridden: gate.overridden,
        restore_duration_seconds: released.then_some(timing.lease_duration_seconds),
        timing,
    })))
}

/// The lock `--lease` names (the core lock by default), the other one, and how the version
/// stores them; refused when it is not one of the two k3s locks or cannot be found.
fn lock_to_move<'a>(
    analysis: &'a LeaseAnalysis,
    distro: Distro,
    req: &FollowRequest,
) -> Result<(String, &'a LockStatus, &'a LockStatus, LockStyle), Refusal> {
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
    if lock.state == LockState::Unknown {
        return Err(Refusal(format!(
            "the {lock_name} lock is not among the objects read and the version is not known, so where it lives \
             cannot be told; read the cluster with access to Nodes, Leases and ConfigMaps in kube-system"
        )));
    }
    if matches!(lock.state, LockState::Missing | LockState::NotApplicable) {
        return Err(Refusal(format!(
            "there is no {lock_name} lock to move: no server campaigns for it; check the {} service",
            distro.server_unit()
        )));
    }
    Ok((lock_name, lock, other, style))
}

/// A check `--force` may skip: without it the check refuses, with it the plan records what
/// was skipped.
struct ForceGate {
    force: bool,
    overridden: Vec<String>,
}

impl ForceGate {
    fn pass(&mut self, message: String, advice: &str) -> Result<(), Refusal> {
        if !self.force {
            return Err(Refusal(format!("{message}; {advice}")));
        }
        self.overridden.push(message);
        Ok(())
    }
}

/// Whether the locks end up on different servers. The etcd lock's holder decides the version
/// whose rules apply: the target when the etcd lock moves.
fn split_left_behind(
    analysis: &LeaseAnalysis,
    distro: Distro,
    nodes: &[NodeFacts],
    moves_core: bool,
    target: &Target,
    core_now: Option<&str>,
    etcd_now: Option<&str>,
) -> Option<SplitAfterMove> {
    let etcd_version = if moves_core {
        etcd_now
            .and_then(|h| node_for_identity(nodes, distro, h))
            .and_then(|(n, _)| n.version.as_ref())
    } else {
        target.node.version.as_ref()
    }
    .or(analysis.verdict_version.as_ref());
    split_after_move(
        distro,
        moves_core,
        &target.identity,
        core_now,
        etcd_now,
        etcd_version,
    )
}

/// client-go's MultiLock writes its primary (the ConfigMap) first.
fn copies_written(style: LockStyle) -> Vec<LockCopy> {
    match style {
        LockStyle::Lease => vec![LockCopy::Lease],
        LockStyle::ConfigMap => vec![LockCopy::ConfigMap],
        LockStyle::ConfigMapAndLease => vec![LockCopy::ConfigMap, LockCopy::Lease],
    }
}

#[cfg(test)]
mod tests;
