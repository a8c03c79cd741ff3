//! What `serve --heal` may move, judged on the cluster as watched: the split `leases` reports
//! (its severity decides: an error on an affected version is healed, a warning on a fixed one
//! never), the move `leases follow --fix` would plan with no `--to`, and every safety gate
//! that holds it back. Pure: the state and the API server's time are parameters; what only a
//! read can tell (the pause annotation, a reboot daemon's lock) comes in as `outside`.

use jiff::Timestamp;

use crate::diagnose::control_plane::quorum::QuorumCheck;
use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::diagnose::leases::{LeaseAnalysis, analyse_leases};
use crate::distro::Distro;
use crate::follow::follow_plan::{FollowOutcome, FollowPlan, FollowRequest, plan_follow};
use crate::model::cluster_state::ClusterState;
use crate::model::node::{Readiness, node_for_identity};

/// Why a heal does not happen now. The labels are stable: they are the `reason` of
/// `k3sdoctor_heal_blocked` and of the log lines and `/report`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Gate {
    /// A lock is expired, released, missing, its copies disagree, or its holder is unknown.
    LockNotFresh,
    TargetNotReady,
    TargetNotServer,
    /// `EtcdIsVoter` is False on the target (a learner).
    TargetNotVoter,
    /// etcd would lose quorum while the old holder restarts.
    QuorumAtRisk,
    /// A Node carries `etcd.<prog>.cattle.io/remove=true`: a member removal is in flight.
    MemberRemoval,
    /// kured holds its reboot lock (`weave.works/kured-node-lock` on its DaemonSet).
    RebootInProgress,
    /// `k3sdoctor.io/heal-paused` on Namespace kube-system.
    Paused,
    /// A heal happened less than the cooldown ago.
    Cooldown,
    /// This very move failed before; not retried until the state changes.
    FailedBefore,
    /// The split is on a fixed version: a warning, never healed.
    FixedVersion,
    /// `leases follow` refuses the move for a reason no other gate names.
    PlanRefused,
    /// Another replica holds the heal Lease (or the election has not answered yet).
    NotLeader,
    /// The API server refused this replica the heal Lease (403): the heal role is missing.
    ElectionDenied,
    /// The cooldown and failed moves recorded on the heal Lease cannot be read or written.
    GuardrailsUnknown,
}

impl Gate {
    pub(crate) const ALL: [Gate; 15] = [
        Gate::LockNotFresh,
        Gate::TargetNotReady,
        Gate::TargetNotServer,
        Gate::TargetNotVoter,
        Gate::QuorumAtRisk,
        Gate::MemberRemoval,
        Gate::RebootInProgress,
        Gate::Paused,
        Gate::Cooldown,
        Gate::FailedBefore,
        Gate::FixedVersion,
        Gate::PlanRefused,
        Gate::NotLeader,
        Gate::ElectionDenied,
        Gate::GuardrailsUnknown,
    ];

    pub(crate) fn label(&self) -> &'static str {
        match self {
            Gate::LockNotFresh => "lock-not-fresh",
            Gate::TargetNotReady => "target-not-ready",
            Gate::TargetNotServer => "target-not-server",
            Gate::TargetNotVoter => "target-not-voter",
            Gate::QuorumAtRisk => "quorum-at-risk",
            Gate::MemberRemoval => "member-removal",
            Gate::RebootInProgress => "reboot-in-progress",
            Gate::Paused => "paused",
            Gate::Cooldown => "cooldown",
            Gate::FailedBefore => "failed-before",
            Gate::FixedVersion => "fixed-version",
            Gate::PlanRefused => "plan-refused",
            Gate::NotLeader => "not-leader",
            Gate::ElectionDenied => "election-denied",
            Gate::GuardrailsUnknown => "guardrails-unknown",
        }
    }
}

/// A gate that blocks, with the sentence that says why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Blocked {
    pub gate: Gate,
    pub why: String,
}

/// Facts a read outside the watched state gives.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Outside {
    /// The value of `k3sdoctor.io/heal-paused` (any value = the reason).
    pub paused: Option<String>,
    /// The value of kured's lock annotation, when it holds a node.
    pub reboot_lock: Option<String>,
}

/// The split and the move that would heal it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SplitCandidate {
    /// `k3s` and who holds it, and the `-etcd` holder it would move to.
    pub lock: String,
    pub from: String,
    pub to: String,
    /// The plan `leases follow --fix` (no `--to`, no `--force`) makes; `None` when it refuses.
    pub plan: Option<Box<FollowPlan>>,
    /// Every gate of the cluster's state that blocks (empty: the move may go ahead).
    pub blocked: Vec<Blocked>,
}

/// `None`: no split. Otherwise the split, the plan, and what blocks it.
pub(crate) fn heal_candidate(
    state: &ClusterState,
    distro: Distro,
    now: Timestamp,
    outside: &Outside,
) -> Option<SplitCandidate> {
    let analysis = analyse_leases(state, distro, now);
    let split = analysis
        .findings
        .iter()
        .find(|f| f.code == FindingCode::LeaseSplit)?;
    let holder = |name: &str| {
        analysis
            .locks
            .iter()
            .find(|l| l.name == name)
            .and_then(|l| l.holder.clone())
            .unwrap_or_default()
    };
    let (from, to) = (holder(&distro.core_lock()), holder(&distro.etcd_lock()));
    let mut blocked = lock_gates(&analysis, split);
    blocked.extend(target_gates(state, distro, &to));
    blocked.extend(etcd_gates(state, distro, &from, now));
    blocked.extend(outside_gates(outside));
    let plan = plan_gate(state, distro, now, &mut blocked);
    Some(SplitCandidate {
        lock: distro.core_lock(),
        from,
        to,
        plan,
        blocked,
    })
}

