//! `check`: every analyser over one `ClusterState`, with findings that share a cause linked
//! under it — missing snapshot entries on a split, affected cluster are the split's doing.

use jiff::Timestamp;
use serde::Serialize;

use super::admission::webhooks::{analyse_webhooks, link_blocked_writes};
pub(crate) use super::analysers::CheckRun;
use super::analysers::{ANALYSERS, Inputs, snapshots_ran};
use super::cluster_summary::ClusterSummary;
use super::datastore::{DatastoreSize, datastore_sizes};
use super::finding::{Finding, FindingCode};
use super::leases::analyse_leases;
use super::leases::lock_status::LockStatus;
pub(crate) use super::linking::CheckFinding;
use super::linking::{dedupe, link};
use super::rancher::{RancherSummary, analyse_rancher};
use super::snapshots::{EntryState, SnapshotAnalysis, analyse_snapshots};
use super::version_advice::{VersionAdvice, version_advice, version_affected};
use crate::distro::Distro;
use crate::model::cluster_state::ClusterState;

#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SnapshotTotals {
    pub snapshot_files: usize,
    pub configmap_entries: usize,
    pub configmap_bytes: usize,
    pub present: usize,
    pub missing: usize,
    pub stale: usize,
    pub orphaned: usize,
    pub explained: usize,
    /// Of `explained`: missing because k3s pruned the oldest entries at the 1 MiB limit.
    pub pruned_for_size: usize,
    /// Without an entry yet, created less than a minute ago: k3s writes them shortly. Not
    /// counted as missing.
    pub pending: usize,
    /// The ConfigMap was read as a pasted table of entry counts: no row is known present or
    /// missing, and this many at least have no entry (the count short of the snapshots).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub without_entry_at_least: Option<usize>,
}

