//! How `check` lists findings: each said once, and those whose analyser named their cause
//! hung under it (missing snapshot entries under the lease split that stopped the controller).

use serde::Serialize;

use super::finding::{Finding, FindingCode};

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CheckFinding {
    #[serde(flatten)]
    pub finding: Finding,
    /// Findings this one causes; fixing it fixes them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<Finding>,
}

/// Two analysers may both notice a gap in a dump; say it once.
pub(super) fn dedupe(findings: Vec<Finding>) -> Vec<Finding> {
    // Compared in place (a message can list 50,000 snapshots, joined only when written);
    // a check has tens of findings.
    let first: Vec<bool> = findings
        .iter()
        .enumerate()
        .map(|(i, f)| {
            !findings[..i]
                .iter()
                .any(|e| e.code == f.code && e.message == f.message)
        })
        .collect();
    findings
        .into_iter()
        .zip(first)
        .filter_map(|(f, first)| first.then_some(f))
        .collect()
}

/// Findings whose analyser named their cause hang under that cause when it is among the
/// findings (missing snapshot entries under the lease split that stopped the controller), or
/// under its cause's cause (Rancher's 0 B records under the split that left the entries
/// missing); everything else stands alone. Ranked by severity.
pub(super) fn link(findings: Vec<Finding>) -> Vec<CheckFinding> {
    let present: Vec<FindingCode> = findings.iter().map(|f| f.code).collect();
    let cause_of = |code: FindingCode| {
        findings
            .iter()
            .find(|f| f.code == code)
            .and_then(|f| f.caused_by)
            .filter(|cause| present.contains(cause) && *cause != code)
    };
    // The root of a chain: bounded, so a loop between two codes cannot hang the run.
    let root = |mut code: FindingCode| {
        for _ in 0..present.len() {
            match cause_of(code) {
                Some(cause) => code = cause,
                None => break,
            }
        }
        code
    };
    let roots: Vec<Option<FindingCode>> = findings
        .iter()
        .map(|f| {
            f.caused_by
                .filter(|cause| present.contains(cause) && *cause != f.code)
                .map(root)
        })
        .collect();
    let (children, primaries): (Vec<_>, Vec<_>) = findings
        .into_iter()
        .zip(roots)
        .partition(|(_, root)| root.is_some());
    let mut linked: Vec<CheckFinding> = primaries
        .into_iter()
        .map(|(f, _)| CheckFinding {
            children: children
                .iter()
                .filter(|(_, root)| *root == Some(f.code))
                .map(|(c, _)| c.clone())
                .collect(),
            finding: f,
        })
        .collect();
    linked.sort_by_key(|f| std::cmp::Reverse(f.finding.severity));
    linked
}
