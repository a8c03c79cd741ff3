//! Who `leases follow` moves a lock to: the Node `--to` names (by name or hostname), else the
//! holder of the other lock; a server without an agent stands in by its apiserver identity.
//! Pure: state in, target out.

use std::borrow::Cow;

use jiff::Timestamp;

use crate::diagnose::control_plane::heartbeat::{describe_silence, silent_for};
use crate::diagnose::leases::lock_status::{LockState, LockStatus};
use crate::distro::Distro;
use crate::model::cluster_state::ClusterState;
use crate::model::lease::live_apiserver_identity;
use crate::model::node::{NodeFacts, Readiness, node_for_identity};

use super::follow_request::{FollowRequest, Refusal};

/// The server a lock moves to, and the identity written into the lock.
pub(super) struct Target<'a> {
    /// The Node, or a stand-in for a server without one (`agentless_server`).
    pub node: Cow<'a, NodeFacts>,
    /// Why this target: `--to x`, or which lock's holder it follows.
    pub why: String,
    /// The identity the target's server process campaigns with.
    pub identity: String,
}

pub(super) fn choose_target<'a>(
    state: &'a ClusterState,
    distro: Distro,
    now: Timestamp,
    req: &FollowRequest,
    other: &LockStatus,
    overridden: &mut Vec<String>,
) -> Result<Target<'a>, Refusal> {
    let nodes = state.nodes();
    let Some(to) = &req.to else {
        // The other lock's holder identity is what that server campaigns with, exactly.
        let (node, why, identity) = default_target(nodes, distro, other, req.force, overridden)?;
        let node = match node {
            Some(node) => Cow::Borrowed(node),
            None => Cow::Owned(agentless_server(state, distro, now, &identity).map_err(|_| {
                Refusal(format!(
                    "{} is held by {identity:?}, which matches no Node and no live kube-apiserver; \
                     name a target with --to",
                    other.name
                ))
            })?),
        };
        return Ok(Target {
            node,
            why,
            identity,
        });
    };
    let node = match resolve_target(nodes, distro, to)? {
        Some(node) => Cow::Borrowed(node),
        None => Cow::Owned(agentless_server(state, distro, now, to)?),
    };
    let identity = node.lock_identity(distro).to_string();
    if let Some(doubt) = unconfirmed_identity(state, distro, &node, &identity) {
        if !req.force {
            return Err(Refusal(doubt));
        }
        overridden.push(doubt);
    }
    Ok(Target {
        node,
        why: format!("--to {to}"),
        identity,
    })
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
        heartbeat: None,
        removal_asked: None,
        cordon: None,
    })
}

/// Default: `<prog>` follows the `<prog>-etcd` holder: only the `<prog>`
/// callback's `sc.Start` starts the factories the `-etcd` controllers were registered on (k3s
/// `pkg/server/server.go`, k3s-io/k3s#10046); `--lease <prog>-etcd`
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

pub(super) fn not_a_candidate(node: &NodeFacts, now: Timestamp) -> Option<String> {
    if node.deleting {
        Some("is being deleted".to_string())
    } else if node.readiness != Readiness::Ready {
        Some("is not Ready".to_string())
    } else if let Some(age) = silent_for(node, now) {
        Some(format!(
            "is Ready by its Node but has sent {}",
            describe_silence(age)
        ))
    } else if !node.runs_control_plane() {
        Some("is not a server with an API server (no control-plane role)".to_string())
    } else {
        None
    }
}
