//! The `leases` analyser: both k3s/RKE2 locks, the split verdict, the other elections.

pub(crate) mod lease_changes;
mod lease_split;
mod lock_findings;
mod lock_holder;
mod lock_inputs;
pub(crate) mod lock_status;

use jiff::Timestamp;
use serde::Serialize;

use self::lease_split::{split_finding, verdict_version};
use self::lock_status::{HolderNode, LockInputs, LockPurpose, LockStatus, examine_lock};
use super::cluster_summary::ClusterSummary;
use super::finding::{Finding, FindingCode, Severity, rank};
use super::upgrades::version_skew::apiserver_span;
use crate::distro::Distro;
use crate::model::cluster_state::ClusterState;
use crate::model::kinds::{Kind, dump_command};
use crate::model::node::node_for_identity;
use crate::version::ProductVersion;

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LeaseAnalysis {
    pub cluster: ClusterSummary,
    /// The version the split verdict was judged on, and whose it is.
    pub verdict_version: Option<ProductVersion>,
    pub verdict_version_from: Option<String>,
    pub locks: Vec<LockStatus>,
    /// kube-controller-manager, kube-scheduler, `<prog>-cloud-controller-manager`: shown, never judged.
    pub other_elections: Vec<ElectionStatus>,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ElectionStatus {
    pub name: String,
    pub holder: String,
    /// The holder's Node name; `holderNode` has the Node in the shape `locks[].node` has.
    pub node: Option<String>,
    pub holder_node: Option<HolderNode>,
    pub acquire_time: Option<Timestamp>,
    pub renew_time: Option<Timestamp>,
    pub renewed_seconds_ago: Option<i64>,
    pub lease_duration_seconds: Option<i64>,
    pub transitions: Option<i64>,
}

pub(crate) fn analyse_leases(
    state: &ClusterState,
    distro: Distro,
    now: Timestamp,
) -> LeaseAnalysis {
    let cluster = ClusterSummary::build(state, distro);
    let mut findings = Vec::new();
    let input = LockInputs {
        state,
        distro,
        now,
        style: cluster.lock_style,
        datastore: &cluster.datastore,
    };

    // A single server on sqlite elects no leader: no lock is expected there.
    let core_expected = (state.nodes.is_none()
        || state.nodes().iter().any(|n| n.runs_control_plane()))
        && cluster.datastore.elects_leaders() != Some(false);
    let core = examine_lock(
        &input,
        &distro.core_lock(),
        LockPurpose::Core,
        core_expected,
        &mut findings,
    );
    let etcd = examine_lock(
        &input,
        &distro.etcd_lock(),
        LockPurpose::Etcd,
        etcd_expected(state),
        &mut findings,
    );

    let verdict = verdict_version(state, distro, &core, &etcd);
    findings.extend(split_finding(
        distro,
        cluster.lock_style,
        &core,
        &etcd,
        verdict.as_ref(),
    ));
    // Apiservers more than a minor apart are version-skew's error, not this warning.
    if !apiserver_span(state.nodes()).is_some_and(|span| span.breached()) {
        findings.extend(mixed_versions(
            &cluster,
            verdict.as_ref().map(|v| v.version.as_str()),
        ));
    }
    findings.extend(dump_gaps(state, &cluster));
    rank(&mut findings);

    LeaseAnalysis {
        other_elections: other_elections(state, distro, now),
        verdict_version: verdict.as_ref().map(|v| v.version.clone()),
        verdict_version_from: verdict.map(|v| v.from),
        cluster,
        locks: vec![core, etcd],
        findings,
    }
}

/// Managed etcd runs where Nodes carry the etcd role; the `-etcd` election exists from the
/// versions that have it (see `ProductVersion::has_etcd_lock`).
fn etcd_expected(state: &ClusterState) -> bool {
    let nodes = state.nodes();
    nodes.iter().any(|n| n.has_etcd_role())
        && nodes
            .iter()
            .filter(|n| n.is_server())
            .any(|n| n.version.as_ref().and_then(|v| v.has_etcd_lock()) == Some(true))
}

fn mixed_versions(cluster: &ClusterSummary, verdict: Option<&str>) -> Option<Finding> {
    let groups = cluster.server_versions();
    if groups.len() < 2 {
        return None;
    }
    let list = groups
        .iter()
        .map(|g| format!("{} on {}", g.version, g.nodes.join(", ")))
        .collect::<Vec<_>>()
        .join("; ");
    let judged = verdict
        .map(|v| format!("; lock verdicts use {v}, the version of the lock holders"))
        .unwrap_or_default();
    Some(
        Finding::new(
            Severity::Warning,
            FindingCode::MixedVersions,
            "cluster",
            format!("servers run different versions (an upgrade in progress?): {list}{judged}"),
        )
        .fix("finish the upgrade so every server runs the same version"),
    )
}

fn dump_gaps(state: &ClusterState, cluster: &ClusterSummary) -> Vec<Finding> {
    if !state.origin.is_dump() {
        return Vec::new();
    }
    let mut gaps = Vec::new();
    // A support bundle's reader says which of its files would have held the kind and why it
    // does not; a plain dump gets the kubectl command that adds it.
    let mut gap = |kind: Kind, what: &str, effect: &str| {
        let (message, fix) = match state.gap(kind.name()) {
            Some(g) => (
                format!("the bundle has no {}: {effect}", g.missing),
                g.fix.clone(),
            ),
            None => (
                format!("the dump has no {what}: {effect}"),
                format!("add the output of `{}` to the dump", dump_command(&[kind])),
            ),
        };
        gaps.push(
            Finding::new(
                Severity::Warning,
                FindingCode::DumpIncomplete,
                "dump",
                message,
            )
            .fix(fix),
        );
    };
    if state.nodes.is_none() {
        gap(
            Kind::Node,
            "Node objects",
            "holders could not be mapped to servers and versions are unknown",
        );
    }
    let style = cluster.lock_style;
    if state.leases.is_none() && style.is_none_or(|s| s.uses_lease()) {
        gap(
            Kind::Lease,
            "Leases from kube-system",
            "the lease locks were not checked",
        );
    }
    if state.configmaps.is_none() && style.is_some_and(|s| s.uses_configmap()) {
        gap(
            Kind::ConfigMap,
            "ConfigMaps from kube-system",
            "the ConfigMap copies of the locks were not checked",
        );
    }
    if let Some(file) = &state.holders_only {
        gaps.push(
            Finding::new(
                Severity::Warning,
                FindingCode::DumpIncomplete,
                "dump",
                format!(
                    "{file} names each lock's holder only (a kubectl table: no renew time, no duration): \
                     who holds which lock was checked, whether the holder still renews it was not"
                ),
            )
            .fix("add `kubectl -n kube-system get leases -o yaml` from a server to judge freshness"),
        );
    }
    gaps
}

/// Upstream elections keep `<hostname>_<uuid>` holders; shown for context in `wide` output.
fn other_elections(state: &ClusterState, distro: Distro, now: Timestamp) -> Vec<ElectionStatus> {
    let names = [
        "kube-controller-manager".to_string(),
        "kube-scheduler".to_string(),
        distro.cloud_controller_lock(),
    ];
    names
        .iter()
        .filter_map(|name| state.lease(name))
        .filter(|l| !l.is_apiserver_identity())
        .map(|l| {
            let r = &l.record;
            let hostname = r.holder_identity.split('_').next().unwrap_or_default();
            let node = node_for_identity(state.nodes(), distro, hostname);
            ElectionStatus {
                name: l.name.clone(),
                holder: r.holder_identity.clone(),
                node: node.map(|(n, _)| n.name.clone()),
                holder_node: node.map(|(n, matched_by)| HolderNode::of(n, matched_by)),
                acquire_time: r.acquire_time,
                renew_time: r.renew_time,
                renewed_seconds_ago: r.renew_time.map(|t| now.duration_since(t).as_secs()),
                lease_duration_seconds: r.lease_duration_seconds,
                transitions: r.transitions,
            }
        })
        .collect()
}

#[cfg(test)]
mod multilock_tests;
#[cfg(test)]
mod tests;
