//! `apiserver-endpoint-stale` through the binary: the fake API server serves the `kubernetes`
//! Endpoints and EndpointSlices, and a role without the Role in default gets "not checked".

use serde_json::Value;

use crate::report::CheckReport;
use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::k3sdoctor;
use crate::support::objects::{
    NOW, kubernetes_endpoint_slice, kubernetes_endpoints, lease, server_at, write_dump,
};
use crate::support::readme::{read_only_roles_before_webhooks, readme_namespaced_role};
use crate::support::report_checks::check_run;

const CURRENT: &str = "v1.34.2+k3s1";

fn cluster(published: &[&str]) -> Vec<Value> {
    vec![
        server_at("s1", CURRENT, "10.0.0.1"),
        server_at("s2", CURRENT, "10.0.0.2"),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
        kubernetes_endpoints(published),
        kubernetes_endpoint_slice(published),
    ]
}

fn check_as(fake: &FakeApi, role: Role, extra: &[&str]) -> (i32, CheckReport) {
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW])
        .cluster(fake, role)
        .args(extra)
        .run();
    (out.code, out.json())
}

fn endpoints_run(report: &CheckReport) -> (bool, String) {
    let run = report
        .checks
        .iter()
        .find(|c| c.name == "apiserver-endpoints")
        .expect("an apiserver-endpoints check run");
    (run.ran, run.note.clone())
}

#[test]
fn a_stale_address_fires_on_both_objects_and_a_current_one_does_not() {
    let fake = FakeApi::with_objects(cluster(&["10.0.0.1", "10.0.0.2", "192.168.68.59"]));
    let (code, report) = check_as(&fake, Role::ReadOnly, &[]);
    assert_eq!(code, 0, "a warning is below the default --fail-on error");
    assert_eq!(
        report.codes(),
        [
            "warning/apiserver-endpoint-stale",
            "warning/apiserver-endpoint-stale"
        ]
    );
    let objects: Vec<&str> = report
        .findings
        .iter()
        .map(|f| f.finding.object.as_str())
        .collect();
    assert_eq!(
        objects,
        [
            "Endpoints default/kubernetes",
            "EndpointSlice default/kubernetes"
        ]
    );
    let slice = &report.findings[1].finding;
    assert!(slice.message.contains("192.168.68.59"), "{}", slice.message);
    assert!(
        slice
            .message
            .contains("v1.34.2+k3s1 copies this EndpointSlice into the k3s/apiaddresses etcd key"),
        "{}",
        slice.message
    );
    assert_eq!(endpoints_run(&report), (true, String::new()));
    k3sdoctor(["check", "--fail-on", "warning", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(1)
        .stdout_has("apiserver-endpoint-stale");

    let healthy = FakeApi::with_objects(cluster(&["10.0.0.1", "10.0.0.2"]));
    let (code, report) = check_as(&healthy, Role::ReadOnly, &["--fail-on", "warning"]);
    assert_eq!(code, 0, "{:?}", report.codes());
    assert!(report.findings.is_empty());
    assert!(endpoints_run(&report).0);
}

#[test]
fn without_the_role_in_default_the_check_is_not_checked_and_the_rest_runs() {
    let fake = FakeApi::with_objects(cluster(&["10.0.0.1", "192.168.68.59"]));
    fake.add_rbac_user("alice-token", "alice", &read_only_roles_before_webhooks());
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW])
        .kubeconfig_for(&fake.url(), "alice-token")
        .run();
    out.code(0);
    let report: CheckReport = out.json();
    let (ran, note) = endpoints_run(&report);
    assert!(!ran);
    assert!(note.starts_with("this user may not "), "{note}");
    assert!(
        note.contains("Role k3sdoctor-read-only in default"),
        "{note}"
    );
    assert!(report.findings.is_empty(), "{:?}", report.codes());
    assert!(
        report
            .checks
            .iter()
            // The Node Event checks need the same Role in default; the Secret checks the
            // opt-in role in kube-system.
            .filter(|c| ![
                "apiserver-endpoints",
                "certificates",
                "secrets-reencrypt",
                "node-passwords",
                "serving-cert-static",
                "packaged-charts",
                // Roles from before it lack its rules.
                "admission-webhooks",
            ]
            .contains(&c.name.as_str()))
            .all(|c| c.ran)
    );
    k3sdoctor(["check", "--now", NOW])
        .kubeconfig_for(&fake.url(), "alice-token")
        .run()
        .code(0)
        .stdout_has("not checked: apiserver-endpoints (this user may not get endpoints");

    // With the README's Role in default as well, it runs and finds the stale address.
    fake.add_rbac_user(
        "alice-token",
        "alice",
        &readme_namespaced_role("k3sdoctor-read-only"),
    );
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW])
        .kubeconfig_for(&fake.url(), "alice-token")
        .run();
    let report: CheckReport = out.json();
    assert!(endpoints_run(&report).0);
    assert_eq!(report.findings.len(), 2, "{:?}", report.codes());
}

