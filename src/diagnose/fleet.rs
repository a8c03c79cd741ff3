//! A fleet: one verdict per cluster of a kubeconfig, ranked worst first, and the one exit
//! code for all of them. Pure: the clusters were read elsewhere, each into its own report.

use serde::Serialize;

use super::finding::{FailOn, Severity};
use crate::exit::Exit;
use crate::model::read_failure_kind::{ReadFailure, ReadFailureKind};

mod fleet_member;
mod summary_row;
#[cfg(test)]
mod tests;

pub(crate) use fleet_member::FleetMember;
pub(crate) use summary_row::{FleetRow, summary_row};

/// How reading one cluster ended (`outcome` in a `FleetReport` entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum FleetOutcome {
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
pub(crate) struct FleetEntry<R> {
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
    pub(crate) fn checked(context: String, server: String, report: R) -> FleetEntry<R> {
        FleetEntry {
            context,
            server,
            outcome: FleetOutcome::Checked,
            error: None,
            refused_request: None,
            report: Some(report),
        }
    }

    pub(crate) fn unreadable(
        context: String,
        server: String,
        error: &ReadFailure,
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
    pub(crate) fn severity(&self, ignore_unreachable: bool) -> Option<Severity> {
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
pub(crate) fn sort_worst_first<R: FleetMember>(
    entries: &mut [FleetEntry<R>],
    ignore_unreachable: bool,
) {
    entries.sort_by_cached_key(|e| {
        let unread = e.report.is_none() && !ignore_unreachable;
        (
            std::cmp::Reverse(unread),
            std::cmp::Reverse(e.severity(ignore_unreachable)),
            e.context.clone(),
        )
    });
}

/// The exit code for a fleet: 3 if any cluster could not be read (unless
/// `--ignore-unreachable`, which makes it a warning), else 1 if any cluster has a finding at
/// or above `--fail-on`, else 0.
pub(crate) fn fleet_exit<R: FleetMember>(
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
pub(crate) struct FleetSummary {
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
    pub(crate) fn of<R: FleetMember>(entries: &[FleetEntry<R>]) -> FleetSummary {
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
