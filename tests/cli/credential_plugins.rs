//! Exec credential plugins against the fake API server: a hanging plugin is bounded by
//! `--request-timeout` and killed with the helpers it forked, in one-shot runs, fleets and
//! `serve`; a failing or babbling plugin's token, stdout and exec `env` values never reach
//! output or logs, at any verbosity. The same faults against the real API server are in
//! `tests/real_apiserver/credential_plugins.rs`.

use std::time::Duration;

use serde_json::Value;

use crate::support::fake_api::{FakeApi, Role};
use crate::support::faults::exec_plugin::{
    ExecPlugin, FAILING_TOKEN, Mode, PluginContext, assert_no_secret, write_kubeconfig,
};
use crate::support::harness::{Output, k3sdoctor};
use crate::support::objects::fresh_cluster;
use crate::support::scrape::{get, start_serve};
use crate::support::wait::wait_for;

/// A bound on runs that should end after a 2 s timeout: generous for a busy machine, far
/// below the plugins' 600 s sleep.
const ENDS: Duration = Duration::from_secs(60);

fn kubeconfig(dir: &std::path::Path, fake: &FakeApi, plugin: &ExecPlugin) -> std::path::PathBuf {
    write_kubeconfig(
        dir,
        "kubeconfig.json",
        &[PluginContext {
            name: "prod",
            server: &fake.url(),
            ca_data: None,
            plugin,
        }],
    )
}

/// Runs `args` against `fake` through `plugin`; `None` when it did not end within [`ENDS`].
fn run_with(fake: &FakeApi, plugin: &ExecPlugin, args: &[&str]) -> Option<Output> {
    let dir = tempfile::tempdir().unwrap();
    let config = kubeconfig(dir.path(), fake, plugin);
    k3sdoctor(args)
        .kubeconfig(&config)
        .spawn()
        .exit_within(ENDS)
}

#[track_caller]
fn assert_plugin_stopped(plugin: &ExecPlugin) {
    assert!(
        wait_for(Duration::from_secs(10), || plugin.survivors().is_empty()),
        "plugin processes left running: {:?}",
        plugin.survivors()
    );
}

#[test]
fn a_hanging_plugin_is_stopped_at_the_request_timeout_with_its_helpers() {
    let fake = fresh_cluster(&["s1"]);
    for mode in [Mode::Hang, Mode::HangWithHelper] {
        let plugin = ExecPlugin::new(mode.clone());
        let out = run_with(&fake, &plugin, &["check", "--request-timeout", "2s"])
            .unwrap_or_else(|| panic!("{mode:?}: check did not end at the request timeout"));
        out.code(3).one_line_error().stderr_has(
            "k3sdoctor: error: context prod: the credential plugin kubelogin did not answer within 2s; \
             run it by hand",
        );
        assert_eq!(
            plugin.runs(),
            1,
            "{mode:?}: the plugin runs once per connection"
        );
        assert_plugin_stopped(&plugin);
    }
}

#[test]
fn a_plugin_token_authenticates_and_the_plugin_runs_once() {
    let fake = fresh_cluster(&["s1"]);
    let plugin = ExecPlugin::new(Mode::Token(Role::Admin.token().into()));
    let out = run_with(&fake, &plugin, &["leases"]).expect("leases ends");
    out.code(0).stdout_has("s1");
    // kube would have run it three times while building the client.
    assert_eq!(plugin.runs(), 1);
}

#[test]
fn a_failing_plugin_says_what_failed_and_never_prints_its_secrets() {
    let fake = fresh_cluster(&["s1"]);
    let plugin = ExecPlugin::new(Mode::Fail);
    for verbosity in [None, Some("-v"), Some("-vvv")] {
        let mut args = vec!["check"];
        args.extend(verbosity);
        let out = run_with(&fake, &plugin, &args).expect("check ends");
        out.code(3).one_line_error().stderr_has(
            "k3sdoctor: error: context prod: the credential plugin kubelogin failed (exit status 1): \
             error: the identity provider refused token [redacted] (VAULT_TOKEN=[redacted]); run it by hand",
        );
        assert!(!out.stderr.contains("second line"), "{}", out.stderr);
        assert_no_secret(&out.stdout, &[]);
        assert_no_secret(&out.stderr, &[]);
    }
}

#[test]
fn a_plugin_printing_garbage_is_refused_without_quoting_it() {
    let fake = fresh_cluster(&["s1"]);
    let plugin = ExecPlugin::new(Mode::Garbage);
    let out = run_with(&fake, &plugin, &["-vvv", "leases"]).expect("leases ends");
    out.code(3)
        .one_line_error()
        .stderr_has("the credential plugin kubelogin printed")
        .stderr_has("that are not an ExecCredential");
    assert_no_secret(&out.stderr, &["login page", "<html>"]);
}

