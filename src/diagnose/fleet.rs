//! A fleet: one verdict per cluster of a kubeconfig, ranked worst first, and the one exit
//! code for all of them. Pure: the clusters were read elsewhere, each into its own report.

use std::collections::BTreeSet;

use serde::Serialize;

use super::check::{CheckAnalysis, SnapshotTotals};
use super::cluster_summary::ClusterSummary;
use super::finding::{FailOn, Finding, FindingCode, Severity};
use super::leases::LeaseAnalysis;
use super::leases::lock_status::{LockState, LockStatus};
use crate::exit::Exit;
use crate::input::ReadFailureKind;

/// What a fleet summary needs from one cluster's report (`check` or `leases`).
pub trait FleetMember {
    /// Every finding, linked children included.
    fn findings(&self) -> Vec<Finding>;
    fn cluster(&self) -> &ClusterSummary;
    fn locks(&self) -> &[LockStatus];
    /// `None` when snapshots were not read (`leases`) or could not be (no CRD).
    fn snapshot_totals(&self) -> Option<&SnapshotTotals>;
}

impl FleetMember for CheckAnalysis {
    fn findings(&self) -> Vec<Finding> {
        self.all_findings()
    }
    fn cluster(&self) -> &ClusterSummary {
        &self.cluster
    }
    fn locks(&self) -> &[LockStatus] {
        &self.locks
    }
    fn snapshot_totals(&self) -> Option<&SnapshotTotals> {
        self.snapshots.as_ref()
    }
}

impl FleetMember for LeaseAnalysis {
    fn findings(&self) -> Vec<Finding> {
        self.findings.clone()
    }
    fn cluster(&self) -> &ClusterSummary {
        &self.cluster
    }
    fn locks(&self) -> &[LockStatus] {
        &self.locks
    }
    fn snapshot_totals(&self) -> Option<&SnapshotTotals> {
        None
    }
}

/// How reading one cluster ended (`outcome` in a `FleetReport` entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FleetOutcome {
    Checked,
    Unreachable,
    Forbidden,
    Unauthorized,
    Tls,
    Error,
}

impl From<ReadFailureKind> for FleetOutcome {
    fn from(kind: ReadFailureKind) -> FleetOutcome {
        match kind {
            ReadFailureKind::Unreachable => FleetOutcome::Unreachable,
            ReadFailureKind::Tls => FleetOutcome::Tls,
            ReadFailureKind::Unauthorized => FleetOutcome::Unauthorized,
            ReadFailureKind::Forbidden => FleetOutcome::Forbidden,
            ReadFailureKind::Other => FleetOutcome::Error,
        }
    }
}

/// One cluster of the fleet: its report when it was read, the error when it was not.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FleetEntry<R> {
    pub context: String,
    /// The API server URL from the kubeconfig (empty when the context names no cluster).
    pub server: String,
    pub outcome: FleetOutcome,
    /// The one-line error, naming what failed and what to do, when not `checked`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// For a 403: the request that was refused (`list nodes`), i.e. the missing permission.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused_request: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<R>,
}

impl<R: FleetMember> FleetEntry<R> {
    pub fn checked(context: String, server: String, report: R) -> FleetEntry<R> {
        FleetEntry {
            context,
            server,
            outcome: FleetOutcome::Checked,
            error: None,
            refused_request: None,
            report: Some(report),
        }
    }

    pub fn unreadable(
        context: String,
        server: String,
        error: &crate::input::ReadError,
    ) -> FleetEntry<R> {
        let outcome = FleetOutcome::from(error.kind);
        FleetEntry {
            context,
            server,
            outcome,
            error: Some(error.message.clone()),
            refused_request: error
                .action
                .clone()
                .filter(|_| outcome == FleetOutcome::Forbidden),
            report: None,
        }
    }

    /// The severity this cluster counts as: its worst finding; a cluster that could not be
    /// read is an error, or a warning under `--ignore-unreachable`. `None`: healthy.
    pub fn severity(&self, ignore_unreachable: bool) -> Option<Severity> {
        match &self.report {
            Some(report) => report
                .findings()
                .iter()
                .filter(|f| !f.ignored)
                .map(|f| f.severity)
                .max(),
            None if ignore_unreachable => Some(Severity::Warning),
            None => Some(Severity::Error),
        }
    }
}

