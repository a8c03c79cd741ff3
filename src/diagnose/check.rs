//! `check`: every analyser over one `ClusterState`, with findings that share a cause linked
//! under it — missing snapshot entries on a split, affected cluster are the split's doing.

use jiff::Timestamp;
use serde::Serialize;

use super::cluster_summary::ClusterSummary;
use super::control_plane::apiserver_endpoints::{self, analyse_apiserver_endpoints};
use super::control_plane::etcd_config_drift::analyse_etcd_config_drift;
use super::control_plane::membership::analyse_membership;
use super::control_plane::node_args_secrets::analyse_node_args_secrets;
use super::finding::{Finding, FindingCode};
use super::leases::analyse_leases;
use super::leases::lock_status::{self, LockState, LockStatus};
use super::snapshots::snapshot_reconcile_stalled::analyse_reconcile_stalled;
use super::snapshots::snapshot_s3::analyse_s3_snapshots;
use super::snapshots::{EntryState, SnapshotAnalysis, analyse_snapshots};
use super::version_advice::{VersionAdvice, version_advice, version_affected};
use crate::distro::Distro;
use crate::input::ClusterState;

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckFinding {
    #[serde(flatten)]
    pub finding: Finding,
    /// Findings this one causes; fixing it fixes them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<Finding>,
}

