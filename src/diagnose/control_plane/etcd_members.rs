//! etcd members beyond quorum: one member name on two Nodes, learners that stay learners, and
//! `EtcdIsVoter` conditions nobody refreshes. k3s's etcd leader alone writes that condition, for
//! every etcd Node (`manageLearners` in pkg/etcd/etcd.go returns early on any other member), so
//! a stale heartbeat points at the leader, not at the Node that carries it.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};

use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::diagnose::object_ref::ObjectRef;
use crate::distro::Distro;
use crate::model::kinds::Kind;
use crate::model::node::{Condition, NodeFacts, Readiness};

pub(crate) const VOTER_CONDITION: &str = "EtcdIsVoter";

/// k3s promotes a learner once it has caught up and removes one whose progress stalls for
/// 5 minutes (`learnerMaxStallTime`, checked every 15 s by the etcd leader, pkg/etcd/etcd.go):
/// three of those windows as a learner means neither is happening.
const LEARNER_LIMIT: SignedDuration = SignedDuration::from_mins(15);

/// The etcd leader's `setEtcdStatusCondition` refreshes every Node's heartbeat every 5 minutes,
/// even when nothing changed: three missed refreshes mean it is not being refreshed.
const HEARTBEAT_LIMIT: SignedDuration = SignedDuration::from_mins(15);

/// Whether no Ready etcd Node's condition is fresh: the one writer of them all, the etcd
/// leader's learner management, has stopped (or no server leads etcd). One finding then says
/// so, instead of one per Node that would each blame that Node.
pub(super) fn leader_silent(nodes: &[NodeFacts], now: Timestamp) -> bool {
    let judged: Vec<bool> = nodes
        .iter()
        .filter_map(|n| {
            let voter = n.conditions.get(VOTER_CONDITION)?;
            heartbeat_judged(n, voter).then(|| stale_heartbeat(n, voter, now).is_some())
        })
        .collect();
    !judged.is_empty() && judged.iter().all(|stale| *stale)
}

/// The one finding when [`leader_silent`]: the leader's side, with every Node's age.
pub(super) fn leader_silent_finding(
    nodes: &[NodeFacts],
    distro: Distro,
    now: Timestamp,
) -> Finding {
    let ages: Vec<String> = nodes
        .iter()
        .filter_map(|n| {
            let voter = n.conditions.get(VOTER_CONDITION)?;
            let age = stale_heartbeat(n, voter, now)?;
            Some(format!("{} {}", n.name, crate::age::short(age)))
        })
        .collect();
    let unit = distro.server_unit();
    Finding::new(
        Severity::Warning,
        FindingCode::EtcdVoterHeartbeatStale,
        "etcd leader",
        format!(
            "no etcd Node's {VOTER_CONDITION} condition was refreshed in the last 15 minutes ({}): the \
             etcd leader alone refreshes it, for every Node, every 5 minutes, so the server leading etcd \
             has stopped its member management (or no member leads); the member statuses here are out \
             of date",
            ages.join(", ")
        ),
    )
    .fix(format!(
        "find the etcd leader (etcdctl endpoint status --cluster, IS LEADER), check its {unit} log for \
         \"learner management\" errors, and restart only that server (systemctl restart {unit}) so \
         another member leads; the other servers need no restart"
    ))
}

/// What a member's `EtcdIsVoter` condition says: learner-stuck, or the plain member-not-voter,
/// and whether its heartbeat is stale. A stale condition may describe a member that has
/// changed since, so the voter finding then hangs under the stale heartbeat. With
/// `leader_silent` the stale heartbeat is said once for every Node ([`leader_silent_finding`]).
pub(super) fn voter_findings(
    node: &NodeFacts,
    distro: Distro,
    now: Timestamp,
    leader_silent: bool,
) -> Vec<Finding> {
    let Some(voter) = node.conditions.get(VOTER_CONDITION) else {
        return Vec::new();
    };
    let object = format!("Node {}", node.name);
    let stale = stale_heartbeat(node, voter, now);
    let mut findings = Vec::new();
    if let Some(age) = stale.filter(|_| !leader_silent) {
        let member = node
            .annotations
            .get(&distro.etcd_annotation("node-name"))
            .cloned()
            .unwrap_or_else(|| node.name.clone());
        findings.push(
            Finding::new(
                Severity::Warning,
                FindingCode::EtcdVoterHeartbeatStale,
                &object,
                format!(
                    "{}'s {VOTER_CONDITION} condition was last refreshed {} ago while other etcd Nodes' are \
                     fresh: the etcd leader refreshes every Node's every 5 minutes, so its update of this \
                     Node fails; the member status here is out of date",
                    node.name,
                    crate::age::short(age),
                ),
            )
            .fix(format!(
                "check the etcd leader's {} log (etcdctl endpoint status --cluster shows the leader) for \
                 \"Unable to set etcd status condition {member}\"; restarting {} does not refresh it",
                distro.server_unit(),
                node.name,
            )),
        );
    }
    let cause = stale.map(|_| FindingCode::EtcdVoterHeartbeatStale);
    if voter.status != "False" {
        return findings;
    }
    let detail = format!(
        "{}{}",
        voter.reason.as_deref().unwrap_or("no reason given"),
        voter
            .message
            .as_deref()
            .map(|m| format!(": {m}"))
            .unwrap_or_default()
    );
    let learner_for = (voter.reason.as_deref() == Some("MemberIsLearner"))
        .then(|| voter.last_transition.map(|t| now.duration_since(t)))
        .flatten()
        .filter(|d| *d > LEARNER_LIMIT);
    let finding = match learner_for {
        // The plain member-not-voter would say the same thing less precisely, so the stuck
        // learner replaces it instead of hanging under it.
        Some(age) => Finding::new(
            Severity::Error,
            FindingCode::EtcdLearnerStuck,
            &object,
            format!(
                "{}'s etcd member has been a learner for {} ({detail}): k3s promotes a learner once it has \
                 caught up and removes one stalled for 5 minutes, so it is neither catching up nor being \
                 removed; it does not count towards quorum",
                node.name,
                crate::age::short(age)
            ),
        )
        .fix(format!(
            "check the {} log on {} and on the etcd leader for learner promotion errors, and the disk and \
             network latency between them; restart it (systemctl restart {}) to rejoin",
            distro.server_unit(),
            node.name,
            distro.server_unit()
        )),
        None => Finding::new(
            Severity::Warning,
            FindingCode::MemberNotVoter,
            &object,
            format!(
                "{}'s etcd member is not a voter ({detail}): it does not count towards quorum",
                node.name
            ),
        ),
    };
    findings.push(finding.caused_by(cause));
    findings
}

