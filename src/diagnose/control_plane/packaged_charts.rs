//! `helmchart-failed` and `helmchart-stuck`: the packaged components k3s and RKE2 install
//! through helm-controller. Failed or hanging
//! installs after upgrades are the known trouble: rancher/rke2#1124, #10282,
//! k3s-io/helm-controller#91. Each HelmChart in kube-system is judged by the Job it names
//! (`status.jobName`, else `helm-install-<chart>`, in the chart's namespace: see
//! [`crate::model::helm_chart`]) and by its own `Failed` condition.

use jiff::{SignedDuration, Timestamp};

use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::line_cap::{LONGEST_QUOTE, cap_at};
use crate::model::helm_chart::{HelmChartFacts, NAMESPACE};
use crate::model::helm_job::{HelmJobFacts, JobState};

/// An install Job still running after this is stuck: k3s's packaged charts install in well
/// under a minute, and helm's own `--timeout` default is 5 minutes a try.
pub(crate) const STUCK_AFTER: SignedDuration = SignedDuration::from_mins(15);

/// The findings about `charts`, k3s's and RKE2's own first. Without `jobs` (a dump that lacks
/// them) only the charts' `Failed` conditions are judged.
pub(crate) fn analyse_packaged_charts(
    charts: &[HelmChartFacts],
    jobs: Option<&[HelmJobFacts]>,
    now: Timestamp,
) -> Vec<Finding> {
    let mut ordered: Vec<&HelmChartFacts> =
        charts.iter().filter(|c| c.namespace == NAMESPACE).collect();
    ordered.sort_by_key(|c| (!c.is_packaged(), c.name.as_str()));
    ordered
        .into_iter()
        .filter_map(|chart| judge(chart, jobs.unwrap_or_default(), now))
        .collect()
}

/// The install Job that belongs to `chart`: the one its status names, else (a status that
/// names none yet) the one labelled for it.
fn install_job<'a>(chart: &HelmChartFacts, jobs: &'a [HelmJobFacts]) -> Option<&'a HelmJobFacts> {
    let job_name = chart.job();
    jobs.iter()
        .filter(|j| j.namespace == chart.namespace)
        .find(|j| j.name == job_name)
        .or_else(|| {
            // A status that names no Job yet: the one labelled for the chart.
            (chart.job_name.is_none())
                .then(|| {
                    jobs.iter().find(|j| {
                        j.namespace == chart.namespace && j.chart.as_deref() == Some(&chart.name)
                    })
                })
                .flatten()
        })
}

/// " after 2 failed pods", or nothing.
fn retries(job: &HelmJobFacts) -> String {
    match job.failed_pods {
        0 => String::new(),
        1 => " after 1 failed pod".to_string(),
        n => format!(" after {n} failed pods"),
    }
}

fn judge(chart: &HelmChartFacts, jobs: &[HelmJobFacts], now: Timestamp) -> Option<Finding> {
    let job_name = chart.job();
    let job = install_job(chart, jobs);
    let object = format!("HelmChart {}/{}", chart.namespace, chart.name);
    match job.map(|j| (j, &j.state)) {
        Some((
            job,
            JobState::Failed {
                reason,
                message,
                at,
            },
        )) => {
            let when = at
                .map(|t| format!(" {}", crate::age::relative(now.duration_since(t))))
                .unwrap_or_default();
            let why = reason_and_message(reason, message);
            // A failed render quotes the whole template output; what follows says what it means.
            let why = cap_at(&why, LONGEST_QUOTE);
            Some(failed(
                chart,
                &job.name,
                object,
                format!(
                    "the install Job {} failed{when}{} ({why}); a failed Job is not run again until \
                     it is deleted or the chart changes, so the chart stays at its last release",
                    job.name,
                    retries(job)
                ),
            ))
        }
        _ if chart.failed().is_some() => {
            let condition = chart.failed()?;
            let why = [condition.reason.as_str(), condition.message.as_str()]
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join(": ");
            let why = cap_at(&why, LONGEST_QUOTE);
            Some(failed(
                chart,
                &job_name,
                object,
                format!(
                    "helm-controller marks it Failed ({}): the chart is not applied (its Job: \
                     {job_name})",
                    if why.is_empty() {
                        "no reason recorded"
                    } else {
                        &why
                    }
                ),
            ))
        }
        Some((job, JobState::Running)) => {
            let started = job.started?;
            let running = now.duration_since(started);
            if running <= STUCK_AFTER {
                return None;
            }
            let pods = match job.active {
                0 => "no pod active".to_string(),
                1 => "1 pod active".to_string(),
                n => format!("{n} pods active"),
            };
            Some(
                Finding::new(
                    Severity::Warning,
                    FindingCode::HelmchartStuck,
                    object,
                    format!(
                        "the install Job {} has been running for {} (since {}, {pods}{}): helm \
                         is retrying or waiting, commonly on a release left pending-install or \
                         pending-upgrade by an interrupted upgrade (rancher/rke2#1124)",
                        job.name,
                        crate::age::short(running),
                        started.strftime("%Y-%m-%dT%H:%M:%SZ"),
                        retries(job)
                    ),
                )
                .fix(remedy(chart, &job.name)),
            )
        }
        _ => None,
    }
}

