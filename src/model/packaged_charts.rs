//! What the packaged-charts check reads: k3s's and RKE2's HelmCharts and the Jobs
//! helm-controller runs for them.

use super::helm_chart::HelmChartFacts;
use super::helm_job::HelmJobFacts;

/// k3s's and RKE2's packaged charts and helm-controller's install Jobs, both in kube-system.
/// `charts` is `None` when the HelmCharts were not read (a dump with only the Jobs); `jobs`
/// when the Jobs were not (the charts' own conditions are still judged).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PackagedCharts {
    pub charts: Option<Vec<HelmChartFacts>>,
    pub jobs: Option<Vec<HelmJobFacts>>,
}
