//! system-upgrade-controller's Plans (`plans.upgrade.cattle.io`, `upgrade.cattle.io/v1`,
//! namespaced): what says which nodes a Plan is upgrading, since when, and how its Jobs end.
//! Fields from rancher/system-upgrade-controller `pkg/apis/upgrade.cattle.io/v1/types.go`.

use jiff::Timestamp;
use serde_json::Value;

use super::helm_chart::{text, time};

/// The Node roles a server plan selects on (the k3s and RKE2 docs' `upgrades/automated.md`).
const CONTROL_PLANE_LABELS: [&str; 2] = [
    "node-role.kubernetes.io/control-plane",
    "node-role.kubernetes.io/master",
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlanFacts {
    pub name: String,
    pub namespace: String,
    pub created: Option<Timestamp>,
    /// `spec.jobActiveDeadlineSecs` (SUC v0.12.0): unset or < 0 takes the controller's
    /// default, 0 means no deadline.
    pub job_deadline_secs: Option<i64>,
    /// `spec.cordon`, or a `spec.drain` (which cordons too).
    pub cordons: bool,
    /// Its nodeSelector asks for a control-plane (or master) role: a server plan.
    pub selects_control_plane: bool,
    /// The plan the `prepare` step waits for (`prepare: {args: [prepare, <server-plan>]}`,
    /// k3s-upgrade's agent plans).
    pub prepare_waits_on: Option<String>,
    /// `status.latestVersion` (`+` turned into `-`).
    pub latest_version: Option<String>,
    /// `status.latestHash`: the value a node's `plan.upgrade.cattle.io/<plan>` label gets once
    /// its Job completed.
    pub latest_hash: Option<String>,
    /// `status.applying`: the hostnames (`kubernetes.io/hostname`) being upgraded now.
    pub applying: Vec<String>,
    /// `status.conditions[type=Complete]` (SUC v0.13.3 and later; absent before).
    pub complete: Option<PlanCondition>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlanCondition {
    pub status: String,
    pub reason: String,
    pub message: String,
    /// `lastTransitionTime`, else `lastUpdateTime`.
    pub since: Option<Timestamp>,
}

impl PlanFacts {
    /// The facts of one Plan; why not, for an object without a name.
    pub(crate) fn from_json(object: &Value) -> Result<PlanFacts, String> {
        let meta = object.get("metadata");
        let name = text(meta, "name").ok_or("it has no metadata.name")?;
        let spec = object.get("spec");
        let status = object.get("status");
        let complete = status
            .and_then(|s| s.get("conditions"))
            .and_then(Value::as_array)
            .and_then(|all| {
                all.iter()
                    .find(|c| c.get("type").and_then(Value::as_str) == Some("Complete"))
            })
            .map(|c| PlanCondition {
                status: text(Some(c), "status").unwrap_or_default(),
                reason: text(Some(c), "reason").unwrap_or_default(),
                message: text(Some(c), "message").unwrap_or_default(),
                since: time(Some(c), "lastTransitionTime")
                    .or_else(|| time(Some(c), "lastUpdateTime")),
            });
        let applying = status
            .and_then(|s| s.get("applying"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        Ok(PlanFacts {
            namespace: text(meta, "namespace").unwrap_or_default(),
            created: time(meta, "creationTimestamp"),
            job_deadline_secs: spec
                .and_then(|s| s.get("jobActiveDeadlineSecs"))
                .and_then(Value::as_i64),
            cordons: spec
                .and_then(|s| s.get("cordon"))
                .and_then(Value::as_bool)
                .unwrap_or(false)
                || spec
                    .and_then(|s| s.get("drain"))
                    .is_some_and(Value::is_object),
            selects_control_plane: selects_control_plane(spec.and_then(|s| s.get("nodeSelector"))),
            prepare_waits_on: prepare_waits_on(spec),
            latest_version: text(status, "latestVersion"),
            latest_hash: text(status, "latestHash"),
            applying,
            complete,
            name,
        })
    }

    /// `Namespace/name`, as messages name it.
    pub(crate) fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// The Node label SUC sets to `latestHash` once a node's Job completed.
    pub(crate) fn node_label(&self) -> String {
        format!("plan.upgrade.cattle.io/{}", self.name)
    }

    /// `Complete=False` with reason `JobFailed` (SUC v0.15.3/v0.16.0 and later).
    pub(crate) fn job_failed(&self) -> Option<&PlanCondition> {
        self.complete
            .as_ref()
            .filter(|c| c.status == "False" && c.reason == "JobFailed")
    }
}

/// A selector that requires a control-plane role: `matchLabels` on it, or a
/// `matchExpressions` entry `In [true]` or `Exists`.
fn selects_control_plane(selector: Option<&Value>) -> bool {
    let Some(selector) = selector else {
        return false;
    };
    let by_label = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .is_some_and(|labels| {
            CONTROL_PLANE_LABELS
                .iter()
                .any(|l| labels.get(*l).and_then(Value::as_str) == Some("true"))
        });
    let by_expression = selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|e| {
            let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
            let operator = e
                .get("operator")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let values = e.get("values").and_then(Value::as_array);
            CONTROL_PLANE_LABELS.contains(&key)
                && (operator == "Exists"
                    || (operator == "In" && values.is_some_and(|v| v.iter().any(|v| v == "true"))))
        });
    by_label || by_expression
}

/// k3s-upgrade's `prepare <plan>` step, which loops until that plan is done.
fn prepare_waits_on(spec: Option<&Value>) -> Option<String> {
    let args = spec?.get("prepare")?.get("args")?.as_array()?;
    match args.as_slice() {
        [verb, plan, ..] if verb == "prepare" => plan.as_str().map(str::to_string),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
