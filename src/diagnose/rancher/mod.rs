//! Rancher's snapshot records against the downstream snapshots, by Rancher's version and the
//! lifecycle rules of rancher/rancher's `snapshotbackpopulate`: what Rancher's UI shows and why.

mod current_records;
mod legacy_records;
mod machine_plans;
mod missing_cause;
mod record_drift;
mod restore_options;
use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use super::finding::{Finding, FindingCode, Severity};
use crate::distro::Distro;
use crate::model::cluster_state::ClusterState;
use crate::model::rancher::rancher_version::RecordScheme;
use crate::model::rancher::snapshot_record::SnapshotRecord;
use crate::model::rancher::view::{RancherState, RancherView};

/// 2.11+ records a snapshot when its ETCDSnapshotFile changes; a minute is plenty, five allow
/// for a busy Rancher.
const RECORD_GRACE: SignedDuration = SignedDuration::from_secs(5 * 60);
/// ≤ 2.10 lists each node's snapshots every 600 s.
const LEGACY_RECORD_GRACE: SignedDuration = SignedDuration::from_secs(15 * 60);

/// What `check` says about Rancher's side, beside its findings.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RancherSummary {
    pub checked: bool,
    /// Why not, or what limited the comparison.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The management cluster id (`c-m-…`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_id: Option<String>,
    /// The provisioning Cluster, `namespace/name`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provisioning_cluster: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub records: Option<usize>,
    /// Downstream snapshots with a record that matches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded: Option<usize>,
    /// Downstream snapshots younger than the grace period without a record yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<usize>,
}

/// Rancher's findings and summary for one downstream cluster.
pub(crate) struct RancherAnalysis {
    pub summary: RancherSummary,
    pub findings: Vec<Finding>,
}

/// What the comparisons share.
pub(crate) struct Compare<'a> {
    pub down: &'a ClusterState,
    pub distro: Distro,
    pub now: Timestamp,
    pub rancher: &'a RancherState,
    /// The downstream findings, for the causes Rancher's findings hang under.
    pub downstream: &'a [Finding],
}

impl Compare<'_> {
    /// Rancher's records of this cluster that are not being deleted.
    pub(crate) fn live_records(&self) -> Vec<&SnapshotRecord> {
        self.rancher
            .records
            .iter()
            .flatten()
            .filter(|r| !r.deleting)
            .collect()
    }
}

/// Counts a comparison reports back.
#[derive(Default)]
pub(crate) struct Tally {
    pub recorded: usize,
    pub pending: usize,
}

/// `None` when Rancher is not involved (no proxy URL, no `--rancher-*` flag).
pub(crate) fn analyse_rancher(
    down: &ClusterState,
    distro: Distro,
    now: Timestamp,
    downstream: &[Finding],
) -> Option<RancherAnalysis> {
    let mut analysis = analyse_records(down, distro, now, downstream)?;
    if let Some(RancherView::Read(rancher)) = &down.rancher {
        // The machines' plans stand apart from the records: judged whatever those allow.
        analysis
            .findings
            .extend(machine_plans::analyse(rancher, now));
        if rancher.machine_plans.is_none()
            && rancher.machines.as_ref().is_some_and(|m| !m.is_empty())
        {
            let note = &mut analysis.summary.note;
            *note = Some(match note.take() {
                Some(said) => format!("{said}; {}", machine_plans::PLANS_NOT_READ),
                None => machine_plans::PLANS_NOT_READ.to_string(),
            });
        }
    }
    Some(analysis)
}

