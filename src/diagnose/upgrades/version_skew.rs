//! `version-skew`: breaches of Kubernetes' version-skew policy (kubernetes/website
//! `releases/version-skew-policy.md`), from the Nodes' kubeletVersions. A server's kubelet
//! runs from the same binary as its apiserver, so a control-plane Node's kubeletVersion is its
//! apiserver's version; etcd-only servers run none. Servers one minor apart mid-upgrade are
//! `mixed-versions`' warning, not a breach here.

use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::model::node::NodeFacts;

/// The apiservers' versions, oldest and newest minor, with the Nodes that run them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ApiserverSpan {
    pub oldest: u64,
    pub newest: u64,
}

/// The minors of the control-plane Nodes (Kubernetes 1.x only); `None` without any.
pub(crate) fn apiserver_span(nodes: &[NodeFacts]) -> Option<ApiserverSpan> {
    let minors: Vec<u64> = nodes
        .iter()
        .filter(|n| n.runs_control_plane())
        .filter_map(|n| n.version.as_ref().filter(|v| v.major == 1).map(|v| v.minor))
        .collect();
    Some(ApiserverSpan {
        oldest: *minors.iter().min()?,
        newest: *minors.iter().max()?,
    })
}

impl ApiserverSpan {
    /// HA apiservers must stay within one minor of each other.
    pub(crate) fn breached(&self) -> bool {
        self.newest - self.oldest > 1
    }
}

/// How many minors a kubelet may trail the newest apiserver: 3 from 1.28 control planes
/// (KEP-3935) for kubelets of 1.25 and later, 2 otherwise.
fn kubelet_may_trail(apiserver_minor: u64, kubelet_minor: u64) -> u64 {
    if apiserver_minor >= 28 && kubelet_minor >= 25 {
        3
    } else {
        2
    }
}

pub(crate) fn analyse_version_skew(nodes: &[NodeFacts]) -> Vec<Finding> {
    let Some(span) = apiserver_span(nodes) else {
        return Vec::new();
    };
    let mut findings = Vec::new();
    if span.breached() {
        findings.push(apiservers_apart(nodes, &span));
    }
    // Control-plane kubelets are their apiservers: judged above, not as kubelets.
    for node in nodes.iter().filter(|n| !n.runs_control_plane()) {
        let Some(version) = node.version.as_ref().filter(|v| v.major == 1) else {
            continue;
        };
        let may_trail = kubelet_may_trail(span.newest, version.minor);
        let breach = if version.minor > span.oldest {
            Some(format!(
                "its kubelet {} is newer than the oldest apiserver (1.{}): a kubelet may never \
                 be newer than any apiserver",
                version.as_str(),
                span.oldest
            ))
        } else if span.newest - version.minor > may_trail {
            Some(format!(
                "its kubelet {} is {} minors behind the newest apiserver (1.{}): the policy allows {may_trail}{}",
                version.as_str(),
                span.newest - version.minor,
                span.newest,
                if may_trail == 2 && version.minor < 25 {
                    " for kubelets before 1.25"
                } else if may_trail == 2 {
                    " before 1.28 control planes"
                } else {
                    ""
                }
            ))
        } else {
            None
        };
        if let Some(breach) = breach {
            let fix = if version.minor > span.oldest {
                format!(
                    "upgrade every server to 1.{} or later first: servers before agents, one at a time",
                    version.minor
                )
            } else {
                format!(
                    "upgrade {} one minor at a time until it is within {may_trail} minors of 1.{}",
                    node.name, span.newest
                )
            };
            findings.push(
                Finding::new(
                    Severity::Error,
                    FindingCode::VersionSkew,
                    format!("Node {}", node.name),
                    format!("{} is outside the version-skew policy: {breach}", node.name),
                )
                .fix(fix),
            );
        }
    }
    findings
}

fn apiservers_apart(nodes: &[NodeFacts], span: &ApiserverSpan) -> Finding {
    let mut servers: Vec<(u64, String)> = nodes
        .iter()
        .filter(|n| n.runs_control_plane())
        .filter_map(|n| {
            let v = n.version.as_ref()?;
            Some((v.minor, format!("{} on {}", v.as_str(), n.name)))
        })
        .collect();
    servers.sort();
    let list: Vec<String> = servers.into_iter().map(|(_, s)| s).collect();
    Finding::new(
        Severity::Error,
        FindingCode::VersionSkew,
        "cluster",
        format!(
            "apiservers are {} minors apart (1.{} to 1.{}), more than the one the policy allows: {}",
            span.newest - span.oldest,
            span.oldest,
            span.newest,
            list.join("; ")
        ),
    )
    .fix(format!(
        "upgrade the servers on 1.{} one minor at a time (an apiserver never skips a minor), one server at a time",
        span.oldest
    ))
}

#[cfg(test)]
mod tests;
