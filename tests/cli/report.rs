//! The documented JSON shape of `leases -o json`, as a consumer would deserialise it.

// Every documented field is declared so deserialisation checks the shape, even where no test reads it.
#![allow(dead_code)]

use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaseReport {
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
pub struct Now {
    pub time: String,
    pub source: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cluster {
    pub distro: String,
    pub servers: usize,
    pub agents: usize,
    pub etcd_members: usize,
    pub lock_style: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lock {
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
pub struct HolderNode {
    pub name: String,
    pub matched_by: String,
    pub readiness: String,
    pub roles: Vec<String>,
}

#[derive(Debug, Deserialize)]
pub struct Election {
    pub name: String,
    pub holder: String,
    pub node: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct Finding {
    pub severity: String,
    pub code: String,
    pub object: String,
    pub message: String,
    #[serde(default)]
    pub remediation: String,
}

#[derive(Debug, Deserialize)]
pub struct Summary {
    pub errors: usize,
    pub warnings: usize,
}

impl LeaseReport {
    pub fn codes(&self) -> Vec<(&str, &str)> {
        self.findings
            .iter()
            .map(|f| (f.severity.as_str(), f.code.as_str()))
            .collect()
    }

    pub fn lock(&self, name: &str) -> &Lock {
        self.locks
            .iter()
            .find(|l| l.name == name)
            .unwrap_or_else(|| panic!("no lock {name} in {:?}", self.locks))
    }
}
