//! The `batch/v1` Jobs helm-controller runs a HelmChart with (`helm-install-<chart>`, labelled
//! `helmcharts.helm.cattle.io/chart`, in the chart's namespace: see [`super::helm_chart`]).
//! Only what says whether the Job finished, failed or still runs, parsed from the JSON a dump
//! and a live read share.

use jiff::Timestamp;
use serde_json::Value;

use super::helm_chart::{CHART_LABEL, text, time};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HelmJobFacts {
    pub name: String,
    pub namespace: String,
    /// The `helmcharts.helm.cattle.io/chart` label: the HelmChart the Job belongs to.
    pub chart: Option<String>,
    /// `status.startTime`, else the creation time: when the Job began to run.
    pub started: Option<Timestamp>,
    /// `status.active`: pods running now.
    pub active: i64,
    /// `status.failed`: pods that failed so far (helm-controller's default backoffLimit is
    /// 1000, so a failing install retries for hours before the Job fails).
    pub failed_pods: i64,
    pub state: JobState,
}

/// Where the Job stands, by its conditions (the Job controller's `Complete` and `Failed`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum JobState {
    Complete,
    /// `Failed=True`, with its reason (`BackoffLimitExceeded`, `DeadlineExceeded`), message
    /// and when.
    Failed {
        reason: String,
        message: String,
        at: Option<Timestamp>,
    },
    /// Neither complete nor failed.
    Running,
}

impl HelmJobFacts {
    /// The facts of one Job; `Ok(None)` for a Job helm-controller did not make (neither the
    /// label nor a `helm-install-`/`helm-delete-` name); why not, for an object without a name.
    pub(crate) fn from_json(object: &Value) -> Result<Option<HelmJobFacts>, String> {
        let meta = object.get("metadata");
        let name = text(meta, "name").ok_or("it has no metadata.name")?;
        let chart = meta
            .and_then(|m| m.get("labels"))
            .and_then(|l| l.get(CHART_LABEL))
            .and_then(Value::as_str)
            .map(str::to_string);
        if chart.is_none()
            && !(name.starts_with("helm-install-") || name.starts_with("helm-delete-"))
        {
            return Ok(None);
        }
        let status = object.get("status");
        let count = |field: &str| {
            status
                .and_then(|s| s.get(field))
                .and_then(Value::as_i64)
                .unwrap_or(0)
        };
        let condition = |type_: &str| {
            status
                .and_then(|s| s.get("conditions"))
                .and_then(Value::as_array)?
                .iter()
                .find(|c| {
                    c.get("type").and_then(Value::as_str) == Some(type_)
                        && c.get("status").and_then(Value::as_str) == Some("True")
                })
        };
        let state = if let Some(failed) = condition("Failed") {
            let failed = Some(failed);
            JobState::Failed {
                reason: text(failed, "reason").unwrap_or_default(),
                message: text(failed, "message").unwrap_or_default(),
                at: time(failed, "lastTransitionTime"),
            }
        } else if condition("Complete").is_some() || count("succeeded") > 0 {
            JobState::Complete
        } else {
            JobState::Running
        };
        Ok(Some(HelmJobFacts {
            namespace: text(meta, "namespace").unwrap_or_default(),
            chart,
            started: time(status, "startTime").or_else(|| time(meta, "creationTimestamp")),
            active: count("active"),
            failed_pods: count("failed"),
            state,
            name,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn job(status: Value) -> HelmJobFacts {
        HelmJobFacts::from_json(&json!({
            "metadata": {"name": "helm-install-traefik", "namespace": "kube-system",
                         "creationTimestamp": "2024-05-31T11:00:00Z",
                         "labels": {CHART_LABEL: "traefik"}},
            "status": status,
        }))
        .unwrap()
        .unwrap()
    }

    #[test]
    fn the_job_controllers_conditions_say_where_it_stands() {
        let failed = job(
            json!({"failed": 7, "startTime": "2024-05-31T11:01:00Z", "conditions": [
            {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
             "message": "Job has reached the specified backoff limit",
             "lastTransitionTime": "2024-05-31T11:30:00Z"}]}),
        );
        assert_eq!(failed.failed_pods, 7);
        assert_eq!(failed.chart.as_deref(), Some("traefik"));
        assert_eq!(
            failed.started,
            Some("2024-05-31T11:01:00Z".parse().unwrap())
        );
        assert!(
            matches!(&failed.state, JobState::Failed { reason, .. } if reason == "BackoffLimitExceeded")
        );
        let done =
            job(json!({"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}));
        assert_eq!(done.state, JobState::Complete);
        let running = job(json!({"active": 1}));
        assert_eq!(running.state, JobState::Running);
        assert_eq!(
            running.started,
            Some("2024-05-31T11:00:00Z".parse().unwrap())
        );
    }

    #[test]
    fn other_jobs_are_not_kept_and_garbage_is_tolerated() {
        let other = json!({"metadata": {"name": "backup", "namespace": "kube-system"}});
        assert_eq!(HelmJobFacts::from_json(&other).unwrap(), None);
        let garbage =
            job(json!({"active": "many", "conditions": {"x": 1}, "startTime": "yesterday"}));
        assert_eq!(garbage.state, JobState::Running);
        assert_eq!(garbage.active, 0);
        assert!(HelmJobFacts::from_json(&json!([1, 2])).is_err());
    }
}
