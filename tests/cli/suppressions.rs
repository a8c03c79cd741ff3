//! Suppressions: `--ignore CODE[=OBJECT]` and the config file's `ignore:` list, honoured by
//! `check`, its fleets and `serve`. An ignored finding stays in JSON (`ignored: true`) and
//! never counts toward the exit code, the summary counts or the alerting metric.

use serde_json::Value;

use crate::support::fake_api::{FakeApi, Role};
use crate::support::fleet::{FleetContext, write_fleet_kubeconfig};
use crate::support::harness::k3sdoctor;
use crate::support::objects::{NOW, NodeSpec, fresh_cluster, lease, node, server};
use crate::support::scrape::{self, metrics, sample, start_serve};

/// k3s-io/k3s#10046 affects it: healthy, but `version-affected` (a warning) stays until the
/// upgrade, so the CronJob's `check --fail-on warning` fails every time.
const AFFECTED: &str = "v1.29.4+k3s1";

fn affected_healthy() -> FakeApi {
    FakeApi::with_objects(vec![
        server("s1", AFFECTED),
        server("s2", AFFECTED),
        server("s3", AFFECTED),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
    ])
}

fn findings(report: &Value) -> Vec<(String, bool)> {
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

#[test]
fn an_ignored_finding_is_listed_marked_and_never_fails_the_run() {
    let fake = affected_healthy();
    let check = |extra: &[&str]| {
        k3sdoctor(["check", "--fail-on", "warning", "--now", NOW])
            .args(extra)
            .cluster(&fake, Role::ReadOnly)
            .run()
    };
    // Without the suppression: the CronJob's failure.
    check(&[]).code(1);
    let out = check(&["--ignore", "version-affected", "-o", "json"]);
    out.code(0);
    let report: Value = out.json();
    assert_eq!(findings(&report), [("version-affected".to_string(), true)]);
    assert_eq!(report["summary"]["warnings"], 0);
    assert_eq!(report["summary"]["ignored"], 1);
    crate::support::harness::assert_matches_schema(&report, "CheckReport");
    // The table says it was matched, and how many were left out of the counts.
    check(&["--ignore", "version-affected"])
        .code(0)
        .stdout_has("IGNORED version-affected")
        .stdout_has("healthy: no findings; 1 ignored (--ignore or the config file)");
    // Another code, or the code on another object, suppresses nothing.
    check(&["--ignore", "lease-split"]).code(1);
    check(&["--ignore", "version-affected=node/s9"]).code(1);
}

#[test]
fn an_object_narrows_the_suppression_to_that_object() {
    // s2 holds both locks but is not Ready: lease-holder-not-ready on each Lease (errors).
    let fake = FakeApi::with_objects(vec![
        server("s1", AFFECTED),
        node(&NodeSpec {
            name: "s2",
            hostname: "s2",
            version: AFFECTED,
            prog: "k3s",
            server: true,
            ready: false,
        }),
        lease("k3s", "s2", 1),
        lease("k3s-etcd", "s2", 1),
    ]);
    let check = |extra: &[&str]| {
        k3sdoctor(["check", "-o", "json", "--now", NOW])
            .args(extra)
            .cluster(&fake, Role::ReadOnly)
            .run()
    };
    let plain: Value = check(&[]).json();
    assert!(
        findings(&plain)
            .iter()
            .any(|(c, ignored)| c == "lease-holder-not-ready" && !ignored),
        "{plain}"
    );
    // One finding per lock: naming the k3s Lease leaves the k3s-etcd one counted.
    let out = check(&["--ignore", "lease-holder-not-ready=lease/k3s"]);
    out.code(1);
    let report: Value = out.json();
    let objects: Vec<(String, bool)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "lease-holder-not-ready")
        .map(|f| {
            (
                f["object"].as_str().unwrap().to_string(),
                f["ignored"].as_bool().unwrap_or(false),
            )
        })
        .collect();
    assert_eq!(
        objects,
        [
            ("Lease kube-system/k3s".to_string(), true),
            ("Lease kube-system/k3s-etcd".to_string(), false)
        ]
    );
    let both = [
        "--ignore",
        "lease-holder-not-ready=lease/k3s",
        "--ignore",
        "lease-holder-not-ready=Lease kube-system/k3s-etcd",
    ];
    let report: Value = check(&both).json();
    for (code, ignored) in findings(&report) {
        assert_eq!(ignored, code == "lease-holder-not-ready", "{code}");
    }
}

#[test]
fn the_config_file_at_the_default_path_or_given_by_config_is_honoured() {
    let fake = affected_healthy();
    let run = || {
        k3sdoctor(["check", "--fail-on", "warning", "--now", NOW]).cluster(&fake, Role::ReadOnly)
    };
    // ~/.config/k3sdoctor/config.yaml (no XDG_CONFIG_HOME).
    let home_run = run();
    let dir = home_run.home().join(".config/k3sdoctor");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.yaml"), "ignore:\n  - version-affected\n").unwrap();
    home_run.run().code(0).stdout_has("1 ignored");
    // $XDG_CONFIG_HOME/k3sdoctor/config.yaml.
    let xdg = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(xdg.path().join("k3sdoctor")).unwrap();
    std::fs::write(
        xdg.path().join("k3sdoctor/config.yaml"),
        "ignore: [version-affected]\n",
    )
    .unwrap();
    run()
        .env("XDG_CONFIG_HOME", xdg.path().to_str().unwrap())
        .run()
        .code(0);
    // --config PATH.
    let file = xdg.path().join("mine.yaml");
    std::fs::write(&file, "ignore:\n  - version-affected=server Nodes\n").unwrap();
    run()
        .args(&["--config", file.to_str().unwrap()])
        .run()
        .code(0);
}

