//! Packaged charts on the real API server: a HelmChart CRD shaped like helm-controller's
//! (tests/fixtures/helm/crd-helmchart.yaml), HelmCharts and their `helm-install-*` Jobs created
//! as admin with the status helm-controller and the Job controller would write (through the
//! status subresources), read by `check` with the README's read-only roles: without the Role
//! in kube-system not checked, with it the failed and the stuck install are reported.

use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use crate::common::{run_as, viewer_with_the_read_only_role};
use crate::report::CheckReport;
use crate::support::envtest::{EnvTest, User};
use crate::support::harness::repo_path;
use crate::support::readme::{readme_namespaced_role, readme_role_in};

const CHARTS: &str = "/apis/helm.cattle.io/v1/namespaces/kube-system/helmcharts";
const JOBS: &str = "/apis/batch/v1/namespaces/kube-system/jobs";
const LABEL: &str = "helmcharts.helm.cattle.io/chart";

fn at(offset: SignedDuration) -> String {
    (Timestamp::now() + offset)
        .round(jiff::Unit::Second)
        .unwrap()
        .to_string()
}

/// The HelmChart CRD, installed and served (the benchmark uses it too).
pub(crate) fn install_crd(env: &EnvTest) {
    let admin = env.admin();
    let text =
        std::fs::read_to_string(repo_path("tests/fixtures/helm/crd-helmchart.yaml")).unwrap();
    let crd: Value = serde_yaml_ng::from_str(&text).unwrap();
    admin.create(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        &crd,
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while admin
        .request("GET", CHARTS, "application/json", None)
        .is_err()
    {
        assert!(Instant::now() < deadline, "the HelmChart CRD never served");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A HelmChart with the status helm-controller's `OnChange` writes for a created Job.
fn chart(env: &EnvTest, name: &str) {
    let admin = env.admin();
    let mut created = admin.create(
        CHARTS,
        &json!({"apiVersion": "helm.cattle.io/v1", "kind": "HelmChart",
                "metadata": {"name": name, "namespace": "kube-system"},
                "spec": {"chart": name, "repo": "https://charts.example.org"}}),
    );
    created["status"] = json!({"jobName": format!("helm-install-{name}"), "conditions": [
        {"type": "JobCreated", "status": "True", "reason": "Job created",
         "message": format!("Applying HelmChart using Job kube-system/helm-install-{name}")},
        {"type": "Failed", "status": "False"}]});
    admin
        .replace(&format!("{CHARTS}/{name}/status"), &created)
        .unwrap_or_else(|e| panic!("status of HelmChart {name}: {e:?}"));
}

/// helm-controller's install Job for `chart`, then `status` as the Job controller writes it.
fn job(env: &EnvTest, chart: &str, status: Value) {
    let admin = env.admin();
    let mut created = admin.create(
        JOBS,
        &json!({"apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": format!("helm-install-{chart}"), "namespace": "kube-system",
                             "labels": {LABEL: chart}},
                "spec": {"backoffLimit": 1000, "template": {
                    "metadata": {"labels": {LABEL: chart}},
                    "spec": {"restartPolicy": "OnFailure",
                             "containers": [{"name": "helm", "image": "rancher/klipper-helm:v0.9.4-build20250113"}]}}}}),
    );
    created["status"] = status;
    admin
        .replace(&format!("{JOBS}/helm-install-{chart}/status"), &created)
        .unwrap_or_else(|e| panic!("status of Job helm-install-{chart}: {e:?}"));
}

fn run_of(report: &CheckReport) -> (bool, String) {
    let run = report
        .checks
        .iter()
        .find(|c| c.name == "packaged-charts")
        .unwrap();
    (run.ran, run.note.clone())
}

#[test]
fn real_a_failed_and_a_stuck_install_are_reported_with_the_read_only_roles() {
    let Some(env) = EnvTest::start("real_packaged_charts") else {
        return;
    };
    install_crd(&env);
    for name in ["traefik", "podinfo", "metrics-server"] {
        chart(&env, name);
    }
    job(
        &env,
        "traefik",
        json!({"startTime": at(-SignedDuration::from_mins(50)), "failed": 6,
               "conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                   "message": "Job has reached the specified backoff limit",
                   "lastProbeTime": at(-SignedDuration::from_mins(5)),
                   "lastTransitionTime": at(-SignedDuration::from_mins(5))}]}),
    );
    job(
        &env,
        "podinfo",
        json!({"startTime": at(-SignedDuration::from_mins(40)), "active": 1, "failed": 2}),
    );
    job(
        &env,
        "metrics-server",
        json!({"startTime": at(-SignedDuration::from_hours(3)),
               "completionTime": at(-SignedDuration::from_hours(3) + SignedDuration::from_secs(30)),
               "succeeded": 1,
               "conditions": [{"type": "Complete", "status": "True",
                   "lastProbeTime": at(-SignedDuration::from_hours(2)),
                   "lastTransitionTime": at(-SignedDuration::from_hours(2))}]}),
    );

    // The Role in kube-system as granted before packaged-charts (the Leases alone), the
    // ClusterRole and the Role in default: not checked, every other check runs.
    viewer_with_the_read_only_role(&env);
    let admin = env.admin();
    let in_kube_system = readme_role_in("k3sdoctor-read-only", "kube-system");
    let cut = in_kube_system
        .find("  # helmchart-failed and helmchart-stuck:")
        .expect("the chart rules");
    admin.apply_yaml(&in_kube_system[..cut]);
    admin.apply_yaml(&readme_namespaced_role("k3sdoctor-read-only"));
    admin.bind_in("default", "k3sdoctor-read-only", "viewer");
    let args = ["check", "-o", "json", "--fail-on", "never"];
    let report: CheckReport = run_as(&env, User::Viewer, &args).json();
    let (ran, note) = run_of(&report);
    assert!(!ran);
    assert_eq!(
        note,
        "needs list helmcharts and jobs in kube-system: `k3sdoctor rbac read-only` prints the role"
    );

    admin.apply_yaml(&in_kube_system);
    let out = run_as(&env, User::Viewer, &args);
    assert!(!out.stderr.contains("forbidden"), "{}", out.stderr);
    let report: CheckReport = out.json();
    assert_eq!(run_of(&report), (true, String::new()));
    let found: Vec<(String, String, String)> = report
        .findings
        .iter()
        .map(|f| &f.finding)
        .filter(|f| f.code.starts_with("helmchart-"))
        .map(|f| (f.severity.clone(), f.code.clone(), f.object.clone()))
        .collect();
    assert_eq!(
        found,
        [
            (
                "error".to_string(),
                "helmchart-failed".to_string(),
                "HelmChart kube-system/traefik".to_string()
            ),
            (
                "warning".to_string(),
                "helmchart-stuck".to_string(),
                "HelmChart kube-system/podinfo".to_string()
            ),
        ],
        "{:?}",
        report.codes()
    );
}
