//! How `check` lists findings: each said once, and those whose analyser named their cause
//! hung under it (missing snapshot entries under the lease split that stopped the controller).

use serde::Serialize;

use super::finding::{Finding, FindingCode};

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckFinding {
    #[serde(flatten)]
    pub finding: Finding,
    /// Findings this one causes; fixing it fixes them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<Finding>,
}

/// Two analysers may both notice a gap in a dump; say it once.
pub fn dedupe(findings: Vec<Finding>) -> Vec<Finding> {
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
pub fn link(findings: Vec<Finding>) -> Vec<CheckFinding> {
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
