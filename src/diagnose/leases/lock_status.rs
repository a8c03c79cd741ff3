//! The state of one k3s/RKE2 leader lock: which copies count on this version, who holds it,
//! whether that holder is fresh and is a live server.

use jiff::Timestamp;
use serde::Serialize;

use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::model::cluster_state::ClusterState;
use crate::model::lock::LockRecord;
use crate::model::node::node_for_identity;
use crate::version::LockStyle;

use super::lock_findings::{
    copies_disagree_finding, expired_finding, malformed_annotation_finding, released_finding,
};
use super::lock_holder::holder_node;
pub(crate) use super::lock_inputs::{CLOCK_SKEW_ALLOWANCE, HolderNode, LockInputs};
use crate::model::kinds::Kind;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum LockPurpose {
    /// `<prog>`: core controllers (node, helm, ... and the informer start).
    Core,
    /// `<prog>-etcd`: snapshot ConfigMap, member removal, apiserver addresses.
    Etcd,
}

/// Which objects hold the record that counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum LockKind {
    Lease,
    ConfigMap,
    Both,
    None,
}

impl LockKind {
    pub(crate) fn label(self) -> &'static str {
        match self {
            LockKind::Lease => Kind::Lease.name(),
            LockKind::ConfigMap => Kind::ConfigMap.name(),
            LockKind::Both => "Lease+ConfigMap",
            LockKind::None => "-",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum LockState {
    Held,
    Expired,
    Released,
    /// MultiLock copies name different holders.
    Disagreeing,
    Missing,
    /// Not in what was read, and whether it should be there cannot be judged: the version is
    /// unknown and the input lacks the kind of object that holds the lock on some versions
    /// (a ConfigMap annotation on 1.23 and older, a Lease from 1.28). Not checked, not missing.
    Unknown,
    /// Not used on this cluster (no managed etcd) or not knowable (not in the dump).
    NotApplicable,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LockCopies {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease: Option<LockRecord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_map: Option<LockRecord>,
    /// A ConfigMap copy left behind by an upgrade past 1.27; nothing reads it any more.
    pub config_map_ignored: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LockStatus {
    pub name: String,
    pub purpose: LockPurpose,
    pub kind: LockKind,
    pub state: LockState,
    /// The holder that counts (the Lease's when MultiLock copies disagree).
    pub holder: Option<String>,
    pub node: Option<HolderNode>,
    pub acquire_time: Option<Timestamp>,
    pub renew_time: Option<Timestamp>,
    pub renewed_seconds_ago: Option<i64>,
    pub lease_duration_seconds: Option<i64>,
    pub transitions: Option<i64>,
    pub copies: LockCopies,
}

impl LockStatus {
    /// The holder, when it is held and both copies agree: what a split compares.
    pub(crate) fn settled_holder(&self) -> Option<&str> {
        match self.state {
            LockState::Held | LockState::Expired => self.holder.as_deref(),
            _ => None,
        }
    }
}

/// Reads one lock and returns its status and what is wrong with it. `expected` says whether
/// this cluster should have the lock at all (the `-etcd` lock needs managed etcd).
pub(crate) fn examine_lock(
    input: &LockInputs<'_>,
    name: &str,
    purpose: LockPurpose,
    expected: bool,
    findings: &mut Vec<Finding>,
) -> LockStatus {
    let object = format!("Lease kube-system/{name}");
    let counted = counted_copies(input, name, findings);
    let mut status = LockStatus {
        name: name.to_string(),
        purpose,
        kind: counted.kind(),
        state: LockState::Held,
        holder: None,
        node: None,
        acquire_time: None,
        renew_time: None,
        renewed_seconds_ago: None,
        lease_duration_seconds: None,
        transitions: None,
        copies: counted.copies.clone(),
    };
    let Some(record) = counted.lease.clone().or_else(|| counted.config_map.clone()) else {
        status.state = missing_state(input, name, expected, &object, findings);
        return status;
    };
    status.holder = Some(record.holder_identity.clone());
    status.acquire_time = record.acquire_time;
    status.renew_time = record.renew_time;
    status.renewed_seconds_ago = record
        .renew_time
        .map(|t| input.now.duration_since(t).as_secs());
    status.lease_duration_seconds = record.lease_duration_seconds;
    status.transitions = record.transitions;

    if let (Some(l), Some(c)) = (&counted.lease, &counted.config_map)
        && l.holder_identity != c.holder_identity
    {
        status.state = LockState::Disagreeing;
        findings.push(copies_disagree_finding(name, &object, l, c));
    }
    if record.is_released() {
        status.state = LockState::Released;
        findings.push(released_finding(input, name, &object, &record));
        return status;
    }
    if is_expired(&record, input.now) && status.state == LockState::Held {
        status.state = LockState::Expired;
        findings.push(expired_finding(
            input,
            name,
            &object,
            &record,
            status.renewed_seconds_ago,
        ));
    }
    if input.state.nodes.is_some() {
        status.node = holder_node(input, name, &object, &record.holder_identity, findings);
    }
    status
}

/// The copies of a lock as read, and the ones that count on this version.
struct CountedCopies {
    copies: LockCopies,
    lease: Option<LockRecord>,
    config_map: Option<LockRecord>,
}

impl CountedCopies {
    fn kind(&self) -> LockKind {
        match (&self.lease, &self.config_map) {
            (Some(_), Some(_)) => LockKind::Both,
            (Some(_), None) => LockKind::Lease,
            (None, Some(_)) => LockKind::ConfigMap,
            (None, None) => LockKind::None,
        }
    }
}

/// Which copies of the lock this version reads: the Lease from 1.24, the ConfigMap annotation
/// up to 1.27 (both when the version is unknown), and not the ConfigMap left behind once the
/// holder runs a Lease-only version. A malformed annotation is a finding where it counts.
fn counted_copies(
    input: &LockInputs<'_>,
    name: &str,
    findings: &mut Vec<Finding>,
) -> CountedCopies {
    let lease = input.state.lease(name).map(|l| l.record.clone());
    let cm_record = input.state.configmap(name).and_then(|c| c.leader_record());
    let config_map = match cm_record {
        Some(Ok(record)) => Some(record),
        Some(Err(why)) => {
            if input.style.is_none_or(LockStyle::uses_configmap) {
                findings.push(malformed_annotation_finding(input, name, &why));
            }
            None
        }
        None => None,
    };
    let uses_lease = input.style.is_none_or(LockStyle::uses_lease);
    let uses_cm = input.style.is_none_or(LockStyle::uses_configmap)
        && !lease_only_holder(input, lease.as_ref());
    CountedCopies {
        lease: lease.clone().filter(|_| uses_lease),
        config_map: config_map.clone().filter(|_| uses_cm),
        copies: LockCopies {
            config_map_ignored: config_map.is_some() && !uses_cm,
            lease,
            config_map,
        },
    }
}

/// Mid-upgrade from 1.27 to 1.28: once a 1.28+ server holds the lock it renews only the Lease.
/// The 1.27 servers' MultiLock then reads a ConfigMap holder that differs from the Lease's,
/// reports `leaderelection.k8s.io/unknown`, and because the Lease keeps changing never sees the
/// record expire, so they wait: the stale ConfigMap copy is normal then, not a disagreement.
/// They can take the lock only once the Lease itself stops being renewed (`lease-expired`).
fn lease_only_holder(input: &LockInputs<'_>, lease: Option<&LockRecord>) -> bool {
    let Some(lease) = lease.filter(|l| !l.is_released()) else {
        return false;
    };
    node_for_identity(input.state.nodes(), input.distro, &lease.holder_identity)
        .and_then(|(node, _)| node.version.as_ref())
        .is_some_and(|v| !v.lock_style().uses_configmap())
}

fn is_expired(record: &LockRecord, now: Timestamp) -> bool {
    record
        .expires_at()
        .and_then(|t| t.checked_add(CLOCK_SKEW_ALLOWANCE).ok())
        .is_some_and(|deadline| deadline < now)
}

fn missing_state(
    input: &LockInputs<'_>,
    name: &str,
    expected: bool,
    object: &str,
    findings: &mut Vec<Finding>,
) -> LockState {
    let state = input.state;
    let not_in_dump = match input.style {
        Some(LockStyle::Lease) => state.leases.is_none(),
        Some(LockStyle::ConfigMap) => state.configmaps.is_none(),
        _ => state.leases.is_none() && state.configmaps.is_none(),
    };
    if not_in_dump {
        // Reported once for the whole dump by the caller.
        return LockState::NotApplicable;
    }
    if !expected {
        return LockState::NotApplicable;
    }
    if unjudgeable(input.state, input.style).is_some() {
        // Said once for both locks by the caller, as "not checked".
        return LockState::Unknown;
    }
    if input.datastore.elects_leaders().is_none() && input.state.nodes.is_some() {
        // A single server may be on sqlite, which elects no leader: absent is then healthy.
        // Said by the caller, as "not checked".
        return LockState::Unknown;
    }
    findings.push(
        Finding::new(
            Severity::Error,
            FindingCode::LeaseMissing,
            object,
            format!(
                "there is no {name} lock in kube-system although this cluster should have one: no server is \
                 campaigning for it, so its controllers run nowhere"
            ),
        )
        .fix(format!(
            "check that the {} service runs on the servers (journalctl -u {})",
            input.distro.server_unit(),
            input.distro.server_unit()
        )),
    );
    LockState::Missing
}

/// Why an absent lock cannot be judged, when it cannot: the version (and so the lock's object
/// kind, wrangler `pkg/leader/leader.go`) is unknown, and the input has only one of the two kinds a lock lives in.
/// A 1.21 cluster's `kubectl get leases` shows no `k3s` Lease because its lock is a ConfigMap
/// annotation; a ConfigMaps-only input cannot show a 1.28 cluster's Lease.
pub(crate) fn unjudgeable(state: &ClusterState, style: Option<LockStyle>) -> Option<&'static str> {
    if style.is_some() {
        return None;
    }
    match (state.leases.is_some(), state.configmaps.is_some()) {
        (true, false) => Some(
            "the version is not known and the input has Leases but no ConfigMaps: on 1.23 and older the lock is an annotation on a ConfigMap, which a Lease list cannot show",
        ),
        (false, true) => Some(
            "the version is not known and the input has ConfigMaps but no Leases: from 1.28 the lock is a Lease only",
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::unjudgeable;
    use crate::diagnose::test_cluster::TestCluster;

    #[test]
    fn the_unjudgeable_reasons_read_as_one_sentence_each() {
        let mut leases_only = TestCluster::new(crate::distro::Distro::K3s).build();
        leases_only.configmaps = None;
        let mut configmaps_only = TestCluster::new(crate::distro::Distro::K3s).build();
        configmaps_only.leases = None;
        for state in [leases_only, configmaps_only] {
            let why = unjudgeable(&state, None).expect("not judgeable without a version");
            assert!(!why.contains("  "), "{why:?}");
        }
    }
}
