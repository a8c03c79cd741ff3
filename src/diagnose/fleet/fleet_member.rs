//! What a fleet needs from one cluster's report, and the two reports that give it.

use crate::diagnose::check::{CheckAnalysis, SnapshotTotals};
use crate::diagnose::cluster_summary::ClusterSummary;
use crate::diagnose::finding::Finding;
use crate::diagnose::leases::LeaseAnalysis;
use crate::diagnose::leases::lock_status::LockStatus;

/// What a fleet summary needs from one cluster's report (`check` or `leases`).
pub(crate) trait FleetMember {
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