/// Worst first: clusters that could not be read (unless ignored), then by worst finding;
/// ties by context name, so the order is the same on every run.
pub fn sort_worst_first<R: FleetMember>(entries: &mut [FleetEntry<R>], ignore_unreachable: bool) {
    entries.sort_by_cached_key(|e| {
        let unread = e.report.is_none() && !ignore_unreachable;
        (
            std::cmp::Reverse(unread),
            std::cmp::Reverse(e.severity(ignore_unreachable)),
            e.context.clone(),
        )
    });
}

/// design.md §3 for a fleet: 3 if any cluster could not be read (unless
/// `--ignore-unreachable`, which makes it a warning), else 1 if any cluster has a finding at
/// or above `--fail-on`, else 0.
pub fn fleet_exit<R: FleetMember>(
    entries: &[FleetEntry<R>],
    fail_on: FailOn,
    ignore_unreachable: bool,
) -> Exit {
    if !ignore_unreachable && entries.iter().any(|e| e.report.is_none()) {
        return Exit::ReadFailed;
    }
    let threshold = match fail_on {
        FailOn::Error => Severity::Error,
        FailOn::Warning => Severity::Warning,
        FailOn::Never => return Exit::Healthy,
    };
    if entries
        .iter()
        .any(|e| e.severity(ignore_unreachable) >= Some(threshold))
    {
        Exit::Findings
    } else {
        Exit::Healthy
    }
}

/// Counts over the whole fleet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FleetSummary {
    pub clusters: usize,
    pub checked: usize,
    pub unreadable: usize,
    /// Clusters whose worst finding is an error (warning, info).
    pub with_errors: usize,
    pub with_warnings: usize,
    pub with_infos: usize,
    pub healthy: usize,
}

impl FleetSummary {
    pub fn of<R: FleetMember>(entries: &[FleetEntry<R>]) -> FleetSummary {
        let mut s = FleetSummary {
            clusters: entries.len(),
            ..FleetSummary::default()
        };
        for e in entries {
            if e.report.is_none() {
                s.unreadable += 1;
                continue;
            }
            s.checked += 1;
            match e.severity(false) {
                Some(Severity::Error) => s.with_errors += 1,
                Some(Severity::Warning) => s.with_warnings += 1,
                Some(Severity::Info) => s.with_infos += 1,
                None => s.healthy += 1,
            }
        }
        s
    }
}

/// One row of the human summary table, already in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetRow {
    pub context: String,
    pub server: String,
    /// The oldest server version, `+N` when more versions run (an upgrade under way).
    pub version: String,
    /// The one holder of every lock, `split`, `released`, `missing` or `-`.
    pub locks: String,
    /// The severity of the split, to colour `split` with.
    pub split_severity: Option<Severity>,
    /// Snapshot entries missing/stale/orphaned in the ConfigMap (`2/0/1`); `-` when not read.
    pub drift: String,
    /// Etcd members Ready/total; `-` without managed etcd.
    pub etcd: String,
    /// The worst severity, `ok`, or why the cluster could not be read.
    pub status: String,
    pub severity: Option<Severity>,
}

pub fn summary_row<R: FleetMember>(entry: &FleetEntry<R>, ignore_unreachable: bool) -> FleetRow {
    let severity = entry.severity(ignore_unreachable);
    let Some(report) = &entry.report else {
        return FleetRow {
            context: entry.context.clone(),
            server: entry.server.clone(),
            version: "-".into(),
            locks: "-".into(),
            split_severity: None,
            drift: "-".into(),
            etcd: "-".into(),
            status: unreadable_reason(entry),
            severity,
        };
    };
    let cluster = report.cluster();
    let servers = cluster.server_versions();
    let version = match servers.as_slice() {
        [] => cluster.distro.prog().to_string(),
        [only] => only.version.clone(),
        [oldest, rest @ ..] => format!("{} +{}", oldest.version, rest.len()),
    };
    let split_severity = report
        .findings()
        .iter()
        .filter(|f| f.code == FindingCode::LeaseSplit)
        .map(|f| f.severity)
        .max();
    FleetRow {
        context: entry.context.clone(),
        server: entry.server.clone(),
        version,
        locks: lock_holders(report.locks()),
        split_severity,
        drift: report
            .snapshot_totals()
            .map(|t| format!("{}/{}/{}", t.missing, t.stale, t.orphaned))
            .unwrap_or_else(|| "-".into()),
        etcd: if cluster.nodes_known && cluster.etcd_members > 0 {
            format!("{}/{}", cluster.etcd_members_ready, cluster.etcd_members)
        } else {
            "-".into()
        },
        status: severity.map_or("ok", Severity::as_str).into(),
        severity,
    }
}

