//! The `batch/v1` Jobs system-upgrade-controller runs a Plan's upgrade of one node with
//! (`apply-<plan>-on-<node>-with-<hash>` in the Plan's namespace, labelled
//! `upgrade.cattle.io/plan` and `upgrade.cattle.io/node`: rancher/system-upgrade-controller
//! `pkg/upgrade/job/job.go`). A failed one is deleted after its TTL (900 s by default).

use jiff::Timestamp;
use serde_json::Value;

use super::helm_chart::{text, time};
use super::helm_job::JobState;

/// The label naming the Plan a Job belongs to; the live read selects Jobs by it.
pub(crate) const PLAN_LABEL: &str = "upgrade.cattle.io/plan";
/// The label naming the Node a Job upgrades (its name, not its hostname).
pub(crate) const NODE_LABEL: &str = "upgrade.cattle.io/node";

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UpgradeJobFacts {
    pub name: String,
    pub namespace: String,
    pub plan: String,
    pub node: String,
    /// `status.startTime`, else the creation time.
    pub started: Option<Timestamp>,
    /// `spec.activeDeadlineSeconds`: what the Job controller fails it after.
    pub active_deadline_secs: Option<i64>,
    pub state: JobState,
}

impl UpgradeJobFacts {
    /// The facts of one Job; `Ok(None)` for a Job without the plan label (not SUC's); why
    /// not, for an object without a name.
    pub(crate) fn from_json(object: &Value) -> Result<Option<UpgradeJobFacts>, String> {
        let meta = object.get("metadata");
        let name = text(meta, "name").ok_or("it has no metadata.name")?;
        let label = |key: &str| text(meta.and_then(|m| m.get("labels")), key);
        let Some(plan) = label(PLAN_LABEL) else {
            return Ok(None);
        };
        let status = object.get("status");
        Ok(Some(UpgradeJobFacts {
            namespace: text(meta, "namespace").unwrap_or_default(),
            node: label(NODE_LABEL).unwrap_or_default(),
            plan,
            started: time(status, "startTime").or_else(|| time(meta, "creationTimestamp")),
            active_deadline_secs: object
                .pointer("/spec/activeDeadlineSeconds")
                .and_then(Value::as_i64),
            state: job_state(status),
            name,
        }))
    }

    /// Whether the Job failed or is about to (`FailureTarget`, Kubernetes 1.31 and later).
    pub(crate) fn failed(&self) -> bool {
        matches!(self.state, JobState::Failed { .. })
    }
}

/// Where the Job stands by its conditions. From Kubernetes 1.31 the Job controller sets
/// `FailureTarget` first and `Failed` once the pods are gone: either means failed.
fn job_state(status: Option<&Value>) -> JobState {
    let conditions = status
        .and_then(|s| s.get("conditions"))
        .and_then(Value::as_array);
    let holds = |type_: &str| {
        conditions.into_iter().flatten().find(|c| {
            c.get("type").and_then(Value::as_str) == Some(type_)
                && c.get("status").and_then(Value::as_str) == Some("True")
        })
    };
    if let Some(failed) = holds("Failed").or_else(|| holds("FailureTarget")) {
        let failed = Some(failed);
        return JobState::Failed {
            reason: text(failed, "reason").unwrap_or_default(),
            message: text(failed, "message").unwrap_or_default(),
            at: time(failed, "lastTransitionTime"),
        };
    }
    let succeeded = status
        .and_then(|s| s.get("succeeded"))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if holds("Complete").is_some() || succeeded > 0 {
        JobState::Complete
    } else {
        JobState::Running
    }
}

#[cfg(test)]
mod tests;
