//! The documented output envelope (`apiVersion: k3sdoctor.io/v1`). Field names never change
//! within v1; new fields may be added.

use jiff::Timestamp;
use serde::Serialize;

use crate::diagnose::check::CheckAnalysis;
use crate::diagnose::finding::{FailOn, Finding, Severity};
use crate::diagnose::leases::LeaseAnalysis;
use crate::diagnose::snapshots::{EntryState, SnapshotAnalysis};
use crate::model::bundle_provenance::BundleSource;

pub(crate) const API_VERSION: &str = "k3sdoctor.io/v1";

/// Which `now` freshness was judged against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum NowSource {
    /// `--now`.
    Flag,
    LocalClock,
    /// The API server's `Date` header: independent of this machine's clock.
    ApiServerClock,
    /// The newest server-written timestamp in a dump (lock renewals, creation and managedFields
    /// times; never kubelet heartbeats): close to when it was taken.
    NewestInDump,
    /// When the support bundle was collected, as the collector recorded it (its folder name).
    BundleCollectionTime,
}

impl NowSource {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            NowSource::Flag => "from --now",
            NowSource::LocalClock => "local clock",
            NowSource::ApiServerClock => "API server clock",
            NowSource::NewestInDump => {
                "newest server-written timestamp in the dump; override with --now"
            }
            NowSource::BundleCollectionTime => {
                "when the support bundle was collected; override with --now"
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub(crate) struct Now {
    pub time: Timestamp,
    pub source: NowSource,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub(crate) struct Summary {
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    /// Findings matched by `--ignore` or the config file: not in the counts above.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ignored: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Summary {
    pub(crate) fn of(findings: &[Finding]) -> Summary {
        let count = |s: Severity| {
            findings
                .iter()
                .filter(|f| !f.ignored && f.severity == s)
                .count()
        };
        Summary {
            ignored: findings.iter().filter(|f| f.ignored).count(),
            errors: count(Severity::Error),
            warnings: count(Severity::Warning),
            infos: count(Severity::Info),
        }
    }
}

/// The fields every report of one cluster shares, around its analysis: the `kind`, the `now`
/// it was judged at, the bundles it was read from, the summary counts; and its two builders.
/// A macro, not a generic struct, so each kind keeps its own schema name and field docs.
macro_rules! report_envelope {
    (
        $(#[$doc:meta])*
        $name:ident($analysis:ty) {
            $(#[$summary_doc:meta])*
            summary,
        }
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
        #[serde(rename_all = "camelCase")]
        pub(crate) struct $name {
            pub api_version: &'static str,
            pub kind: &'static str,
            pub now: Now,
            /// The support bundles the report was made from (`--from-file`): collector, collection
            /// time, the files each check was fed from and what was not collected. Absent otherwise.
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub read_from: Vec<BundleSource>,
            #[serde(flatten)]
            pub analysis: $analysis,
            $(#[$summary_doc])*
            pub summary: Summary,
            /// The threshold the exit code was judged on, so the summary line can say when
            /// findings do not count.
            #[serde(skip)]
            pub fail_on: FailOn,
        }

        impl $name {
            fn enveloped(kind: &'static str, now: Now, analysis: $analysis, summary: Summary) -> Self {
                $name {
                    api_version: API_VERSION,
                    kind,
                    now,
                    read_from: Vec::new(),
                    analysis,
                    summary,
                    fail_on: FailOn::Error,
                }
            }

            pub(crate) fn failing_on(self, fail_on: FailOn) -> Self {
                Self { fail_on, ..self }
            }

            pub(crate) fn reading(self, read_from: &[BundleSource]) -> Self {
                Self {
                    read_from: read_from.to_vec(),
                    ..self
                }
            }
        }
    };
}

report_envelope! {
    LeaseReport(LeaseAnalysis) {
        summary,
    }
}

impl LeaseReport {
    pub(crate) fn new(now: Now, analysis: LeaseAnalysis) -> LeaseReport {
        let summary = Summary::of(&analysis.findings);
        LeaseReport::enveloped("LeaseReport", now, analysis, summary)
    }
}

report_envelope! {
    /// `snapshots list` (`kind: SnapshotList`) and `snapshots diff` (`kind: SnapshotDiff`).
    SnapshotReport(SnapshotAnalysis) {
        summary,
    }
}

impl SnapshotReport {
    pub(crate) fn new(kind: &'static str, now: Now, analysis: SnapshotAnalysis) -> SnapshotReport {
        let summary = Summary::of(&analysis.findings);
        SnapshotReport::enveloped(kind, now, analysis, summary)
    }

    /// A `SnapshotDiff` for programs: only the snapshots whose entry differs from what k3s
    /// would write (missing, stale, pruned) or is still to come (pending), beside the orphaned
    /// entries; `SnapshotList` is the one that lists every snapshot.
    pub(crate) fn only_differences(mut self) -> Self {
        self.analysis.snapshots.retain(|r| {
            r.state.is_difference()
                || matches!(r.state, EntryState::PrunedForSize | EntryState::Pending)
        });
        self
    }
}

report_envelope! {
    /// `check`: every analyser, findings linked to their cause.
    CheckReport(CheckAnalysis) {
        /// Counts over every finding, linked children included.
        summary,
    }
}

impl CheckReport {
    pub(crate) fn new(now: Now, analysis: CheckAnalysis) -> CheckReport {
        let summary = Summary::of(&analysis.all_findings());
        CheckReport::enveloped("CheckReport", now, analysis, summary)
    }
}

/// `check` or `leases` over several clusters: one entry per context, worst first.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FleetReport<R> {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub summary: crate::diagnose::fleet::FleetSummary,
    pub entries: Vec<crate::diagnose::fleet::FleetEntry<R>>,
    #[serde(skip)]
    pub fail_on: FailOn,
    #[serde(skip)]
    pub ignore_unreachable: bool,
}

impl<R: crate::diagnose::fleet::FleetMember> FleetReport<R> {
    /// Sorts the entries worst first; the summary counts them.
    pub(crate) fn new(
        mut entries: Vec<crate::diagnose::fleet::FleetEntry<R>>,
        fail_on: FailOn,
        ignore_unreachable: bool,
    ) -> FleetReport<R> {
        crate::diagnose::fleet::sort_worst_first(&mut entries, ignore_unreachable);
        FleetReport {
            api_version: API_VERSION,
            kind: "FleetReport",
            summary: crate::diagnose::fleet::FleetSummary::of(&entries),
            entries,
            fail_on,
            ignore_unreachable,
        }
    }
}

impl crate::diagnose::fleet::FleetMember for CheckReport {
    fn findings(&self) -> Vec<Finding> {
        self.analysis.findings()
    }
    fn cluster(&self) -> &crate::diagnose::cluster_summary::ClusterSummary {
        self.analysis.cluster()
    }
    fn locks(&self) -> &[crate::diagnose::leases::lock_status::LockStatus] {
        self.analysis.locks()
    }
    fn snapshot_totals(&self) -> Option<&crate::diagnose::check::SnapshotTotals> {
        self.analysis.snapshot_totals()
    }
}

impl crate::diagnose::fleet::FleetMember for LeaseReport {
    fn findings(&self) -> Vec<Finding> {
        self.analysis.findings()
    }
    fn cluster(&self) -> &crate::diagnose::cluster_summary::ClusterSummary {
        self.analysis.cluster()
    }
    fn locks(&self) -> &[crate::diagnose::leases::lock_status::LockStatus] {
        self.analysis.locks()
    }
    fn snapshot_totals(&self) -> Option<&crate::diagnose::check::SnapshotTotals> {
        None
    }
}

/// The report inside a fleet entry, for the `FleetReport` schema: `check` gives a
/// `CheckReport`, `leases` a `LeaseReport`.
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // only its schema is used
pub(crate) enum FleetMemberReport {
    Check(CheckReport),
    Leases(LeaseReport),
}
