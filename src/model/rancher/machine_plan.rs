//! A v2prov machine's plan, as far as its `rke.cattle.io/machine-plan` Secret shows whether
//! it was applied (rancher `pkg/capr/planner/store.go`, system-agent `pkg/k8splan/watcher.go`):
//! Rancher writes `plan`, the agent on the node writes the sha256 of the plan it applied
//! (`applied-checksum`) or failed to apply (`failed-checksum`). The plan holds the node's
//! join token and configuration, so only its hash is kept: the Secret's data is dropped
//! where it is parsed, and nothing of it reaches a report, a note or an error.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde_json::Value;

use super::{string_map, text};

/// The Secret type Rancher gives machine plans.
pub(crate) const PLAN_SECRET_TYPE: &str = "rke.cattle.io/machine-plan";
const MACHINE_LABEL: &str = "rke.cattle.io/machine-name";
const CLUSTER_LABEL: &str = "rke.cattle.io/cluster-name";
const LAST_UPDATED: &str = "rke.cattle.io/plan-last-updated";

/// Whether the agent applied the plan Rancher wrote last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PlanOutcome {
    /// `applied-checksum` is the plan's hash.
    Applied,
    /// `failed-checksum` is the plan's hash: the agent tried and failed.
    Failed,
    /// Neither: the agent has not (yet) applied this plan.
    Waiting,
    /// The Secret holds no plan yet.
    NoPlan,
}

/// What k3sdoctor keeps of one plan Secret: names, times and counts, never its data.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MachinePlan {
    pub namespace: String,
    pub secret: String,
    pub machine: Option<String>,
    pub cluster: Option<String>,
    /// When Rancher wrote the current plan.
    pub last_updated: Option<Timestamp>,
    pub outcome: PlanOutcome,
    pub failure_count: Option<i64>,
}

impl MachinePlan {
    /// From a Secret as JSON (`data` base64, as the API and kubectl give it); `None` for
    /// any other Secret. The plan is hashed here and nothing of the data is kept.
    pub(crate) fn from_secret_json(v: &Value) -> Option<MachinePlan> {
        if v["type"].as_str() != Some(PLAN_SECRET_TYPE) {
            return None;
        }
        let field = |key: &str| -> Option<Vec<u8>> {
            use base64::Engine;
            let encoded = v["data"][key].as_str()?;
            base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .ok()
        };
        let labels = string_map(v, "/metadata/labels");
        let plan = field("plan").filter(|p| !p.is_empty());
        let checksum = |key: &str| field(key).and_then(|b| String::from_utf8(b).ok());
        let outcome = judge(
            plan.as_deref(),
            checksum("applied-checksum").as_deref(),
            checksum("failed-checksum").as_deref(),
        );
        let failure_count = checksum("failure-count").and_then(|c| c.trim().parse().ok());
        Some(MachinePlan {
            namespace: text(v, "/metadata/namespace").unwrap_or_default(),
            secret: text(v, "/metadata/name").unwrap_or_default(),
            machine: labels.get(MACHINE_LABEL).cloned(),
            cluster: labels.get(CLUSTER_LABEL).cloned(),
            last_updated: annotation_time(v),
            outcome,
            failure_count,
        })
    }
}

fn annotation_time(v: &Value) -> Option<Timestamp> {
    let annotations: BTreeMap<String, String> = string_map(v, "/metadata/annotations");
    annotations.get(LAST_UPDATED)?.parse().ok()
}

/// The plan's hash against what the agent recorded.
fn judge(plan: Option<&[u8]>, applied: Option<&str>, failed: Option<&str>) -> PlanOutcome {
    let Some(plan) = plan else {
        return PlanOutcome::NoPlan;
    };
    let hash = crate::model::digest::sha256_hex(plan);
    let is = |checksum: Option<&str>| checksum.is_some_and(|c| c.trim() == hash);
    if is(applied) {
        PlanOutcome::Applied
    } else if is(failed) {
        PlanOutcome::Failed
    } else {
        PlanOutcome::Waiting
    }
}

#[cfg(test)]
mod tests;