/// The split itself: one on a fixed version is a warning and never healed; locks that are not
/// fresh give no holder to trust.
fn lock_gates(analysis: &LeaseAnalysis, split: &Finding) -> Vec<Blocked> {
    let mut blocked = Vec::new();
    if split.severity != Severity::Error {
        blocked.push(Blocked {
            gate: Gate::FixedVersion,
            why: "the split is on a fixed version (a warning): the etcd controllers run anyway; never healed"
                .into(),
        });
    }
    let stale = analysis.findings.iter().find(|f| {
        matches!(
            f.code,
            FindingCode::LeaseExpired
                | FindingCode::LeaseReleased
                | FindingCode::LeaseMissing
                | FindingCode::LeaseCopiesDisagree
                | FindingCode::LeaseHolderUnknown
        )
    });
    if let Some(f) = stale {
        blocked.push(Blocked {
            gate: Gate::LockNotFresh,
            why: format!("{}: {}", f.code.as_str(), f.object),
        });
    }
    blocked
}

/// The server the core lock would move to: the etcd lock's holder, which must be a Ready
/// server and an etcd voter. Holders are matched to Nodes as `leases` and `follow` match them
/// (hostname annotation, node name, hostname label, agentless servers), so a holder they know
/// is known here too.
fn target_gates(state: &ClusterState, distro: Distro, to: &str) -> Vec<Blocked> {
    let Some((node, _)) = node_for_identity(state.nodes(), distro, to) else {
        return vec![Blocked {
            gate: Gate::TargetNotReady,
            why: format!(
                "{} is held by {to:?}, which matches no Node",
                distro.etcd_lock()
            ),
        }];
    };
    let mut blocked = Vec::new();
    if node.readiness != Readiness::Ready || node.deleting {
        blocked.push(Blocked {
            gate: Gate::TargetNotReady,
            why: format!(
                "the target node {} is {}",
                node.name,
                node.readiness.label()
            ),
        });
    }
    if !node.is_server() {
        blocked.push(Blocked {
            gate: Gate::TargetNotServer,
            why: format!("the target node {} is not a server", node.name),
        });
    }
    if node
        .conditions
        .get("EtcdIsVoter")
        .is_some_and(|c| c.status == "False")
    {
        blocked.push(Blocked {
            gate: Gate::TargetNotVoter,
            why: format!(
                "the target node {} is not an etcd voter (EtcdIsVoter False)",
                node.name
            ),
        });
    }
    blocked
}

/// etcd while the old holder restarts: quorum must hold, and no member removal may be in
/// flight.
fn etcd_gates(state: &ClusterState, distro: Distro, from: &str, now: Timestamp) -> Vec<Blocked> {
    let nodes = state.nodes();
    let mut blocked = Vec::new();
    let from_node = node_for_identity(nodes, distro, from).map(|(n, _)| n.name.as_str());
    let quorum = QuorumCheck::new(nodes, from_node, now, &state.heartbeats);
    if !quorum.holds() {
        blocked.push(Blocked {
            gate: Gate::QuorumAtRisk,
            why: format!(
                "etcd would lose quorum while {from} restarts ({})",
                quorum.describe()
            ),
        });
    }
    let remove = distro.etcd_annotation("remove");
    if let Some(node) = nodes
        .iter()
        .find(|n| n.annotations.get(&remove).map(String::as_str) == Some("true"))
    {
        blocked.push(Blocked {
            gate: Gate::MemberRemoval,
            why: format!(
                "Node {} carries {remove}=true: an etcd member removal is in flight",
                node.name
            ),
        });
    }
    blocked
}

/// What the operators said outside the watched objects: a reboot in progress, a pause.
fn outside_gates(outside: &Outside) -> Vec<Blocked> {
    let mut blocked = Vec::new();
    if let Some(lock) = &outside.reboot_lock {
        blocked.push(Blocked {
            gate: Gate::RebootInProgress,
            why: format!("kured holds its reboot lock ({lock})"),
        });
    }
    if let Some(reason) = &outside.paused {
        blocked.push(Blocked {
            gate: Gate::Paused,
            why: format!("Namespace kube-system carries {PAUSE_ANNOTATION}: {reason:?}"),
        });
    }
    blocked
}

/// The move `leases follow --fix` plans with no `--to`; its refusal blocks only when no gate
/// above already says why.
fn plan_gate(
    state: &ClusterState,
    distro: Distro,
    now: Timestamp,
    blocked: &mut Vec<Blocked>,
) -> Option<Box<FollowPlan>> {
    let plan = match plan_follow(state, distro, now, &FollowRequest::default()) {
        Ok(FollowOutcome::Move(plan)) => Some(plan),
        Ok(_) => None,
        Err(refusal) => {
            if blocked
                .iter()
                .all(|b| b.gate == Gate::Paused || b.gate == Gate::RebootInProgress)
            {
                blocked.push(Blocked {
                    gate: Gate::PlanRefused,
                    why: refusal.0,
                });
            }
            None
        }
    };
    if plan.is_none() && blocked.is_empty() {
        blocked.push(Blocked {
            gate: Gate::PlanRefused,
            why: "leases follow plans no move".into(),
        });
    }
    plan
}

/// The Namespace annotation that pauses every heal of the cluster.
pub(crate) const PAUSE_ANNOTATION: &str = "k3sdoctor.io/heal-paused";

/// kured's lock: an annotation on its DaemonSet naming the node it reboots
/// (kured `cmd/kured/main.go`, `--lock-annotation`).
pub(crate) const KURED_LOCK_ANNOTATION: &str = "weave.works/kured-node-lock";

#[cfg(test)]
mod tests;