impl SnapshotTotals {
    /// The entry states `serve` exports (`k3sdoctor_snapshot_entries{state}`), with counts.
    pub(crate) fn by_state(&self) -> [(&'static str, usize); 5] {
        [
            ("missing", self.missing),
            ("orphaned", self.orphaned),
            ("stale", self.stale),
            ("pruned_for_size", self.pruned_for_size),
            // Created less than a minute ago without an entry yet: k3s writes it shortly
            //; a count that stays up is no longer pending but missing.
            ("pending", self.pending),
        ]
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CheckAnalysis {
    pub cluster: ClusterSummary,
    pub locks: Vec<LockStatus>,
    pub snapshots: Option<SnapshotTotals>,
    pub version_advice: Vec<VersionAdvice>,
    pub checks: Vec<CheckRun>,
    pub findings: Vec<CheckFinding>,
    /// Rancher's side, when Rancher manages the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rancher: Option<RancherSummary>,
    /// Each server's datastore size, from its metrics.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub datastore: Vec<DatastoreSize>,
}

impl CheckAnalysis {
    /// Every finding, children included.
    pub(crate) fn all_findings(&self) -> Vec<Finding> {
        self.findings
            .iter()
            .flat_map(|f| std::iter::once(f.finding.clone()).chain(f.children.iter().cloned()))
            .collect()
    }
}

pub(crate) fn analyse_check(state: &ClusterState, distro: Distro, now: Timestamp) -> CheckAnalysis {
    let leases = analyse_leases(state, distro, now);
    let snapshot_analysis =
        (!state.snapshot_crd_missing).then(|| analyse_snapshots(state, distro, now, &leases));
    let inputs = Inputs {
        state,
        distro,
        now,
        leases: &leases,
        snapshots: snapshot_analysis.as_ref(),
    };
    let mut findings = Vec::new();
    let mut checks = Vec::new();
    for analyser in ANALYSERS {
        let analysed = analyser(&inputs);
        findings.extend(analysed.findings);
        checks.extend(analysed.run);
    }
    // Locks not renewed and snapshot records not written under a fail-closed webhook that is
    // down: the webhook is their cause.
    link_blocked_writes(&mut findings, &analyse_webhooks(state, distro).blocked);
    // Rancher's findings hang under the downstream ones that explain them, so they come last.
    let rancher = analyse_rancher(state, distro, now, &findings).map(|r| {
        findings.extend(r.findings);
        let note = (!r.summary.checked).then(|| r.summary.note.clone().unwrap_or_default());
        checks.push(CheckRun::of("rancher", note));
        r.summary
    });
    let snapshots = snapshot_analysis
        .as_ref()
        .filter(|a| snapshots_ran(state, a))
        .map(totals);

    let version_advice = version_advice(state);
    // While split, the lease-split finding already names the upgrade as the lasting fix.
    if !findings.iter().any(|f| f.code == FindingCode::LeaseSplit) {
        findings.extend(version_affected(&version_advice));
    }
    let datastore = datastore_sizes(state, &leases.cluster.datastore, distro);
    CheckAnalysis {
        version_advice,
        datastore,
        cluster: leases.cluster,
        locks: leases.locks,
        snapshots,
        checks,
        findings: link(dedupe(findings)),
        rancher,
    }
}

fn totals(a: &SnapshotAnalysis) -> SnapshotTotals {
    let count = |s: EntryState| a.snapshots.iter().filter(|r| r.state == s).count();
    SnapshotTotals {
        snapshot_files: a.snapshots.len(),
        configmap_entries: a.configmap_entries,
        configmap_bytes: a.configmap_bytes,
        present: count(EntryState::Present),
        missing: count(EntryState::Missing),
        stale: count(EntryState::Stale),
        orphaned: a.orphaned.len(),
        explained: count(EntryState::PrunedForSize) + count(EntryState::NotExpected),
        pruned_for_size: count(EntryState::PrunedForSize),
        pending: count(EntryState::Pending),
        without_entry_at_least: a.entry_count.as_ref().map(|c| c.without_entry_at_least),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::finding::Severity;
    use crate::diagnose::test_cluster::{TestCluster, now};
    use serde_json::json;

    const V: &str = "v1.29.4+k3s1";
    const T0: i64 = 1_717_142_400;

    fn synced(name: &str) -> serde_json::Value {
        json!({"finalizers": ["wrangler.cattle.io/managed-etcd-controller"],
               "annotations": {"etcd.k3s.cattle.io/node-name": format!("{name}-1a2b3c4d")}})
    }

    fn cluster(core: &str, etcd: &str) -> TestCluster {
        TestCluster::k3s()
            .server_with("s1", V, synced("s1"))
            .server_with("s2", V, synced("s2"))
            .server_with("s3", V, synced("s3"))
            .lease("k3s", core, 1)
            .lease("k3s-etcd", etcd, 1)
    }

    #[test]
    fn healthy_cluster() {
        let a = analyse_check(
            &cluster("s1", "s1").snapshot_configmap(&[]).build(),
            Distro::K3s,
            now(),
        );
        // Healthy now, but the version can split again: one warning names the upgrade.
        let codes: Vec<FindingCode> = a.all_findings().iter().map(|f| f.code).collect();
        assert_eq!(codes, [FindingCode::VersionAffected], "{:?}", a.findings);
        assert_eq!(a.findings[0].finding.severity, Severity::Warning);
        assert_eq!(
            a.findings[0].finding.remediation,
            "upgrade to v1.29.6+k3s1 or later"
        );
        assert!(a.checks.iter().all(|c| c.ran));
        assert_eq!(
            a.version_advice[0].upgrade_to.as_deref(),
            Some("v1.29.6+k3s1")
        );
    }

    #[test]
    fn missing_snapshots_hang_under_the_split() {
        let mut cr = crate::diagnose::test_cluster::snapshot_json("s2", T0, true);
        cr["metadata"]["finalizers"] = json!([]);
        let state = cluster("s1", "s2")
            .extra_metadata()
            .snapshot_json(cr)
            .snapshot_configmap(&[])
            .build();
        let a = analyse_check(&state, Distro::K3s, now());
        assert_eq!(a.findings.len(), 1, "{:#?}", a.findings);
        let primary = &a.findings[0];
        assert_eq!(primary.finding.code, FindingCode::LeaseSplit);
        let children: Vec<FindingCode> = primary.children.iter().map(|c| c.code).collect();
        assert_eq!(
            children,
            [
                FindingCode::SnapshotMissingFromConfigmap,
                FindingCode::SnapshotControllerIdle
            ]
        );
        assert_eq!(a.all_findings().len(), 3);
        assert_eq!(a.snapshots.as_ref().unwrap().missing, 1);
    }

    #[test]
    fn a_dump_without_snapshot_files_says_so() {
        let state = cluster("s1", "s1").into_dump().build();
        let mut state = state;
        state.snapshot_files = None;
        let a = analyse_check(&state, Distro::K3s, now());
        let snapshots = a.checks.iter().find(|c| c.name == "snapshots").unwrap();
        assert!(!snapshots.ran);
        assert!(
            a.findings
                .iter()
                .any(|f| f.finding.code == FindingCode::DumpIncomplete)
        );
    }
}
