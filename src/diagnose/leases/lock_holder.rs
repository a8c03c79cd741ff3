//! Whether a lock's holder is a live server: the Node it names (by the hostname annotation,
//! node name or hostname label), or a server without an agent that only its kube-apiserver
//! identity Lease shows; a holder that is neither, or a Node that is not a Ready server, is
//! a finding.

use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::model::lease::live_apiserver_identity;
use crate::model::node::node_for_identity;

use super::lock_inputs::{CLOCK_SKEW_ALLOWANCE, HolderNode, LockInputs};

pub(super) fn holder_node(
    input: &LockInputs<'_>,
    name: &str,
    object: &str,
    holder: &str,
    findings: &mut Vec<Finding>,
) -> Option<HolderNode> {
    let distro = input.distro;
    let Some((node, matched_by)) = node_for_identity(input.state.nodes(), distro, holder) else {
        if let Some(identity) = live_apiserver(input, holder) {
            findings.push(Finding::new(
                Severity::Info,
                FindingCode::LeaseHolderAgentless,
                object,
                format!(
                    "{name} is held by {holder}, a server without an agent (--disable-agent): no Node, but its \
                     kube-apiserver renews identity Lease kube-system/{identity}"
                ),
            ));
            return None;
        }
        findings.push(
            Finding::new(
                Severity::Error,
                FindingCode::LeaseHolderUnknown,
                object,
                format!(
                    "{name} is held by {holder:?}, which matches no Node by the {} annotation, node name or \
                     kubernetes.io/hostname label: {}",
                    distro.hostname_annotation(),
                    if holder.contains("localhost") {
                        format!(
                            "k3s writes the node name into {} when the OS hostname contains \"localhost\", and \
                             more than one server (or none) could be this one; run `hostname` on the servers to \
                             find it",
                            distro.hostname_annotation()
                        )
                    } else {
                        "the holder is gone or was never a server of this cluster".to_string()
                    }
                ),
            )
            .fix(format!(
                "if that machine is gone, its lock expires within 45s and another server takes over; if it \
                 persists, check the {} service on the servers",
                distro.server_unit()
            )),
        );
        return None;
    };
    let problem = if node.deleting {
        Some("is being deleted")
    } else if node.readiness != crate::model::node::Readiness::Ready {
        Some(match node.readiness {
            crate::model::node::Readiness::NotReady => "is NotReady",
            _ => "has an Unknown Ready condition (the kubelet stopped reporting)",
        })
    } else if !node.runs_control_plane() {
        Some("is not a server with an API server (no control-plane role)")
    } else {
        None
    };
    if let Some(problem) = problem {
        findings.push(
            Finding::new(
                Severity::Error,
                FindingCode::LeaseHolderNotReady,
                object,
                format!(
                    "{name} is held by {holder}, whose Node {} {problem}",
                    node.name
                ),
            )
            .fix(format!(
                "check the {} service on {}; another server takes over once the lock expires",
                distro.server_unit(),
                node.name
            )),
        );
    }
    Some(HolderNode::of(node, matched_by))
}

/// The fresh kube-apiserver identity Lease whose hostname is `holder`: a live server, agent or not.
fn live_apiserver<'a>(input: &'a LockInputs<'_>, holder: &str) -> Option<&'a str> {
    let leases = input.state.leases.as_deref().unwrap_or_default();
    live_apiserver_identity(leases, holder, input.now - CLOCK_SKEW_ALLOWANCE)
        .map(|l| l.name.as_str())
}