/// How old the heartbeat is, when it is older than the limit on a Ready etcd member: a
/// NotReady server's controller is expected to be silent.
fn stale_heartbeat(node: &NodeFacts, voter: &Condition, now: Timestamp) -> Option<SignedDuration> {
    if !heartbeat_judged(node, voter) {
        return None;
    }
    let age = now.duration_since(voter.last_heartbeat?);
    (age > HEARTBEAT_LIMIT).then_some(age)
}

/// A heartbeat is judged on a Ready etcd member that is not going away and has one.
fn heartbeat_judged(node: &NodeFacts, voter: &Condition) -> bool {
    node.readiness == Readiness::Ready
        && !node.deleting
        && node.is_etcd_member()
        && voter.last_heartbeat.is_some()
}

/// Nodes sharing one `etcd.<prog>.cattle.io/node-name`: a machine cloned with its etcd data
/// keeps the original's member name (rancher/rke2#5482, k3s-io/k3s#9521).
pub(super) fn duplicate_member_names(nodes: &[NodeFacts], distro: Distro) -> Vec<Finding> {
    let key = distro.etcd_annotation("node-name");
    let mut by_name: BTreeMap<&str, Vec<&NodeFacts>> = BTreeMap::new();
    for node in nodes {
        if let Some(name) = node.annotations.get(&key).filter(|v| !v.is_empty()) {
            by_name.entry(name).or_default().push(node);
        }
    }
    by_name
        .into_iter()
        .filter(|(_, holders)| holders.len() > 1)
        .map(|(member, mut holders)| {
            // The Node created last is most likely the clone; a Node without a creation time
            // sorts first, so it is never the one named as the copy.
            holders.sort_by_key(|n| (n.created, n.name.clone()));
            let names: Vec<String> = holders.iter().map(|n| n.name.clone()).collect();
            let clone = names.last().cloned().unwrap_or_default();
            let refs: Vec<ObjectRef> = names
                .iter()
                .filter_map(|n| ObjectRef::new(Kind::Node.name(), None, n))
                .collect();
            Finding::new(
                Severity::Error,
                FindingCode::EtcdMemberNameDuplicate,
                format!("Node {clone}"),
                format!(
                    "Nodes {} carry one etcd member name {member:?} ({key}): etcd knows one member by that \
                     name, so the servers fight over it (a machine cloned with its etcd data keeps the \
                     original's name)",
                    names.join(", ")
                ),
            )
            .listing(&names)
            .about(refs)
            .fix(format!(
                "on {clone} (the Node created last): stop {unit}, move /var/lib/rancher/{prog}/server/db \
                 aside, and start {unit} with a unique --node-name so it joins as a new member while the \
                 original keeps its own",
                unit = distro.server_unit(),
                prog = distro.prog()
            ))
        })
        .collect()
}

/// The etcd members that do not show `EtcdIsVoter` because their version predates it (or
/// cannot be told), for the check's note: "not published by this version", never healthy.
pub(crate) fn voter_not_published(nodes: &[NodeFacts]) -> Option<String> {
    let mut too_old = Vec::new();
    let mut unknown = Vec::new();
    for node in nodes.iter().filter(|n| n.is_etcd_member()) {
        if node.conditions.contains_key(VOTER_CONDITION) {
            continue;
        }
        match node.version.as_ref().map(|v| (v, v.publishes_etcd_voter())) {
            Some((_, Some(true))) => {}
            Some((v, Some(false))) => too_old.push(format!(
                "{} ({}, first in {})",
                node.name,
                v.as_str(),
                v.etcd_voter_since()
            )),
            _ => unknown.push(format!("{} ({})", node.name, node.kubelet_version)),
        }
    }
    let mut parts = Vec::new();
    if !too_old.is_empty() {
        parts.push(format!(
            "{VOTER_CONDITION} not published by this version on {}",
            too_old.join(", ")
        ));
    }
    if !unknown.is_empty() {
        parts.push(format!(
            "{VOTER_CONDITION} absent and the version cannot tell whether it should be on {}",
            unknown.join(", ")
        ));
    }
    (!parts.is_empty()).then(|| {
        format!(
            "{}: learners and stalled etcd controllers not checked there",
            parts.join("; ")
        )
    })
}

#[cfg(test)]
mod tests;