/// Rancher's snapshot records against the downstream snapshots.
fn analyse_records(
    down: &ClusterState,
    distro: Distro,
    now: Timestamp,
    downstream: &[Finding],
) -> Option<RancherAnalysis> {
    let rancher = match down.rancher.as_ref()? {
        RancherView::NotChecked { reason } => {
            return Some(RancherAnalysis {
                summary: not_checked(reason.clone()),
                findings: Vec::new(),
            });
        }
        RancherView::Read(state) => state,
    };
    let mut summary = RancherSummary {
        checked: true,
        note: None,
        source: Some(rancher.source.clone()),
        version: rancher.version.as_ref().map(|v| v.text.clone()),
        cluster_id: rancher.provisioning.cluster_id.clone(),
        provisioning_cluster: Some(rancher.provisioning.reference()),
        records: rancher.records.as_ref().map(Vec::len),
        recorded: None,
        pending: None,
    };
    let version = rancher.version.as_ref();
    let scheme = version
        .map(|v| v.scheme())
        .unwrap_or(RecordScheme::SnapshotFiles);
    let feature_off = rancher.backpopulate == Some(false) && scheme >= RecordScheme::SnapshotFiles;
    // With the Feature off Rancher writes no records, so a dump (or a list) without them is
    // what that Feature leads to, and the Feature alone is the finding.
    if feature_off && rancher.records.is_none() && !imported_before_records(rancher) {
        summary.note = Some(
            "Rancher keeps no snapshot records while the Feature v2prov-etcd-snapshot-backpopulate \
             is disabled, and none were read"
                .into(),
        );
        return Some(RancherAnalysis {
            summary,
            findings: vec![backpopulate_off(rancher)],
        });
    }
    if let Some(reason) = unjudgeable(down, rancher) {
        summary.checked = false;
        summary.note = Some(reason);
        return Some(RancherAnalysis {
            summary,
            findings: Vec::new(),
        });
    }
    let compare = Compare {
        down,
        distro,
        now,
        rancher,
        downstream,
    };
    let mut findings = Vec::new();
    let mut tally = Tally::default();
    if feature_off {
        findings.push(backpopulate_off(rancher));
    }
    match scheme {
        RecordScheme::ConfigMap => legacy_records::compare(&compare, &mut findings, &mut tally),
        _ => current_records::compare(&compare, &mut findings, &mut tally),
    }
    findings.extend(restore_options::analyse(&compare));
    summary.recorded = Some(tally.recorded);
    summary.pending = Some(tally.pending);
    summary.note = rancher.version_note.clone();
    Some(RancherAnalysis { summary, findings })
}

fn not_checked(reason: String) -> RancherSummary {
    RancherSummary {
        checked: false,
        note: Some(reason),
        source: None,
        version: None,
        cluster_id: None,
        provisioning_cluster: None,
        records: None,
        recorded: None,
        pending: None,
    }
}

/// Why the two sides cannot be compared, when they cannot.
fn unjudgeable(down: &ClusterState, rancher: &RancherState) -> Option<String> {
    if rancher.records.is_none() {
        // The gap already names what was not read and how to add it.
        return Some(
            rancher
                .gaps
                .first()
                .cloned()
                .unwrap_or_else(|| "Rancher's snapshot records were not read".into()),
        );
    }
    if imported_before_records(rancher) {
        return Some(format!(
            "{} is an imported cluster: Rancher {} keeps no snapshot records for imported \
             clusters (from v2.15.0 on it does), so there is nothing to compare",
            rancher.provisioning.reference(),
            rancher
                .version
                .as_ref()
                .map_or("before 2.15", |v| v.text.as_str())
        ));
    }
    if down.snapshot_files.is_none() && down.configmaps.is_none() {
        return Some("the downstream snapshots were not read".into());
    }
    None
}

/// An imported cluster on a Rancher before 2.15, which keeps no records for it.
fn imported_before_records(rancher: &RancherState) -> bool {
    rancher.provisioning.imported
        && rancher
            .version
            .as_ref()
            .is_some_and(|v| !v.records_imported_clusters())
}

fn backpopulate_off(rancher: &RancherState) -> Finding {
    Finding::new(
        Severity::Error,
        FindingCode::RancherBackpopulateOff,
        "Feature v2prov-etcd-snapshot-backpopulate",
        "Rancher's Feature v2prov-etcd-snapshot-backpopulate is disabled, so Rancher makes no \
         snapshot records at all: its UI lists no new snapshot and offers none to restore",
    )
    .fix(rancher.kubectl(
        "patch features.management.cattle.io v2prov-etcd-snapshot-backpopulate --type merge \
         -p '{\"spec\":{\"value\":true}}' (or enable it under Global Settings > Feature Flags)",
    ))
}

/// Whether `created` is older than `grace` at `now` (an unknown time counts as old).
pub(crate) fn past_grace(
    created: Option<Timestamp>,
    now: Timestamp,
    grace: SignedDuration,
) -> bool {
    created.is_none_or(|t| now.duration_since(t) >= grace)
}

/// "1 record", "2 records": diagnose words its messages itself (render sits above it).
pub(crate) fn counted(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// `one` or `many` as `n` asks: "1 record differs", "2 records differ".
pub(crate) fn agree(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

/// The downstream finding of `code`, when the downstream analysis raised one.
pub(crate) fn downstream_has(compare: &Compare, code: FindingCode) -> bool {
    compare.downstream.iter().any(|f| f.code == code)
}