#[test]
fn a_bad_suppression_is_refused_with_one_line_and_exit_2() {
    let fake = affected_healthy();
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("absent.yaml");
    let typo = dir.path().join("typo.yaml");
    std::fs::write(&typo, "ignores: [version-affected]\n").unwrap();
    let unknown = dir.path().join("unknown.yaml");
    std::fs::write(&unknown, "ignore: [version-afected]\n").unwrap();
    for (args, says) in [
        (
            vec!["--ignore", "version-afected"],
            "'version-afected' is not a finding code",
        ),
        (vec!["--ignore", "version-affected="], "names no object"),
        (
            vec!["--config", missing.to_str().unwrap()],
            "cannot read config file",
        ),
        (
            vec!["--config", typo.to_str().unwrap()],
            "unknown field `ignores`",
        ),
        (
            vec!["--config", unknown.to_str().unwrap()],
            "'version-afected' is not a finding code",
        ),
    ] {
        let out = k3sdoctor(["check", "--now", NOW])
            .args(&args)
            .cluster(&fake, Role::ReadOnly)
            .run();
        out.code(2).one_line_error().stderr_has(says);
        assert!(out.stdout.is_empty(), "{args:?}: {}", out.stdout);
    }
}

#[test]
fn a_fleet_counts_no_ignored_finding() {
    let a = affected_healthy();
    let b = affected_healthy();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = write_fleet_kubeconfig(
        dir.path(),
        "fleet.yaml",
        &[
            FleetContext {
                name: "one",
                server: &a.url(),
                token: Role::ReadOnly.token(),
                ca_pem: None,
            },
            FleetContext {
                name: "two",
                server: &b.url(),
                token: Role::ReadOnly.token(),
                ca_pem: None,
            },
        ],
    );
    let fleet = |extra: &[&str]| {
        k3sdoctor([
            "check",
            "--all-contexts",
            "--fail-on",
            "warning",
            "--now",
            NOW,
        ])
        .args(extra)
        .kubeconfig(&kubeconfig)
        .run()
    };
    fleet(&[]).code(1);
    let out = fleet(&["--ignore", "version-affected", "-o", "json"]);
    out.code(0);
    let report: Value = out.json();
    for entry in report["entries"].as_array().unwrap() {
        assert_eq!(
            findings(&entry["report"]),
            [("version-affected".to_string(), true)],
            "{entry}"
        );
    }
    fleet(&["--ignore", "version-affected"]).code(0);
}

#[test]
fn serve_keeps_ignored_findings_out_of_the_alerting_metric() {
    let fake = fresh_cluster(&["s1", "s2", "s3"]);
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.yaml");
    std::fs::write(&config, "ignore:\n  - version-affected\n").unwrap();
    let (serve, address) = start_serve(
        k3sdoctor(["serve", "--config", config.to_str().unwrap()]).cluster(&fake, Role::ReadOnly),
    );
    let ignored = r#"k3sdoctor_findings_ignored{code="version-affected",severity="warning"}"#;
    scrape::wait_for_sample(address, ignored, 1.0, std::time::Duration::from_secs(30));
    let scrape = metrics(address);
    assert_eq!(
        sample(
            &scrape,
            r#"k3sdoctor_findings{code="version-affected",severity="warning"}"#
        ),
        None,
        "{scrape}"
    );
    let report = scrape::get(address, "/report").expect("/report answers").1;
    let report: Value = serde_json::from_str(&report).unwrap();
    assert_eq!(findings(&report), [("version-affected".to_string(), true)]);
    serve.signal_and_wait(libc::SIGTERM).code(0);
}

#[test]
fn serve_refuses_a_bad_config_before_listening() {
    let fake = fresh_cluster(&["s1"]);
    let out = k3sdoctor(["serve", "--listen", "127.0.0.1:0", "--ignore", "nope"])
        .cluster(&fake, Role::ReadOnly)
        .run();
    out.code(2)
        .one_line_error()
        .stderr_has("'nope' is not a finding code");
}

/// The serve Deployment's layout, reproduced: `XDG_CONFIG_HOME` as the manifest sets it (here a
/// temporary directory for /etc) and the ConfigMap's key where it mounts it; without the file
/// (the ConfigMap is optional) serve starts and ignores nothing.
#[test]
fn serve_reads_the_config_where_the_deployment_mounts_it() {
    let fake = fresh_cluster(&["s1", "s2", "s3"]);
    let etc = tempfile::tempdir().unwrap();
    let ignored = r#"k3sdoctor_findings_ignored{code="version-affected",severity="warning"}"#;
    let counted = r#"k3sdoctor_findings{code="version-affected",severity="warning"}"#;
    let seen = std::time::Duration::from_secs(30);

    let (serve, address) = start_serve(
        k3sdoctor(["serve"])
            .env("XDG_CONFIG_HOME", etc.path().to_str().unwrap())
            .cluster(&fake, Role::ReadOnly),
    );
    scrape::wait_for_sample(address, counted, 1.0, seen);
    serve.signal_and_wait(libc::SIGTERM).code(0);

    std::fs::create_dir_all(etc.path().join("k3sdoctor")).unwrap();
    std::fs::write(
        etc.path().join("k3sdoctor/config.yaml"),
        "ignore: [version-affected]",
    )
    .unwrap();
    let (serve, address) = start_serve(
        k3sdoctor(["serve"])
            .env("XDG_CONFIG_HOME", etc.path().to_str().unwrap())
            .cluster(&fake, Role::ReadOnly),
    );
    scrape::wait_for_sample(address, ignored, 1.0, seen);
    assert_eq!(sample(&metrics(address), counted), None);
    serve.signal_and_wait(libc::SIGTERM).code(0);
}
