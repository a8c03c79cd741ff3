//! `helm.cattle.io/v1 HelmChart`s, the packaged components k3s and RKE2 install through their
//! embedded helm-controller (k3s-io/helm-controller, `pkg/apis/helm.cattle.io/v1`). Only what `helmchart-failed` and
//! `helmchart-stuck` read, parsed from the JSON a dump and a live read share.
//!
//! Facts from k3s-io/helm-controller `pkg/controllers/chart/chart.go` (read, not copied):
//! `OnChange` writes `status.jobName` and two conditions, `JobCreated` and `Failed` (True with
//! reasons such as "Job create failed" or "Unsupported version"); the install Job is named
//! `helm-install-<chart>` (`helm-delete-<chart>` while the chart is deleted), lives in the
//! HelmChart's own namespace (`Namespace: chart.Namespace`) and carries the label
//! `helmcharts.helm.cattle.io/chart=<chart>`; `spec.targetNamespace` is where the release (and
//! its Helm release Secrets) go.

use jiff::Timestamp;
use serde_json::Value;

/// Where k3s and RKE2 put their packaged charts (the manifests directory's HelmCharts), and
/// so the only namespace k3sdoctor reads HelmCharts and Jobs in.
pub(crate) const NAMESPACE: &str = "kube-system";

/// The label helm-controller puts on the Jobs it makes, naming their HelmChart.
pub(crate) const CHART_LABEL: &str = "helmcharts.helm.cattle.io/chart";

/// k3s's own charts (its manifests directory); RKE2's all start with `rke2-`.
const K3S_PACKAGED: [&str; 5] = [
    "traefik",
    "traefik-crd",
    "coredns",
    "metrics-server",
    "local-storage",
];

/// One condition of `status.conditions`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChartCondition {
    pub type_: String,
    pub status: String,
    pub reason: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HelmChartFacts {
    pub name: String,
    pub namespace: String,
    /// `spec.targetNamespace`, else the HelmChart's namespace: where the release lives.
    pub target_namespace: String,
    /// `status.jobName`: the Job helm-controller last applied the chart with.
    pub job_name: Option<String>,
    pub conditions: Vec<ChartCondition>,
    /// `metadata.deletionTimestamp` set: the uninstall Job runs instead.
    pub deleting: bool,
}

impl HelmChartFacts {
    /// The facts of one HelmChart object; why not, for an object without a name.
    pub(crate) fn from_json(object: &Value) -> Result<HelmChartFacts, String> {
        let meta = object.get("metadata");
        let name = text(meta, "name").ok_or("it has no metadata.name")?;
        let namespace = text(meta, "namespace").unwrap_or_default();
        let spec = object.get("spec");
        let status = object.get("status");
        let conditions = status
            .and_then(|s| s.get("conditions"))
            .and_then(Value::as_array)
            .map(|list| list.iter().filter_map(condition).collect())
            .unwrap_or_default();
        Ok(HelmChartFacts {
            target_namespace: text(spec, "targetNamespace")
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| namespace.clone()),
            job_name: text(status, "jobName").filter(|j| !j.is_empty()),
            conditions,
            deleting: meta.and_then(|m| m.get("deletionTimestamp")).is_some(),
            name,
            namespace,
        })
    }

    /// The Job helm-controller runs for the chart now: `status.jobName`, else the name it
    /// derives.
    pub(crate) fn job(&self) -> String {
        self.job_name.clone().unwrap_or_else(|| {
            let action = if self.deleting { "delete" } else { "install" };
            format!("helm-{action}-{}", self.name)
        })
    }

    /// The `Failed` condition when it is True.
    pub(crate) fn failed(&self) -> Option<&ChartCondition> {
        self.conditions
            .iter()
            .find(|c| c.type_ == "Failed" && c.status == "True")
    }

    /// One of the charts k3s or RKE2 ship themselves: listed first, since a cluster without
    /// its ingress or DNS is what an operator looks at first.
    pub(crate) fn is_packaged(&self) -> bool {
        K3S_PACKAGED.contains(&self.name.as_str()) || self.name.starts_with("rke2-")
    }
}

fn condition(value: &Value) -> Option<ChartCondition> {
    let value = Some(value);
    Some(ChartCondition {
        type_: text(value, "type")?,
        status: text(value, "status").unwrap_or_default(),
        reason: text(value, "reason").unwrap_or_default(),
        message: text(value, "message").unwrap_or_default(),
    })
}

/// A string field of `object`, if it is one.
pub(crate) fn text(object: Option<&Value>, field: &str) -> Option<String> {
    Some(object?.get(field)?.as_str()?.to_string())
}

/// A time field of `object`, if it is one and parses.
pub(crate) fn time(object: Option<&Value>, field: &str) -> Option<Timestamp> {
    text(object, field)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_status_helm_controller_writes() {
        let chart = HelmChartFacts::from_json(&json!({
            "metadata": {"name": "traefik", "namespace": "kube-system"},
            "spec": {"chart": "https://%{KUBERNETES_API}%/static/charts/traefik.tgz"},
            "status": {"jobName": "helm-install-traefik", "conditions": [
                {"type": "JobCreated", "status": "True", "reason": "Job created"},
                {"type": "Failed", "status": "True", "reason": "Job create failed", "message": "boom"},
            ]},
        }))
        .unwrap();
        assert_eq!(chart.job(), "helm-install-traefik");
        assert_eq!(chart.target_namespace, "kube-system");
        assert_eq!(chart.failed().unwrap().message, "boom");
        assert!(chart.is_packaged());
    }

    #[test]
    fn a_chart_without_status_derives_its_job_and_garbage_is_tolerated() {
        let chart = HelmChartFacts::from_json(&json!({
            "metadata": {"name": "podinfo", "namespace": "kube-system", "deletionTimestamp": "2024-05-31T12:00:00Z"},
            "spec": {"targetNamespace": "apps"},
            "status": {"conditions": "nonsense", "jobName": 7},
        }))
        .unwrap();
        assert_eq!(chart.job(), "helm-delete-podinfo");
        assert_eq!(chart.target_namespace, "apps");
        assert!(chart.failed().is_none());
        assert!(!chart.is_packaged());
        assert!(HelmChartFacts::from_json(&json!({"metadata": {}})).is_err());
        assert!(HelmChartFacts::from_json(&json!("text")).is_err());
    }
}
