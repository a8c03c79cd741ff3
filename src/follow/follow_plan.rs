//! Planning `leases follow`: which lock moves to which server identity, which objects are
//! written, what that costs, and every reason to refuse. Pure: state in, plan out.

use jiff::Timestamp;
use serde::Serialize;

use crate::diagnose::control_plane::quorum::QuorumCheck;
use crate::diagnose::leases::analyse_leases;
use crate::diagnose::leases::lock_status::{LockPurpose, LockState, LockStatus};
use crate::distro::Distro;
use crate::input::ClusterState;
use crate::model::lease::live_apiserver_identity;
use crate::model::node::{NodeFacts, Readiness, node_for_identity};
use crate::version::{LockStyle, SplitImpact};

use super::election_timing::{ElectionTiming, election_timing};
use super::lock_edit::HolderEdit;
use super::split_after_move::{SplitAfterMove, split_after_move};

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
    pub fn edit(&self) -> HolderEdit<'_> {
        HolderEdit {
            holder: &self.to_identity,
            restore_duration_seconds: self.restore_duration_seconds,
        }
    }
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
    let nodes = state.nodes();
    let mut overridden = Vec::new();
    let stand_in;
    let (target, why, to_identity) = match &req.to {
        Some(to) => {
            let target = match resolve_target(nodes, distro, to)? {
                Some(node) => node,
                None => {
                    stand_in = agentless_server(state, distro, now, to)?;
                    &stand_in
                }
            };
            let identity = target.lock_identity(distro).to_string();
            if let Some(doubt) = unconfirmed_identity(state, distro, target, &identity) {
                if !req.force {
                    return Err(Refusal(doubt));
                }
                overridden.push(doubt);
            }
            (target, format!("--to {to}"), identity)
        }
        // The other lock's holder identity is what that server campaigns with, exactly.
        None => {
            let (node, why, identity) =
                default_target(nodes, distro, other, req.force, &mut overridden)?;
            let target = match node {
                Some(node) => node,
                None => {
                    stand_in = agentless_server(state, distro, now, &identity).map_err(|_| {
                        Refusal(format!(
                            "{} is held by {identity:?}, which matches no Node and no live kube-apiserver; \
                             name a target with --to",
                            other.name
                        ))
                    })?;
                    &stand_in
                }
            };
            (target, why, identity)
        }
    };
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

    let moves_core = lock.purpose == LockPurpose::Core;
    let (core_now, etcd_now) = if moves_core {
        (lock.holder.as_deref(), other.holder.as_deref())
    } else {
        (other.holder.as_deref(), lock.holder.as_deref())
    };
    let etcd_version = if moves_core {
        etcd_now
            .and_then(|h| node_for_identity(nodes, distro, h))
            .and_then(|(n, _)| n.version.as_ref())
    } else {
        target.version.as_ref()
    }
    .or(analysis.verdict_version.as_ref());
    let split_after = split_after_move(
        distro,
        moves_core,
        &to_identity,
        core_now,
        etcd_now,
        etcd_version,
    );
    if let Some(split) = &split_after {
        let message = format!("moving {lock_name} to {}: {}", target.name, split.summary);
        if !req.force {
            return Err(Refusal(format!(
                "{message}; to end the split move {core_name} onto the {etcd_name} holder (leases follow without \
                 --to or --lease), or override with --force"
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
    let holder_version = node_for_identity(nodes, distro, &from_holder)
        .and_then(|(n, _)| n.version.as_ref())
        .or(target.version.as_ref());
    let timing = election_timing(
        lock.lease_duration_seconds,
        other.lease_duration_seconds,
        holder_version,
    );
    let released = from_holder.is_empty() || lock.lease_duration_seconds.is_some_and(|d| d <= 1);
    let restore_duration_seconds = released.then_some(timing.lease_duration_seconds);
    let impact = impact(
        distro,
        lock,
        from_node.as_deref(),
        target,
        &quorum,
        etcd_now.filter(|h| moves_core && !h.is_empty() && *h != to_identity),
        &timing,
    );
    Ok(FollowOutcome::Move(Box::new(FollowPlan {
        lock: lock_name,
        purpose: lock.purpose,
        writes,
        from_holder,
        from_node,
        to_identity,
        to_node: target.name.clone(),
        to_agentless: nodes.iter().all(|n| n.name != target.name),
        why,
        impact,
        quorum,
        split_after,
        overridden,
        timing,
        restore_duration_seconds,
    })))
}

/// `--to` takes a node name or a hostname; a value that is one node's name and another's
/// hostname is refused rather than guessed.
fn resolve_target<'a>(
    nodes: &'a [NodeFacts],
    distro: Distro,
    to: &str,
) -> Result<Option<&'a NodeFacts>, Refusal> {
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
        (Some(n), _) | (None, Some(n)) => Ok(Some(n)),
        (None, None) => Ok(None),
    }
}

/// A server run with `--disable-agent` has no Node, but its kube-apiserver renews an identity
/// Lease labelled with its hostname, which is also its election identity. The plan stands it in
/// for the Node it does not have: named by that hostname, a live server, version unknown.
fn agentless_server(
    state: &ClusterState,
    distro: Distro,
    now: Timestamp,
    hostname: &str,
) -> Result<NodeFacts, Refusal> {
    let leases = state.leases.as_deref().unwrap_or_default();
    let at = now - jiff::SignedDuration::from_secs(10);
    if live_apiserver_identity(leases, hostname, at).is_none() {
        return Err(Refusal(format!(
            "--to {hostname}: no Node has that name or {} annotation, and no live kube-apiserver has that \
             hostname; see `kubectl get nodes` and `kubectl -n kube-system get leases -l \
             apiserver.kubernetes.io/identity`",
            distro.hostname_annotation()
        )));
    }
    Ok(NodeFacts {
        name: hostname.to_string(),
        labels: [(
            "node-role.kubernetes.io/control-plane".to_string(),
            "true".to_string(),
        )]
        .into(),
        annotations: [(distro.hostname_annotation(), hostname.to_string())].into(),
        finalizers: Vec::new(),
        deleting: false,
        deletion_time: None,
        readiness: Readiness::Ready,
        kubelet_version: String::new(),
        version: None,
        conditions: Default::default(),
        created: None,
        addresses: Vec::new(),
    })
}

/// Default: `<prog>` follows the `<prog>-etcd` holder (facts §1.9); `--lease <prog>-etcd`
/// follows the `<prog>` holder.
fn default_target<'a>(
    nodes: &'a [NodeFacts],
    distro: Distro,
    other: &LockStatus,
    force: bool,
    overridden: &mut Vec<String>,
) -> Result<(Option<&'a NodeFacts>, String, String), Refusal> {
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
    // No Node: perhaps a server without an agent, which the caller looks for.
    let node = node_for_identity(nodes, distro, holder).map(|(n, _)| n);
    Ok((
        node,
        format!("{} is held by {holder}", other.name),
        holder.to_string(),
    ))
}

