//! Suppressions on a real kube-apiserver: simulated servers on a release affected by
//! k3s-io/k3s#10046 elect for real; the only finding is `version-affected`, which the
//! shipped CronJob's `check --fail-on warning` ignores and `serve` keeps out of
//! `k3sdoctor_findings`.

use std::time::Duration;

use serde_json::Value;

use crate::common::{CATCH_UP, run_as, until_exit, viewer_with_every_read_only_right};
use crate::support::envtest::servers::SimCluster;
use crate::support::envtest::{EnvTest, User};
use crate::support::harness::k3sdoctor;
use crate::support::manifests::yaml_documents;
use crate::support::scrape::{metrics, sample, start_serve, wait_for_sample};
use crate::support::wait::wait_for;

fn codes(report: &Value) -> Vec<(String, bool)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["ignored"].as_bool().unwrap_or(false),
            )
        })
        .collect()
}

/// The CronJob's own arguments, as deploy/k3sdoctor-cronjob.yaml ships them.
fn cronjob_args() -> Vec<String> {
    let docs = yaml_documents("deploy/k3sdoctor-cronjob.yaml");
    let cron = docs.iter().find(|d| d["kind"] == "CronJob").unwrap();
    cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn real_the_cronjob_ignores_version_affected_and_serve_does_not_alert_on_it() {
    let Some(env) =
        EnvTest::start("real_the_cronjob_ignores_version_affected_and_serve_does_not_alert_on_it")
    else {
        return;
    };
    let _cluster = SimCluster::start(&env, "k3s", "v1.29.4+k3s1", 3, &[]);
    viewer_with_every_read_only_right(&env);
    // Settled once one server holds both locks and the member controller has put its
    // finalizers on the Nodes: only version-affected, a warning, which fails the run.
    until_exit(&env, &["check", "--fail-on", "error"], 0);
    let mut last = Value::Null;
    let settled = wait_for(CATCH_UP, || {
        let plain = run_as(
            &env,
            User::Viewer,
            &["check", "-o", "json", "--fail-on", "warning"],
        );
        last = plain.json();
        plain.code == 1 && codes(&last) == [("version-affected".to_string(), false)]
    });
    assert!(settled, "{last}");

    let args = cronjob_args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_as(&env, User::Viewer, &args);
    out.code(0);
    let report: Value = out.json();
    assert_eq!(codes(&report), [("version-affected".to_string(), true)]);
    assert_eq!(report["summary"]["ignored"], 1);

    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.yaml");
    std::fs::write(&config, "ignore:\n  - version-affected\n").unwrap();
    let (serve, address) = start_serve(
        k3sdoctor(["serve", "--config", config.to_str().unwrap()])
            .kubeconfig(&env.kubeconfig(User::Viewer)),
    );
    let seen = Duration::from_secs(30);
    wait_for_sample(address, "k3sdoctor_ready", 1.0, seen);
    wait_for_sample(
        address,
        r#"k3sdoctor_findings_ignored{code="version-affected",severity="warning"}"#,
        1.0,
        seen,
    );
    let scrape = metrics(address);
    assert_eq!(
        sample(
            &scrape,
            r#"k3sdoctor_findings{code="version-affected",severity="warning"}"#
        ),
        None,
        "{scrape}"
    );
    serve.signal_and_wait(libc::SIGTERM).code(0);
}
