//! The HelmCharts and helm-controller Jobs in kube-system that `packaged-charts` reads: two
//! paged lists, at once. It takes no `ClusterState`, so callers run it concurrently with
//! reads that fill one.
//!
//! Only kube-system: k3s's and RKE2's packaged charts live there, and helm-controller puts a
//! chart's Job in the chart's own namespace (k3s-io/helm-controller
//! `pkg/controllers/chart/chart.go`, `job()`), so the role needs nothing cluster-wide.

use k8s_openapi::api::batch::v1::Job;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use serde_json::Value;

use super::refusal::{first_refusal, refusal};
use super::{Connection, PAGE_SIZE, ReadError, Trace, list_with};
use crate::model::cluster_state::ClusterState;
use crate::model::collected::Collected;
use crate::model::helm_chart::{CHART_LABEL, HelmChartFacts, NAMESPACE};
use crate::model::helm_job::HelmJobFacts;
use crate::model::kinds::Kind;
use crate::model::kine_probe::WrittenRevision;
use crate::model::packaged_charts::PackagedCharts;

/// The answer to the two reads: the charts and Jobs (with a note per object that could not
/// be read), or why they were not read.
#[derive(Debug, Clone)]
pub(super) enum PackagedChartsRead {
    Read {
        charts: Vec<HelmChartFacts>,
        jobs: Vec<HelmJobFacts>,
        notes: Vec<String>,
        /// The oldest revision these objects date, for the kine probe.
        oldest_write: Option<WrittenRevision>,
    },
    /// The API server refused a list (403).
    Refused(String),
    /// `helm.cattle.io/v1` is not served.
    NotServed(String),
}

impl PackagedChartsRead {
    pub(super) fn oldest_write(&self) -> Option<WrittenRevision> {
        match self {
            PackagedChartsRead::Read { oldest_write, .. } => oldest_write.clone(),
            _ => None,
        }
    }

    pub(super) fn fill(self, state: &mut ClusterState) {
        match self {
            PackagedChartsRead::Read {
                charts,
                jobs,
                notes,
                oldest_write: _,
            } => {
                state.packaged_charts = Collected::Read(PackagedCharts {
                    charts: Some(charts),
                    jobs: Some(jobs),
                });
                state.notes.extend(notes);
            }
            PackagedChartsRead::Refused(why) => state.packaged_charts = Collected::Refused(why),
            PackagedChartsRead::NotServed(why) => state.packaged_charts = Collected::Failed(why),
        }
    }
}

/// What `packaged-charts` says when the API server refuses either list.
pub(super) const FORBIDDEN: &str =
    "needs list helmcharts and jobs in kube-system: `k3sdoctor rbac read-only` prints the role";

/// What it says when `helm.cattle.io/v1` is not served.
pub(super) const CRD_MISSING: &str =
    "the HelmChart CRD is not installed (helm-controller disabled)";

fn helm_chart_resource() -> ApiResource {
    ApiResource {
        group: "helm.cattle.io".into(),
        version: "v1".into(),
        api_version: "helm.cattle.io/v1".into(),
        kind: Kind::HelmChart.name().into(),
        plural: Kind::HelmChart.row().plural.into(),
    }
}

/// `LIST .../namespaces/kube-system/helmcharts` and `LIST .../namespaces/kube-system/jobs`
/// labelled `helmcharts.helm.cattle.io/chart`, paged. Both are read as plain JSON and parsed
/// as a dump's are, so an odd object is skipped with a note instead of failing the run. A 403
/// is an answer (a role granted before this check existed lacks the rights), as is a 404 for
/// the HelmCharts (`--disable-helm-controller`, or no CRD).
pub(super) async fn read_packaged_charts(
    conn: &Connection,
    trace: Trace<'_>,
) -> Result<PackagedChartsRead, ReadError> {
    let charts_api: Api<DynamicObject> =
        Api::namespaced_with(conn.client.clone(), NAMESPACE, &helm_chart_resource());
    let jobs_api: Api<DynamicObject> = Api::namespaced_with(
        conn.client.clone(),
        NAMESPACE,
        &ApiResource::erase::<Job>(&()),
    );
    let charts_action = format!("list helmcharts.helm.cattle.io in {NAMESPACE}");
    let jobs_action = format!("list jobs.batch in {NAMESPACE} labelled {CHART_LABEL}");
    let (charts, jobs) = tokio::join!(
        list_with(
            &charts_api,
            &charts_action,
            conn,
            trace,
            |o| serde_json::to_value(o).unwrap_or_default(),
            ListParams::default().limit(PAGE_SIZE),
        ),
        list_with(
            &jobs_api,
            &jobs_action,
            conn,
            trace,
            |o| serde_json::to_value(o).unwrap_or_default(),
            ListParams::default().labels(CHART_LABEL).limit(PAGE_SIZE),
        ),
    );
    let refused = first_refusal([charts.as_ref().err(), jobs.as_ref().err()]).and_then(|e| {
        refusal(e, trace, "packaged-charts not checked", |_| {
            FORBIDDEN.into()
        })
    });
    if let Some(why) = refused {
        return Ok(PackagedChartsRead::Refused(why));
    }
    let charts = match charts {
        Ok(charts) => charts,
        Err(e) if e.http_status == Some(404) => {
            trace("helmcharts.helm.cattle.io is not served: the CRD is not installed");
            return Ok(PackagedChartsRead::NotServed(CRD_MISSING.to_string()));
        }
        Err(e) => return Err(e),
    };
    let jobs = jobs?;
    let oldest_write = WrittenRevision::oldest(
        (charts.iter().map(|o| (Kind::HelmChart.name(), o))).chain(jobs.iter().map(|o| ("Job", o))),
    );
    let (charts, mut notes) = parse_charts(&charts);
    let (jobs, job_notes) = parse_jobs(&jobs);
    notes.extend(job_notes);
    Ok(PackagedChartsRead::Read {
        charts,
        jobs,
        notes,
        oldest_write,
    })
}

/// Every HelmChart that has a name; a note for each that does not.
fn parse_charts(objects: &[Value]) -> (Vec<HelmChartFacts>, Vec<String>) {
    let mut notes = Vec::new();
    let charts = objects
        .iter()
        .filter_map(|o| {
            HelmChartFacts::from_json(o)
                .map_err(|why| notes.push(format!("skipped a HelmChart in {NAMESPACE}: {why}")))
                .ok()
        })
        .collect();
    (charts, notes)
}

/// Every helm-controller Job that has a name; a note for each that does not.
fn parse_jobs(objects: &[Value]) -> (Vec<HelmJobFacts>, Vec<String>) {
    let mut notes = Vec::new();
    let jobs = objects
        .iter()
        .filter_map(|o| {
            HelmJobFacts::from_json(o)
                .map_err(|why| notes.push(format!("skipped a Job in {NAMESPACE}: {why}")))
                .ok()
                .flatten()
        })
        .collect();
    (jobs, notes)
}
