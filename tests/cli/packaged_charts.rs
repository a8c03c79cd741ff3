//! `packaged-charts` through the binary: the fake API server serves helm.cattle.io/v1
//! HelmCharts and batch/v1 Jobs in kube-system; a failed and a stuck install are reported, k3s's
//! charts first, a healthy one is not; a user without the Role in kube-system, and a cluster
//! without the HelmChart CRD, get "not checked"; dumps with and without them; odd objects
//! never panic.

use serde_json::{Value, json};

use crate::report::CheckReport;
use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::k3sdoctor;
use crate::support::objects::{NOW, lease, server_at, write_dump};
use crate::support::readme::{readme_namespaced_role, readme_read_only_roles, readme_role_in};

const V: &str = "v1.31.5+k3s1";
const LABEL: &str = "helmcharts.helm.cattle.io/chart";

fn chart(name: &str) -> Value {
    json!({
        "apiVersion": "helm.cattle.io/v1",
        "kind": "HelmChart",
        "metadata": {"name": name, "namespace": "kube-system"},
        "spec": {"chart": format!("https://%{{KUBERNETES_API}}%/static/charts/{name}.tgz")},
        "status": {"jobName": format!("helm-install-{name}"), "conditions": [
            {"type": "JobCreated", "status": "True", "reason": "Job created",
             "message": format!("Applying HelmChart using Job kube-system/helm-install-{name}")},
            {"type": "Failed", "status": "False"}]}
    })
}

/// helm-controller's install Job for `chart`, started at `start`, with `status`.
fn job(chart: &str, start: &str, mut status: Value) -> Value {
    status["startTime"] = json!(start);
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": format!("helm-install-{chart}"), "namespace": "kube-system",
                     "labels": {LABEL: chart}},
        "spec": {"backoffLimit": 1000},
        "status": status
    })
}

fn cluster() -> Vec<Value> {
    vec![
        server_at("s1", V, "10.0.0.1"),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
        chart("podinfo"),
        chart("traefik"),
        chart("metrics-server"),
        // Failed 4 minutes before NOW, after 6 pods.
        job(
            "traefik",
            "2024-05-31T11:00:00Z",
            json!({"failed": 6, "conditions": [{"type": "Failed", "status": "True",
                "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit",
                "lastTransitionTime": "2024-05-31T12:06:40Z"}]}),
        ),
        // Running for 40 minutes at NOW.
        job(
            "podinfo",
            "2024-05-31T11:30:40Z",
            json!({"active": 1, "failed": 3}),
        ),
        // Done long ago: healthy.
        job(
            "metrics-server",
            "2024-05-30T09:00:00Z",
            json!({"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}),
        ),
        // Not helm-controller's: not listed (the label selector), not judged.
        json!({"apiVersion": "batch/v1", "kind": "Job",
               "metadata": {"name": "backup", "namespace": "kube-system"},
               "status": {"active": 1, "startTime": "2024-05-30T00:00:00Z"}}),
    ]
}

fn run_named<'a>(report: &'a CheckReport, name: &str) -> (bool, &'a str) {
    let run = report
        .checks
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("a {name} check run"));
    (run.ran, run.note.as_str())
}

fn charts_of(report: &CheckReport) -> Vec<(String, String)> {
    report
        .findings
        .iter()
        .filter(|f| f.finding.code.starts_with("helmchart-"))
        .map(|f| (f.finding.code.clone(), f.finding.object.clone()))
        .collect()
}

#[test]
fn a_failed_and_a_stuck_install_are_reported_with_two_requests() {
    let fake = FakeApi::with_objects(cluster());
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW, "-v"])
        .cluster(&fake, Role::ReadOnly)
        .run();
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("list helmcharts.helm.cattle.io in kube-system: 3 items"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(&format!(
            "list jobs.batch in kube-system labelled {LABEL}: 3 items"
        )),
        "{}",
        out.stderr
    );
    let report: CheckReport = out.json();
    assert_eq!(
        charts_of(&report),
        [
            (
                "helmchart-failed".to_string(),
                "HelmChart kube-system/traefik".to_string()
            ),
            (
                "helmchart-stuck".to_string(),
                "HelmChart kube-system/podinfo".to_string()
            ),
        ]
    );
    let failed = &report
        .findings
        .iter()
        .find(|f| f.finding.code == "helmchart-failed")
        .unwrap()
        .finding;
    assert_eq!(failed.severity, "error");
    assert!(
        failed.message.contains(
            "the install Job helm-install-traefik failed 4m ago after 6 failed pods (BackoffLimitExceeded"
        ),
        "{}",
        failed.message
    );
    assert!(
        failed
            .remediation
            .starts_with("kubectl -n kube-system logs job/helm-install-traefik;"),
        "{}",
        failed.remediation
    );
    assert!(
        failed
            .remediation
            .contains("kubectl -n kube-system delete job helm-install-traefik")
    );
    let stuck = &report
        .findings
        .iter()
        .find(|f| f.finding.code == "helmchart-stuck")
        .unwrap()
        .finding;
    assert_eq!(stuck.severity, "warning");
    assert!(
        stuck.message.contains("has been running for 40m"),
        "{}",
        stuck.message
    );
    assert!(run_named(&report, "packaged-charts").0);
    // Exactly the two lists, once each.
    let mut reads: Vec<String> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path.contains("/helmcharts") || r.path.contains("/jobs"))
        .map(|r| r.path)
        .collect();
    reads.sort();
    assert_eq!(
        reads,
        [
            "/apis/batch/v1/namespaces/kube-system/jobs",
            "/apis/helm.cattle.io/v1/namespaces/kube-system/helmcharts"
        ]
    );
}