#[test]
fn in_a_fleet_a_hanging_plugin_is_one_row_and_the_others_complete() {
    let fake = fresh_cluster(&["s1"]);
    let good = ExecPlugin::new(Mode::Token(Role::Admin.token().into()));
    let hang = ExecPlugin::new(Mode::HangWithHelper);
    let failing = ExecPlugin::new(Mode::Fail);
    let dir = tempfile::tempdir().unwrap();
    let url = fake.url();
    let config = write_kubeconfig(
        dir.path(),
        "fleet.json",
        &[
            PluginContext {
                name: "good",
                server: &url,
                ca_data: None,
                plugin: &good,
            },
            PluginContext {
                name: "hangs",
                server: &url,
                ca_data: None,
                plugin: &hang,
            },
            PluginContext {
                name: "fails",
                server: &url,
                ca_data: None,
                plugin: &failing,
            },
        ],
    );
    let out = k3sdoctor([
        "-v",
        "check",
        "--all-contexts",
        "--request-timeout",
        "2s",
        "-o",
        "json",
    ])
    .kubeconfig(&config)
    .spawn()
    .exit_within(ENDS)
    .expect("the fleet ends at the hanging plugin's timeout");
    out.code(3).stderr_has(
        "k3sdoctor: error: context hangs: the credential plugin kubelogin did not answer within 2s",
    );
    let report: Value = out.json();
    let entry = |name: &str| {
        report["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["context"] == name)
            .unwrap_or_else(|| panic!("no entry {name}: {report}"))
            .clone()
    };
    assert_eq!(entry("good")["outcome"], "checked", "{report}");
    assert_eq!(entry("hangs")["outcome"], "error", "{report}");
    let failed = entry("fails");
    assert_eq!(failed["outcome"], "error", "{report}");
    assert!(
        failed["error"]
            .as_str()
            .unwrap()
            .starts_with("the credential plugin kubelogin failed (exit status 1)"),
        "{report}"
    );
    assert_no_secret(&out.stdout, &[]);
    assert_no_secret(&out.stderr, &[]);
    assert!(!out.stdout.contains(FAILING_TOKEN));
    assert_plugin_stopped(&hang);
}

#[test]
fn serve_answers_healthz_and_sigterm_while_the_plugin_hangs() {
    let fake = fresh_cluster(&["s1"]);
    let plugin = ExecPlugin::new(Mode::Hang);
    let dir = tempfile::tempdir().unwrap();
    let config = kubeconfig(dir.path(), &fake, &plugin);
    // No --request-timeout limit: the plugin would hang for ever.
    let (serve, address) =
        start_serve(k3sdoctor(["serve", "--request-timeout", "0"]).kubeconfig(&config));
    assert!(
        wait_for(ENDS, || plugin.runs() == 1),
        "serve never ran the plugin"
    );
    assert_eq!(
        get(address, "/healthz").map(|(status, _)| status),
        Some(200),
        "/healthz must answer while the plugin hangs"
    );
    let out = serve
        .signal_and_wait_within(libc::SIGTERM, ENDS)
        .expect("SIGTERM ends serve while the plugin hangs");
    out.code(0);
    assert_plugin_stopped(&plugin);
}

#[test]
fn serve_logs_a_failing_plugin_without_its_secrets() {
    let fake = fresh_cluster(&["s1"]);
    let plugin = ExecPlugin::new(Mode::Fail);
    let dir = tempfile::tempdir().unwrap();
    let config = kubeconfig(dir.path(), &fake, &plugin);
    for format in ["text", "json"] {
        let out = k3sdoctor([
            "-vvv",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--log-format",
            format,
        ])
        .kubeconfig(&config)
        .spawn()
        .exit_within(ENDS)
        .expect("serve ends when its credential plugin fails");
        out.code(3)
            .stderr_has("the credential plugin kubelogin failed (exit status 1)");
        assert_no_secret(&out.stdout, &[]);
        assert_no_secret(&out.stderr, &[]);
    }
}

#[test]
fn an_expiring_token_is_fetched_again_and_a_refresh_that_hangs_is_bounded() {
    let fake = fresh_cluster(&["s1"]);
    let plugin = ExecPlugin::new(Mode::Expiring(Role::Admin.token().into()));
    let out = run_with(&fake, &plugin, &["check"]).expect("check ends");
    out.code(0);
    // Expiring within the minute: fetched again before the requests that carry it.
    assert!(plugin.runs() > 1, "refreshed {} times", plugin.runs());

    let plugin = ExecPlugin::new(Mode::ExpiringThenHang(Role::Admin.token().into()));
    let out = run_with(&fake, &plugin, &["check", "--request-timeout", "2s"])
        .expect("check ends when the refresh does not answer");
    out.code(3)
        .one_line_error()
        .stderr_has("k3sdoctor: error: cannot ")
        .stderr_has(": the credential plugin kubelogin did not answer within 2s; run it by hand");
    assert_no_secret(&out.stderr, &[]);
    assert_plugin_stopped(&plugin);
}

/// kube still runs a GCP auth-provider's `cmd-path` itself (synchronously: it is a legacy
/// provider kubectl no longer ships); its failure must not print what the command printed.
#[test]
fn a_failing_gcp_auth_provider_command_is_told_without_its_output() {
    let fake = fresh_cluster(&["s1"]);
    let plugin = ExecPlugin::new(Mode::Fail);
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gcp.json");
    let kubeconfig = serde_json::json!({
        "apiVersion": "v1", "kind": "Config", "current-context": "gke",
        "clusters": [{"name": "gke", "cluster": {"server": fake.url()}}],
        "users": [{"name": "gke", "user": {"auth-provider": {"name": "gcp", "config": {
            "cmd-path": plugin.path().display().to_string(), "cmd-args": "config config-helper",
        }}}}],
        "contexts": [{"name": "gke", "context": {"cluster": "gke", "user": "gke"}}],
    });
    std::fs::write(&config, kubeconfig.to_string()).unwrap();
    let out = k3sdoctor(["-vvv", "leases"])
        .kubeconfig(&config)
        .spawn()
        .exit_within(ENDS)
        .expect("leases ends");
    out.code(3)
        .stderr_has("the auth-provider command kubelogin failed (exit status: 1)");
    assert_no_secret(&out.stdout, &[]);
    assert_no_secret(&out.stderr, &[]);
}