/// "BackoffLimitExceeded: Job has reached the specified backoff limit", or what there is.
fn reason_and_message(reason: &str, message: &str) -> String {
    match (reason.is_empty(), message.is_empty()) {
        (true, true) => "no reason recorded".to_string(),
        (false, true) => reason.to_string(),
        (true, false) => message.to_string(),
        (false, false) => format!("{reason}: {message}"),
    }
}

fn failed(chart: &HelmChartFacts, job: &str, object: String, message: String) -> Finding {
    Finding::new(
        Severity::Error,
        FindingCode::HelmchartFailed,
        object,
        message,
    )
    .fix(remedy(chart, job))
}

/// Read the Job's log, then delete the Job so helm-controller makes it again. A release
/// stuck `pending-*` is named by its Helm release Secrets; k3sdoctor does not read Secrets,
/// so the command to look is only suggested.
fn remedy(chart: &HelmChartFacts, job: &str) -> String {
    format!(
        "kubectl -n {ns} logs job/{job}; fix what it names (the chart's values, a \
         HelmChartConfig {ns}/{name}), then kubectl -n {ns} delete job {job} and helm-controller \
         creates it again. A release stuck pending-install, pending-upgrade or pending-rollback \
         shows as Secrets labelled owner=helm,name={name} in {target} with status=pending-*: \
         kubectl -n {target} get secrets -l owner=helm,name={name} --show-labels",
        ns = chart.namespace,
        name = chart.name,
        target = chart.target_namespace,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::test_cluster::now;
    use serde_json::{Value, json};

    fn chart(name: &str, status: Value) -> HelmChartFacts {
        HelmChartFacts::from_json(&json!({
            "metadata": {"name": name, "namespace": "kube-system"},
            "status": status,
        }))
        .unwrap()
    }

    fn job(chart: &str, mins_ago: i64, status: Value) -> HelmJobFacts {
        let started = now() - SignedDuration::from_mins(mins_ago);
        let mut status = status;
        status["startTime"] = json!(started.to_string());
        HelmJobFacts::from_json(&json!({
            "metadata": {"name": format!("helm-install-{chart}"), "namespace": "kube-system",
                         "labels": {"helmcharts.helm.cattle.io/chart": chart}},
            "status": status,
        }))
        .unwrap()
        .unwrap()
    }

    fn backoff_exceeded() -> Value {
        json!({"failed": 6, "conditions": [{"type": "Failed", "status": "True",
            "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit",
            "lastTransitionTime": (now() - SignedDuration::from_mins(3)).to_string()}]})
    }

    #[test]
    fn a_failed_install_job_is_an_error_that_names_it_and_why() {
        let charts = [chart("traefik", json!({"jobName": "helm-install-traefik"}))];
        let jobs = [job("traefik", 40, backoff_exceeded())];
        let found = analyse_packaged_charts(&charts, Some(&jobs), now());
        assert_eq!(found.len(), 1);
        let f = &found[0];
        assert_eq!(f.code, FindingCode::HelmchartFailed);
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(f.object, "HelmChart kube-system/traefik");
        assert!(f.message.contains("helm-install-traefik failed 3m ago after 6 failed pods (BackoffLimitExceeded: Job has reached"), "{}", f.message);
        assert!(
            f.remediation
                .starts_with("kubectl -n kube-system logs job/helm-install-traefik;")
        );
        assert!(
            f.remediation
                .contains("kubectl -n kube-system delete job helm-install-traefik")
        );
        assert!(f.remediation.contains("owner=helm"));
        assert_eq!(
            f.remediation_command,
            [
                "kubectl",
                "-n",
                "kube-system",
                "logs",
                "job/helm-install-traefik"
            ]
        );
    }

    #[test]
    fn the_charts_failed_condition_counts_without_a_failed_job() {
        let charts = [chart(
            "podinfo",
            json!({"conditions": [
            {"type": "JobCreated", "status": "False"},
            {"type": "Failed", "status": "True", "reason": "Unsupported version", "message": "Only Helm v3 charts are supported"}]}),
        )];
        let found = analyse_packaged_charts(&charts, None, now());
        assert_eq!(found.len(), 1);
        assert!(
            found[0]
                .message
                .contains("Unsupported version: Only Helm v3"),
            "{}",
            found[0].message
        );
        assert!(found[0].message.contains("helm-install-podinfo"));
    }

    #[test]
    fn a_job_running_past_fifteen_minutes_is_stuck_and_not_before() {
        let charts = [chart(
            "rke2-canal",
            json!({"jobName": "helm-install-rke2-canal"}),
        )];
        let stuck = [job("rke2-canal", 47, json!({"active": 1, "failed": 2}))];
        let found = analyse_packaged_charts(&charts, Some(&stuck), now());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].code, FindingCode::HelmchartStuck);
        assert_eq!(found[0].severity, Severity::Warning);
        assert!(
            found[0].message.contains("running for 47m"),
            "{}",
            found[0].message
        );
        assert!(
            found[0]
                .message
                .contains("1 pod active after 2 failed pods"),
            "{}",
            found[0].message
        );
        let fresh = [job("rke2-canal", 15, json!({"active": 1}))];
        assert!(analyse_packaged_charts(&charts, Some(&fresh), now()).is_empty());
    }

    #[test]
    fn healthy_charts_and_other_namespaces_say_nothing() {
        let done = json!({"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]});
        let charts = [
            chart(
                "traefik",
                json!({"jobName": "helm-install-traefik", "conditions": [
                {"type": "JobCreated", "status": "True"}, {"type": "Failed", "status": "False"}]}),
            ),
            chart("coredns", json!({})),
        ];
        let jobs = [job("traefik", 600, done)];
        assert!(analyse_packaged_charts(&charts, Some(&jobs), now()).is_empty());
        let mut elsewhere = chart("app", json!({}));
        elsewhere.namespace = "apps".into();
        let mut its_job = job("app", 60, backoff_exceeded());
        its_job.namespace = "apps".into();
        assert!(analyse_packaged_charts(&[elsewhere], Some(&[its_job]), now()).is_empty());
    }

    #[test]
    fn the_packaged_charts_come_first() {
        let charts = [
            chart("aaa-app", json!({})),
            chart("traefik", json!({})),
            chart("rke2-ingress-nginx", json!({})),
        ];
        let jobs = [
            job("aaa-app", 60, backoff_exceeded()),
            job("traefik", 60, backoff_exceeded()),
            job("rke2-ingress-nginx", 60, json!({"active": 1})),
        ];
        let objects: Vec<String> = analyse_packaged_charts(&charts, Some(&jobs), now())
            .into_iter()
            .map(|f| f.object)
            .collect();
        assert_eq!(
            objects,
            [
                "HelmChart kube-system/rke2-ingress-nginx",
                "HelmChart kube-system/traefik",
                "HelmChart kube-system/aaa-app"
            ]
        );
    }
}