#[test]
fn healthy_charts_give_no_finding() {
    let mut objects = cluster();
    objects
        .retain(|o| o["kind"] != "Job" || o["metadata"]["name"] == "helm-install-metrics-server");
    objects.retain(|o| o["kind"] != "HelmChart" || o["metadata"]["name"] == "metrics-server");
    let fake = FakeApi::with_objects(objects);
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    let report: CheckReport = out.json();
    assert!(charts_of(&report).is_empty(), "{:?}", report.codes());
    assert_eq!(run_named(&report, "packaged-charts"), (true, ""));
}

#[test]
fn without_the_chart_rules_in_kube_system_packaged_charts_is_not_checked() {
    let fake = FakeApi::with_objects(cluster());
    // The Role in kube-system as granted before packaged-charts: the Leases alone.
    let charts = "  # helmchart-failed and helmchart-stuck:";
    let roles = readme_read_only_roles();
    let cut = roles.find(charts).expect("the chart rules");
    fake.add_rbac_user("alice-token", "alice", &roles[..cut]);
    fake.add_rbac_user(
        "alice-token",
        "alice",
        &readme_namespaced_role("k3sdoctor-read-only"),
    );
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW])
        .kubeconfig_for(&fake.url(), "alice-token")
        .run();
    out.code(0);
    let report: CheckReport = out.json();
    assert_eq!(
        run_named(&report, "packaged-charts"),
        (
            false,
            "needs list helmcharts and jobs in kube-system: `k3sdoctor rbac read-only` prints the role"
        )
    );
    assert!(charts_of(&report).is_empty());
    // Every other check still ran.
    assert!(
        report
            .checks
            .iter()
            // The Secret checks need the opt-in role, which this user lacks too.
            .filter(
                |c| !["packaged-charts", "node-passwords", "serving-cert-static"]
                    .contains(&c.name.as_str())
            )
            .all(|c| c.ran),
        "{:?}",
        report.checks
    );

    fake.add_rbac_user(
        "alice-token",
        "alice",
        &readme_role_in("k3sdoctor-read-only", "kube-system"),
    );
    fake.clear_requests();
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW])
        .kubeconfig_for(&fake.url(), "alice-token")
        .run();
    let report: CheckReport = out.json();
    assert!(run_named(&report, "packaged-charts").0);
    assert_eq!(charts_of(&report).len(), 2, "{:?}", report.codes());
    assert!(
        // Secrets are the opt-in role's (`rbac secrets-metadata`), which alice lacks.
        fake.requests()
            .iter()
            .all(|r| r.status != 403 || r.path == "/api/v1/namespaces/kube-system/secrets"),
        "the Role in kube-system lacks something"
    );
}

#[test]
fn without_the_helmchart_crd_packaged_charts_is_not_checked() {
    let fake = FakeApi::with_objects(cluster());
    fake.set_helm_crd_installed(false);
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    let report: CheckReport = out.json();
    assert_eq!(
        run_named(&report, "packaged-charts"),
        (
            false,
            "the HelmChart CRD is not installed (helm-controller disabled)"
        )
    );
    assert!(charts_of(&report).is_empty());
}