fn lock_holders(locks: &[LockStatus]) -> String {
    let applicable: Vec<&LockStatus> = locks
        .iter()
        .filter(|l| !matches!(l.state, LockState::NotApplicable | LockState::Unknown))
        .collect();
    let holders: BTreeSet<&str> = applicable
        .iter()
        .filter_map(|l| l.settled_holder())
        .collect();
    let any = |state: LockState| applicable.iter().any(|l| l.state == state);
    match holders.len() {
        0 if any(LockState::Released) => "released".into(),
        0 if any(LockState::Missing) => "missing".into(),
        0 => "-".into(),
        1 => holders.into_iter().next().unwrap_or_default().to_string(),
        _ => "split".into(),
    }
}

/// A word or two for the STATUS column; the entry's error says the rest.
fn unreadable_reason<R>(entry: &FleetEntry<R>) -> String {
    match entry.outcome {
        FleetOutcome::Unreachable => "unreachable".into(),
        FleetOutcome::Tls => "TLS".into(),
        FleetOutcome::Unauthorized => "401".into(),
        // The verb and resource are the missing permission; the namespace (always
        // kube-system or none) would push the row past 80 columns.
        FleetOutcome::Forbidden => match &entry.refused_request {
            Some(request) => format!("403 {}", request.split(" in ").next().unwrap_or(request)),
            None => "403".into(),
        },
        FleetOutcome::Error | FleetOutcome::Checked => "error".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::check::analyse_check;
    use crate::diagnose::test_cluster::{TestCluster, now};
    use crate::distro::Distro;
    use crate::input::ReadError;

    const AFFECTED: &str = "v1.29.4+k3s1";
    const FIXED: &str = "v1.29.6+k3s1";

    /// A server as the etcd member controller leaves it, so that only the locks matter.
    fn synced(name: &str) -> serde_json::Value {
        serde_json::json!({"finalizers": ["wrangler.cattle.io/managed-etcd-controller"],
               "annotations": {"etcd.k3s.cattle.io/node-name": format!("{name}-1a2b3c4d")}})
    }

    fn checked(context: &str, version: &str, core: &str, etcd: &str) -> FleetEntry<CheckAnalysis> {
        let state = TestCluster::k3s()
            .server_with("s1", version, synced("s1"))
            .server_with("s2", version, synced("s2"))
            .lease("k3s", core, 1)
            .lease("k3s-etcd", etcd, 1)
            .snapshot_configmap(&[])
            .build();
        FleetEntry::checked(
            context.into(),
            format!("https://{context}:6443"),
            analyse_check(&state, Distro::K3s, now()),
        )
    }

    fn unreadable(context: &str, kind: ReadFailureKind) -> FleetEntry<CheckAnalysis> {
        let mut error = ReadError::new(format!("cannot list nodes at {context}"));
        error.kind = kind;
        error.action = Some("list leases in kube-system".into());
        FleetEntry::unreadable(context.into(), String::new(), &error)
    }

    #[test]
    fn worst_first_unreadable_then_errors_then_warnings_then_healthy() {
        let mut entries = vec![
            checked("b-healthy", FIXED, "s1", "s1"),
            checked("a-split", AFFECTED, "s1", "s2"),
            unreadable("z-down", ReadFailureKind::Unreachable),
            checked("c-affected", AFFECTED, "s1", "s1"),
        ];
        sort_worst_first(&mut entries, false);
        let order: Vec<&str> = entries.iter().map(|e| e.context.as_str()).collect();
        assert_eq!(order, ["z-down", "a-split", "c-affected", "b-healthy"]);
        // Ignored, an unreadable cluster ranks as a warning, before healthy ones by name.
        sort_worst_first(&mut entries, true);
        let order: Vec<&str> = entries.iter().map(|e| e.context.as_str()).collect();
        assert_eq!(order, ["a-split", "c-affected", "z-down", "b-healthy"]);
    }

    #[test]
    fn the_exit_rule_puts_unreadable_before_findings() {
        let healthy = checked("h", FIXED, "s1", "s1");
        let split = checked("s", AFFECTED, "s1", "s2");
        let down = unreadable("d", ReadFailureKind::Unreachable);
        let exit = |entries: &[FleetEntry<CheckAnalysis>], fail_on, ignore| {
            fleet_exit(entries, fail_on, ignore)
        };
        assert_eq!(
            exit(std::slice::from_ref(&healthy), FailOn::Error, false),
            Exit::Healthy
        );
        assert_eq!(
            exit(&[healthy.clone(), split.clone()], FailOn::Error, false),
            Exit::Findings
        );
        assert_eq!(
            exit(&[split.clone(), down.clone()], FailOn::Error, false),
            Exit::ReadFailed
        );
        assert_eq!(
            exit(&[split.clone(), down.clone()], FailOn::Never, false),
            Exit::ReadFailed
        );
        // Ignored, an unreadable cluster is a warning: it fails --fail-on warning only.
        assert_eq!(
            exit(&[healthy.clone(), down.clone()], FailOn::Error, true),
            Exit::Healthy
        );
        assert_eq!(
            exit(&[healthy.clone(), down.clone()], FailOn::Warning, true),
            Exit::Findings
        );
        assert_eq!(exit(&[split, down], FailOn::Error, true), Exit::Findings);
    }

    #[test]
    fn rows_say_split_drift_etcd_and_status_in_words() {
        let row = summary_row(&checked("a", AFFECTED, "s1", "s2"), false);
        assert_eq!(
            (row.version.as_str(), row.locks.as_str(), row.drift.as_str()),
            (AFFECTED, "split", "0/0/0")
        );
        assert_eq!(row.split_severity, Some(Severity::Error));
        assert_eq!((row.etcd.as_str(), row.status.as_str()), ("2/2", "error"));
        let row = summary_row(&checked("b", FIXED, "s2", "s2"), false);
        assert_eq!((row.locks.as_str(), row.status.as_str()), ("s2", "ok"));
        assert_eq!(row.split_severity, None);
    }

    #[test]
    fn unreadable_rows_give_a_short_reason_and_a_403_names_the_request() {
        let reason = |kind| summary_row(&unreadable("x", kind), false).status;
        assert_eq!(reason(ReadFailureKind::Unreachable), "unreachable");
        assert_eq!(reason(ReadFailureKind::Tls), "TLS");
        assert_eq!(reason(ReadFailureKind::Unauthorized), "401");
        assert_eq!(reason(ReadFailureKind::Forbidden), "403 list leases");
        assert_eq!(reason(ReadFailureKind::Other), "error");
        let entry = unreadable("x", ReadFailureKind::Unauthorized);
        assert_eq!(entry.outcome, FleetOutcome::Unauthorized);
        assert_eq!(entry.refused_request, None);
        assert_eq!(entry.error.as_deref(), Some("cannot list nodes at x"));
    }

    #[test]
    fn the_summary_counts_clusters_by_their_worst_finding() {
        let entries = [
            checked("a", AFFECTED, "s1", "s2"),
            checked("b", FIXED, "s1", "s1"),
            checked("c", AFFECTED, "s1", "s1"),
            unreadable("d", ReadFailureKind::Forbidden),
        ];
        assert_eq!(
            FleetSummary::of(&entries),
            FleetSummary {
                clusters: 4,
                checked: 3,
                unreadable: 1,
                with_errors: 1,
                with_warnings: 1,
                with_infos: 0,
                healthy: 1,
            }
        );
    }
}
