//! The documented JSON shape of `leases -o json`, as a consumer would deserialise it.

// Every documented field is declared so deserialisation checks the shape, even where no test reads it.
#![allow(dead_code)]

use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LeaseReport {
    pub api_version: String,
    pub kind: String,
    pub now: Now,
    pub cluster: Cluster,
    pub verdict_version: Option<String>,
    pub locks: Vec<Lock>,
    pub other_elections: Vec<Election>,
    pub findings: Vec<Finding>,
    pub summary: Summary,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Now {
    pub time: String,
    pub source: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Cluster {
    pub distro: String,
    pub servers: usize,
    pub agents: usize,
    pub etcd_members: usize,
    pub lock_style: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Lock {
    pub name: String,
    pub purpose: String,
    pub kind: String,
    pub state: String,
    pub holder: Option<String>,
    pub node: Option<HolderNode>,
    pub renewed_seconds_ago: Option<i64>,
    pub lease_duration_seconds: Option<i64>,
    pub transitions: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HolderNode {
    pub name: String,
    pub matched_by: String,
    pub readiness: String,
    pub roles: Vec<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Election {
    pub name: String,
    pub holder: String,
    pub node: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Finding {
    pub severity: String,
    pub code: String,
    pub object: String,
    pub message: String,
    #[serde(default)]
    pub remediation: String,
    #[serde(default, rename = "causedBy")]
    pub caused_by: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Summary {
    pub errors: usize,
    pub warnings: usize,
}

impl LeaseReport {
    pub(crate) fn codes(&self) -> Vec<(&str, &str)> {
        self.findings
            .iter()
            .map(|f| (f.severity.as_str(), f.code.as_str()))
            .collect()
    }

    pub(crate) fn lock(&self, name: &str) -> &Lock {
        self.locks
            .iter()
            .find(|l| l.name == name)
            .unwrap_or_else(|| panic!("no lock {name} in {:?}", self.locks))
    }
}

/// `check -o json`, as documented in the README.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CheckReport {
    pub api_version: String,
    pub kind: String,
    pub now: Now,
    pub cluster: Cluster,
    pub locks: Vec<Lock>,
    pub snapshots: Option<SnapshotTotals>,
    pub version_advice: Vec<VersionAdvice>,
    pub checks: Vec<CheckRun>,
    pub findings: Vec<CheckFinding>,
    pub summary: Summary,
}

#[derive(Debug, Deserialize)]
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
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct VersionAdvice {
    pub line: String,
    pub running: Vec<String>,
    pub status: String,
    pub upgrade_to: Option<String>,
    pub advice: String,
}

#[derive(Debug, Deserialize)]
pub(crate) struct CheckRun {
    pub name: String,
    pub ran: bool,
    #[serde(default)]
    pub note: String,
}

#[derive(Debug, Deserialize)]
pub(crate) struct CheckFinding {
    #[serde(flatten)]
    pub finding: Finding,
    #[serde(default)]
    pub children: Vec<Finding>,
}

impl CheckReport {
    /// Codes of the findings linked under the `i`-th primary finding.
    pub(crate) fn child_codes(&self, i: usize) -> Vec<&str> {
        self.findings[i]
            .children
            .iter()
            .map(|c| c.code.as_str())
            .collect()
    }

    pub(crate) fn codes(&self) -> Vec<String> {
        self.findings
            .iter()
            .map(|f| format!("{}/{}", f.finding.severity, f.finding.code))
            .collect()
    }
}