/// Whether an analyser ran, and why not.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckRun {
    pub name: &'static str,
    pub ran: bool,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub note: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotTotals {
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

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckAnalysis {
    pub cluster: ClusterSummary,
    pub locks: Vec<LockStatus>,
    pub snapshots: Option<SnapshotTotals>,
    pub version_advice: Vec<VersionAdvice>,
    pub checks: Vec<CheckRun>,
    pub findings: Vec<CheckFinding>,
}

impl CheckAnalysis {
    /// Every finding, children included.
    pub fn into_all_findings(self) -> Vec<Finding> {
        self.findings
            .into_iter()
            .flat_map(|f| std::iter::once(f.finding).chain(f.children))
            .collect()
    }

    /// Every finding, children included.
    pub fn all_findings(&self) -> Vec<Finding> {
        self.findings
            .iter()
            .flat_map(|f| std::iter::once(f.finding.clone()).chain(f.children.iter().cloned()))
            .collect()
    }
}

pub fn analyse_check(state: &ClusterState, distro: Distro, now: Timestamp) -> CheckAnalysis {
    analyse_check_keeping_snapshots(state, distro, now).0
}

/// [`analyse_check`], and the ConfigMap comparison it made on the way (`None` when it made
/// none), for `snapshots list|diff`: with one row per ETCDSnapshotFile, a second comparison
/// would be a second copy of the largest thing k3sdoctor holds (issue 24).
pub fn analyse_check_keeping_snapshots(
    state: &ClusterState,
    distro: Distro,
    now: Timestamp,
) -> (CheckAnalysis, Option<SnapshotAnalysis>) {
    let leases = analyse_leases(state, distro, now);
    let mut findings = leases.findings.clone();
    let mut checks = vec![CheckRun {
        name: "leases",
        ran: true,
        note: String::new(),
    }];
    // A lock absent from an input that cannot show it, on an unknown version (issue 29, item 10).
    let unjudged: Vec<&str> = leases
        .locks
        .iter()
        .filter(|l| l.state == LockState::Unknown)
        .map(|l| l.name.as_str())
        .collect();
    if let Some(why) = lock_status::unjudgeable(state, leases.cluster.lock_style)
        && !unjudged.is_empty()
    {
        checks.push(CheckRun {
            name: "lock-presence",
            ran: false,
            note: format!(
                "{} not found, which cannot be judged: {why}",
                unjudged.join(" and ")
            ),
        });
    }

    let mut snapshot_analysis = None;
    let snapshots = if state.snapshot_crd_missing {
        checks.push(CheckRun {
            name: "snapshots",
            ran: false,
            note: "the ETCDSnapshotFile CRD is not installed (releases before Oct 2023)".into(),
        });
        None
    } else {
        let analysis = analyse_snapshots(state, distro, now, &leases);
        // A pasted ConfigMap table that shows the snapshot ConfigMap (or its absence) counts.
        let listed = state.configmap_listing.as_ref().is_some_and(|l| {
            l.shows(&analysis.configmap) != crate::model::configmap_listing::Listed::NotShown
        });
        let ran = state.snapshot_files.is_some() && (state.configmaps.is_some() || listed);
        checks.push(CheckRun {
            name: "snapshots",
            ran,
            note: if ran {
                String::new()
            } else {
                "not in dump".into()
            },
        });
        findings.extend(analysis.findings.clone());
        let totals = ran.then(|| totals(&analysis));
        snapshot_analysis = Some(analysis);
        totals
    };

    let membership = analyse_membership(state, distro, now);
    checks.push(CheckRun {
        name: "membership",
        ran: state.nodes.is_some(),
        note: if state.nodes.is_some() {
            String::new()
        } else {
            "not in dump".into()
        },
    });
    findings.extend(membership);
    findings.extend(etcd_config(state, distro, &mut checks));
    findings.extend(snapshot_schedule(state, distro, now, &mut checks));

    let missing = super::snapshots::snapshot_files::missing_input(state);
    checks.push(CheckRun {
        name: "snapshot-files",
        ran: missing.is_none(),
        note: missing.unwrap_or_default().to_string(),
    });
    findings.extend(super::snapshots::snapshot_files::analyse_snapshot_files(
        state, distro, now, &leases,
    ));

    let endpoints_note = apiserver_endpoints::not_checked(state);
    checks.push(CheckRun {
        name: "apiserver-endpoints",
        ran: endpoints_note.is_none(),
        note: endpoints_note.unwrap_or_default(),
    });
    findings.extend(analyse_apiserver_endpoints(state, distro, now));

    let version_advice = version_advice(state);
    // While split, the lease-split finding already names the upgrade as the lasting fix.
    if !findings.iter().any(|f| f.code == FindingCode::LeaseSplit) {
        findings.extend(version_affected(&version_advice));
    }
    let check = CheckAnalysis {
        version_advice,
        cluster: leases.cluster,
        locks: leases.locks,
        snapshots,
        checks,
        findings: link(dedupe(findings)),
    };
    (check, snapshot_analysis)
}

/// The servers' flags as node-args shows them: secrets in the annotation, drift between
/// etcd servers. Needs only Nodes.
fn etcd_config(state: &ClusterState, distro: Distro, checks: &mut Vec<CheckRun>) -> Vec<Finding> {
    let ran = state.nodes.is_some();
    checks.push(CheckRun {
        name: "etcd-config",
        ran,
        note: if ran {
            String::new()
        } else {
            "Nodes not read".into()
        },
    });
    if !ran {
        return Vec::new();
    }
    let mut findings = analyse_node_args_secrets(state, distro);
    findings.extend(analyse_etcd_config_drift(state, distro));
    findings
}

/// Whether each etcd server keeps its snapshots' bookkeeping and S3 as its flags promise.
/// Needs Nodes and ETCDSnapshotFiles.
fn snapshot_schedule(
    state: &ClusterState,
    distro: Distro,
    now: Timestamp,
    checks: &mut Vec<CheckRun>,
) -> Vec<Finding> {
    let note = if state.snapshot_crd_missing {
        "the ETCDSnapshotFile CRD is not installed (releases before Oct 2023)"
    } else if state.nodes.is_none() {
        "Nodes not read"
    } else if state.snapshot_files.is_none() {
        "ETCDSnapshotFiles not read"
    } else {
        ""
    };
    checks.push(CheckRun {
        name: "snapshot-schedule",
        ran: note.is_empty(),
        note: note.into(),
    });
    if !note.is_empty() {
        return Vec::new();
    }
    let mut findings = analyse_reconcile_stalled(state, distro, now);
    findings.extend(analyse_s3_snapshots(state, distro, now));
    findings
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

/// Two analysers may both notice a gap in a dump; say it once.
fn dedupe(findings: Vec<Finding>) -> Vec<Finding> {
    // Decided on borrowed messages: one can list 50,000 snapshots.
    let mut seen = std::collections::BTreeSet::new();
    let first: Vec<bool> = findings
        .iter()
        .map(|f| seen.insert((f.code.as_str(), f.message.as_str())))
        .collect();
    findings
        .into_iter()
        .zip(first)
        .filter_map(|(f, first)| first.then_some(f))
        .collect()
}

/// Findings whose analyser named their cause hang under that cause when it is among the
/// findings (missing snapshot entries under the lease split that stopped the controller);
/// everything else stands alone. Ranked by severity.
fn link(findings: Vec<Finding>) -> Vec<CheckFinding> {
    let present: Vec<FindingCode> = findings.iter().map(|f| f.code).collect();
    let (children, primaries): (Vec<Finding>, Vec<Finding>) = findings
        .into_iter()
        .partition(|f| f.caused_by.is_some_and(|cause| present.contains(&cause)));
    let mut linked: Vec<CheckFinding> = primaries
        .into_iter()
        .map(|f| CheckFinding {
            children: children
                .iter()
                .filter(|c| c.caused_by == Some(f.code))
                .cloned()
                .collect(),
            finding: f,
        })
        .collect();
    linked.sort_by_key(|f| std::cmp::Reverse(f.finding.severity));
    linked
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