#[test]
fn a_dump_with_the_objects_is_judged_and_one_without_says_not_in_dump() {
    let dir = tempfile::tempdir().unwrap();
    let with = dir.path().join("with.yaml");
    write_dump(&with, &cluster(&["10.0.0.1", "10.0.0.9"]));
    let out = k3sdoctor(["check", "-o", "json", "--from-file", with.to_str().unwrap()]).run();
    let report: CheckReport = out.json();
    assert_eq!(
        report.codes(),
        [
            // The dump has no ETCDSnapshotFiles.
            "warning/dump-incomplete",
            "warning/apiserver-endpoint-stale",
            "warning/apiserver-endpoint-stale"
        ]
    );
    let without = dir.path().join("without.yaml");
    let mut objects = cluster(&[]);
    objects.truncate(4);
    write_dump(&without, &objects);
    let out = k3sdoctor([
        "check",
        "-o",
        "json",
        "--from-file",
        without.to_str().unwrap(),
    ])
    .run();
    out.code(0);
    let report: CheckReport = out.json();
    let (ran, note) = endpoints_run(&report);
    assert!(!ran);
    assert!(note.starts_with("not in dump"), "{note}");
}

/// `serve` watches both objects: the finding appears on `/metrics` when a stale address is
/// written and goes when it is removed; a role without the Role in default leaves serve ready
/// and up, with the check not run.
#[test]
fn serve_follows_the_endpoints_and_is_up_without_the_role_in_default() {
    use crate::support::objects::fresh_cluster;
    use crate::support::scrape::{get, metrics, sample, start_serve, wait_for_sample};
    use std::time::Duration;
    const SEEN: Duration = Duration::from_secs(30);
    const SERIES: &str =
        r#"k3sdoctor_findings{code="apiserver-endpoint-stale",severity="warning"}"#;

    let fake = fresh_cluster(&["s1", "s2"]);
    fake.put(kubernetes_endpoints(&["10.0.0.1"]));
    fake.put(kubernetes_endpoint_slice(&["10.0.0.1"]));
    let (_serve, address) = start_serve(k3sdoctor(["serve"]).cluster(&fake, Role::ReadOnly));
    wait_for_sample(address, "k3sdoctor_ready", 1.0, SEEN);
    assert_eq!(sample(&metrics(address), SERIES), None);
    fake.put(kubernetes_endpoint_slice(&["10.0.0.1", "192.168.68.59"]));
    wait_for_sample(address, SERIES, 1.0, SEEN);
    fake.put(kubernetes_endpoints(&["10.0.0.1", "192.168.68.59"]));
    wait_for_sample(address, SERIES, 2.0, SEEN);
    fake.put(kubernetes_endpoint_slice(&["10.0.0.1"]));
    fake.put(kubernetes_endpoints(&["10.0.0.1"]));
    assert!(
        crate::support::wait::wait_for(SEEN, || sample(&metrics(address), SERIES).is_none()),
        "{}",
        metrics(address)
    );

    let limited = fresh_cluster(&["s1"]);
    limited.put(kubernetes_endpoints(&["10.0.0.1", "192.168.68.59"]));
    limited.add_rbac_user("dave-token", "dave", &read_only_roles_before_webhooks());
    let (_serve, address) =
        start_serve(k3sdoctor(["serve"]).kubeconfig_for(&limited.url(), "dave-token"));
    wait_for_sample(address, "k3sdoctor_ready", 1.0, SEEN);
    wait_for_sample(address, "k3sdoctor_up", 1.0, SEEN);
    let mut report = Value::Null;
    assert!(crate::support::wait::wait_for(SEEN, || {
        report = get(address, "/report")
            .and_then(|(_, body)| serde_json::from_str(&body).ok())
            .unwrap_or(Value::Null);
        report["checks"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["name"] == "apiserver-endpoints"))
    }));
    let run = check_run(&report, "apiserver-endpoints");
    assert_eq!(run["ran"], false, "{run}");
    assert!(
        run["note"]
            .as_str()
            .unwrap()
            .starts_with("this user may not list"),
        "{run}"
    );
    assert_eq!(sample(&metrics(address), SERIES), None);
}

/// A fleet runs the same read and analyser per cluster: the cluster with a stale address has
/// the finding, one whose user lacks the Role in default is still checked (not unreadable).
#[test]
fn a_fleet_reports_it_per_cluster_and_a_missing_role_costs_only_that_check() {
    use crate::support::fleet::{FleetContext, write_fleet_kubeconfig};
    let stale = FakeApi::with_objects(cluster(&["10.0.0.1", "192.168.68.59"]));
    let limited = FakeApi::with_objects(cluster(&["10.0.0.1", "192.168.68.59"]));
    limited.add_rbac_user("erin-token", "erin", &read_only_roles_before_webhooks());
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = write_fleet_kubeconfig(
        dir.path(),
        "fleet.yaml",
        &[
            FleetContext {
                name: "prod-stale",
                server: &stale.url(),
                token: Role::ReadOnly.token(),
                ca_pem: None,
            },
            FleetContext {
                name: "lab-limited",
                server: &limited.url(),
                token: "erin-token",
                ca_pem: None,
            },
        ],
    );
    let out = k3sdoctor(["check", "--all-contexts", "-o", "json", "--now", NOW])
        .kubeconfig(&kubeconfig)
        .run();
    out.code(0);
    let report: Value = out.json();
    let entry = |context: &str| {
        report["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["context"] == context)
            .unwrap()
            .clone()
    };
    let stale_entry = entry("prod-stale");
    assert_eq!(stale_entry["outcome"], "checked");
    let codes: Vec<&str> = stale_entry["report"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes,
        ["apiserver-endpoint-stale", "apiserver-endpoint-stale"]
    );
    let limited_entry = entry("lab-limited");
    assert_eq!(limited_entry["outcome"], "checked", "{limited_entry}");
    let run = check_run(&limited_entry["report"], "apiserver-endpoints").clone();
    assert_eq!(run["ran"], false, "{run}");
}
