//! The reports of the snapshot ConfigMap's repairs: `snapshots backfill` (`kind:
//! BackfillResult`) and `snapshots restore` (`kind: RestoreResult`).

use serde::Serialize;

use super::backfill_plan::BackfillPlan;
use super::restore_plan::RestorePlan;
use crate::diagnose::snapshots::SnapshotAnalysis;

/// What `snapshots backfill` planned and did.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BackfillResult {
    pub api_version: &'static str,
    pub kind: &'static str,
    /// `nothing-to-do`, `planned`, `declined`, `written`.
    pub outcome: &'static str,
    pub plan: BackfillPlan,
    pub backup: Option<String>,
    pub resource_version: Option<String>,
    /// The diff after writing.
    pub after: Option<SnapshotAnalysis>,
}

/// `snapshots restore`: what the backup puts back and what happened.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RestoreResult {
    pub api_version: &'static str,
    pub kind: &'static str,
    /// `nothing-to-do`, `planned`, `declined`, `written`.
    pub outcome: &'static str,
    /// The backup file restored from.
    pub from_backup: String,
    pub plan: RestorePlan,
    /// Where the ConfigMap was saved before the restore.
    pub backup: Option<String>,
    pub resource_version: Option<String>,
    /// The diff after writing.
    pub after: Option<SnapshotAnalysis>,
}