/// `--to` names a Node; the identity written is its `<prog>.io/hostname`. When that is the node
/// name and some server of the cluster campaigns as a `localhost` hostname, k3s may have put the
/// node name there in place of the real `os.Hostname()` (`getHostname`, `pkg/agent/run.go`), and
/// writing it would name a holder no server campaigns as. Unless a record already shows a server
/// campaigning with it, say so instead.
fn unconfirmed_identity(
    state: &ClusterState,
    distro: Distro,
    target: &NodeFacts,
    identity: &str,
) -> Option<String> {
    if identity != target.name {
        return None;
    }
    let leases = state.leases.as_deref().unwrap_or_default();
    // Lock holders (`<hostname>` or upstream `<hostname>_<uuid>`) and apiserver hostnames.
    let campaigning: Vec<&str> = leases
        .iter()
        .map(|l| {
            let h = l.record.holder_identity.as_str();
            if l.is_apiserver_identity() {
                l.apiserver_hostname().unwrap_or_default()
            } else {
                h.rsplit_once('_').map_or(h, |(host, _)| host)
            }
        })
        .collect();
    let localhost = campaigning.iter().find(|h| h.contains("localhost"))?;
    if campaigning.contains(&identity) {
        return None;
    }
    Some(format!(
        "cannot establish the identity {} campaigns with: its {} is its node name, which k3s also writes \
         when the OS hostname contains \"localhost\" (a server here campaigns as {localhost:?}), and no lock \
         record shows a server campaigning as {identity:?}; run `hostname` on {}: if it prints {identity}, \
         re-run with --force, else move the lock without --to once that server holds {}",
        target.name,
        distro.hostname_annotation(),
        target.name,
        distro.etcd_lock()
    ))
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
        // Facts §1.9/§2.4: before k3s-io/k3s#10047 the -etcd callback only registers handlers;
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

#[cfg(test)]
mod tests;