#[test]
fn odd_objects_are_tolerated_live_and_in_a_dump() {
    let odd = vec![
        server_at("s1", V, "10.0.0.1"),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
        json!({"apiVersion": "helm.cattle.io/v1", "kind": "HelmChart",
               "metadata": {"name": "traefik", "namespace": "kube-system"},
               "status": {"conditions": "nonsense", "jobName": 7}}),
        json!({"apiVersion": "batch/v1", "kind": "Job",
               "metadata": {"name": "helm-install-traefik", "namespace": "kube-system",
                            "labels": {LABEL: "traefik"}},
               "status": {"active": "many", "conditions": {"x": 1}, "startTime": "yesterday"}}),
    ];
    let fake = FakeApi::with_objects(odd.clone());
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    assert!(matches!(out.code, 0 | 1), "{}", out.stderr);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    let report: CheckReport = out.json();
    assert!(run_named(&report, "packaged-charts").0);
    assert!(charts_of(&report).is_empty(), "{:?}", report.codes());

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("odd.yaml");
    let mut objects = odd;
    // Without a name: the dump reader skips it (as any nameless object).
    objects.push(
        json!({"apiVersion": "helm.cattle.io/v1", "kind": "HelmChart",
                        "metadata": {"namespace": "kube-system"}, "status": [1, 2]}),
    );
    write_dump(&file, &objects);
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW, "--from-file"])
        .args(&[file.to_str().unwrap()])
        .run();
    assert!(matches!(out.code, 0 | 1), "{}", out.stderr);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    let report: CheckReport = out.json();
    assert!(run_named(&report, "packaged-charts").0);
}

#[test]
fn a_dump_with_charts_is_judged_and_one_without_says_not_in_dump() {
    let dir = tempfile::tempdir().unwrap();
    let with = dir.path().join("with.yaml");
    write_dump(&with, &cluster());
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW, "--from-file"])
        .args(&[with.to_str().unwrap()])
        .run();
    let report: CheckReport = out.json();
    assert_eq!(charts_of(&report).len(), 2, "{:?}", report.codes());
    assert!(run_named(&report, "packaged-charts").0);

    // Charts without their Jobs: the charts' own conditions only, and a note saying so.
    let charts_only = dir.path().join("charts-only.yaml");
    let mut objects = cluster();
    objects.retain(|o| o["kind"] != "Job");
    write_dump(&charts_only, &objects);
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW, "--from-file"])
        .args(&[charts_only.to_str().unwrap()])
        .run();
    let report: CheckReport = out.json();
    assert!(charts_of(&report).is_empty(), "{:?}", report.codes());
    assert_eq!(
        run_named(&report, "packaged-charts"),
        (
            true,
            "Jobs in kube-system not in dump: helmchart-stuck not judged"
        )
    );

    let without = dir.path().join("without.yaml");
    let mut objects = cluster();
    objects.retain(|o| o["kind"] != "Job" && o["kind"] != "HelmChart");
    write_dump(&without, &objects);
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW, "--from-file"])
        .args(&[without.to_str().unwrap()])
        .run();
    let report: CheckReport = out.json();
    assert_eq!(
        run_named(&report, "packaged-charts"),
        (false, "not in dump")
    );
}

/// troubleshoot writes Jobs as a per-namespace List (`cluster-resources/jobs/<ns>.json`) and a
/// namespaced custom resource as a bare array in a folder per CRD
/// (`custom-resources/<crd>/<ns>.json`, replicatedhq/troubleshoot `pkg/collect/cluster_resources.go`).
#[test]
fn a_troubleshoot_bundle_with_jobs_and_helmcharts_is_judged() {
    use crate::support::bundles::{self, TROUBLESHOOT_TOP, split_cluster};
    let objects = cluster();
    let of = |kind: &str| -> Vec<Value> {
        objects
            .iter()
            .filter(|o| o["kind"] == kind)
            .cloned()
            .collect()
    };
    let bundle = bundles::troubleshoot(&split_cluster())
        .json(
            &format!("{TROUBLESHOOT_TOP}/cluster-resources/jobs/kube-system.json"),
            &json!({"kind": "JobList", "apiVersion": "batch/v1", "items": of("Job")}),
        )
        .json(
            &format!(
                "{TROUBLESHOOT_TOP}/cluster-resources/custom-resources/helmcharts.helm.cattle.io/kube-system.json"
            ),
            &Value::Array(of("HelmChart")),
        );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bundle.tar");
    std::fs::write(&path, bundle.tar()).unwrap();
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW, "--from-file"])
        .args(&[path.to_str().unwrap()])
        .run();
    let report: CheckReport = out.json();
    assert!(
        run_named(&report, "packaged-charts").0,
        "{:?}",
        report.checks
    );
    assert_eq!(charts_of(&report).len(), 2, "{:?}", report.codes());

    // The same bundle without them: not in dump.
    let path = dir.path().join("plain.tar");
    std::fs::write(&path, bundles::troubleshoot(&split_cluster()).tar()).unwrap();
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW, "--from-file"])
        .args(&[path.to_str().unwrap()])
        .run();
    let report: CheckReport = out.json();
    assert_eq!(
        run_named(&report, "packaged-charts"),
        (false, "not in dump")
    );
}
