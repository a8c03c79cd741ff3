//! Exec credential plugins in front of a real kube-apiserver: a plugin that prints the test
//! bed's admin token authenticates (and runs once); a hanging plugin ends a one-shot run at
//! `--request-timeout` with one line and exit 3, is one row of a fleet whose other cluster is
//! read, and holds up neither `serve`'s `/healthz` nor its SIGTERM; a failing plugin's token,
//! stdout and exec `env` values appear nowhere, at any verbosity.

use std::time::Duration;

use serde_json::Value;

use crate::support::envtest::{EnvTest, User};
use crate::support::faults::exec_plugin::{
    ExecPlugin, Mode, PluginContext, RealBedUser, assert_no_secret, write_kubeconfig,
};
use crate::support::harness::k3sdoctor;
use crate::support::scrape::{get, start_serve};
use crate::support::wait::wait_for;

/// Far beyond the 2 s timeouts the runs are given, far below the plugins' 600 s sleeps.
const ENDS: Duration = Duration::from_secs(90);

#[track_caller]
fn assert_plugin_stopped(plugin: &ExecPlugin) {
    assert!(
        wait_for(Duration::from_secs(10), || plugin.survivors().is_empty()),
        "plugin processes left running: {:?}",
        plugin.survivors()
    );
}

#[test]
fn real_credential_plugins_hang_fail_and_authenticate_without_leaking() {
    let Some(env) = EnvTest::shared() else {
        return;
    };
    let admin = RealBedUser::read(&env.kubeconfig(User::Admin));
    let good = ExecPlugin::new(Mode::Token(admin.token.clone()));
    let hang = ExecPlugin::new(Mode::HangWithHelper);
    let failing = ExecPlugin::new(Mode::Fail);
    let context = |name, plugin| PluginContext {
        name,
        server: &admin.server,
        ca_data: Some(&admin.ca_data),
        plugin,
    };
    let one = |name, plugin| {
        write_kubeconfig(
            &env.scratch_for("credential_plugins_authenticate"),
            &format!("{name}.json"),
            &[context(name, plugin)],
        )
    };

    // A good plugin: the real API server accepts its token; it ran once, not once per use.
    let out = k3sdoctor(["-o", "json", "leases"])
        .kubeconfig(&one("good", &good))
        .spawn()
        .exit_within(ENDS)
        .expect("leases ends");
    assert_ne!(
        out.code, 3,
        "read through the plugin's token:\n{}",
        out.stderr
    );
    let report: Value = out.json();
    assert_eq!(report["kind"], "LeaseReport");
    assert_eq!(good.runs(), 1);
    assert_no_secret(&out.stdout, &[&admin.token]);
    assert_no_secret(&out.stderr, &[&admin.token]);

    // A token that expires within the minute is fetched again before the requests.
    let expiring = ExecPlugin::new(Mode::Expiring(admin.token.clone()));
    let out = k3sdoctor(["leases"])
        .kubeconfig(&one("expiring", &expiring))
        .spawn()
        .exit_within(ENDS)
        .expect("leases ends");
    assert_ne!(
        out.code, 3,
        "read through refreshed tokens:\n{}",
        out.stderr
    );
    assert!(expiring.runs() > 1, "refreshed {} times", expiring.runs());
    assert_no_secret(&out.stderr, &[&admin.token]);

    // A hanging plugin (its helper holding stdout): one line at the request timeout, exit 3.
    let out = k3sdoctor(["check", "--request-timeout", "2s"])
        .kubeconfig(&one("hangs", &hang))
        .spawn()
        .exit_within(ENDS)
        .expect("check ends at the request timeout");
    out.code(3).one_line_error().stderr_has(
        "k3sdoctor: error: context hangs: the credential plugin kubelogin did not answer within 2s",
    );
    assert_plugin_stopped(&hang);

    // A failing plugin that prints a token: named, redacted, at every verbosity.
    for verbosity in ["-q", "-v", "-vvv"] {
        let out = k3sdoctor([verbosity, "check"])
            .kubeconfig(&one("fails", &failing))
            .spawn()
            .exit_within(ENDS)
            .expect("check ends");
        out.code(3).one_line_error().stderr_has(
            "context fails: the credential plugin kubelogin failed (exit status 1): error: the identity \
             provider refused token [redacted] (VAULT_TOKEN=[redacted])",
        );
        assert_no_secret(&out.stdout, &[&admin.token]);
        assert_no_secret(&out.stderr, &[&admin.token]);
    }

    // A fleet: the real cluster through the good plugin, a hanging and a failing one.
    let fleet = write_kubeconfig(
        &env.scratch_for("credential_plugins_authenticate"),
        "fleet.json",
        &[
            context("real", &good),
            context("hangs", &hang),
            context("fails", &failing),
        ],
    );
    let out = k3sdoctor([
        "-vvv",
        "check",
        "--all-contexts",
        "--request-timeout",
        "2s",
        "-o",
        "json",
    ])
    .kubeconfig(&fleet)
    .spawn()
    .exit_within(ENDS)
    .expect("the fleet ends at the hanging plugin's timeout");
    out.code(3)
        .stderr_has("k3sdoctor: error: context hangs: the credential plugin kubelogin did not answer within 2s")
        .stderr_has("k3sdoctor: error: context fails: the credential plugin kubelogin failed (exit status 1)");
    let report: Value = out.json();
    let outcome = |name: &str| {
        report["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["context"] == name)
            .map(|e| e["outcome"].clone())
    };
    assert_eq!(outcome("real"), Some("checked".into()), "{report}");
    assert_eq!(outcome("hangs"), Some("error".into()), "{report}");
    assert_eq!(outcome("fails"), Some("error".into()), "{report}");
    assert_no_secret(&out.stdout, &[&admin.token]);
    assert_no_secret(&out.stderr, &[&admin.token]);
    assert_plugin_stopped(&hang);
}

#[test]
fn real_serve_answers_healthz_and_sigterm_while_its_credential_plugin_hangs() {
    let Some(env) = EnvTest::shared() else {
        return;
    };
    let admin = RealBedUser::read(&env.kubeconfig(User::Admin));
    let hang = ExecPlugin::new(Mode::Hang);
    let config = write_kubeconfig(
        &env.scratch_for("credential_plugins_serve"),
        "serve.json",
        &[PluginContext {
            name: "hangs",
            server: &admin.server,
            ca_data: Some(&admin.ca_data),
            plugin: &hang,
        }],
    );
    let (serve, address) =
        start_serve(k3sdoctor(["serve", "--request-timeout", "0"]).kubeconfig(&config));
    assert!(
        wait_for(ENDS, || hang.runs() == 1),
        "serve never ran the plugin"
    );
    assert_eq!(
        get(address, "/healthz").map(|(status, _)| status),
        Some(200),
        "/healthz must answer while the plugin hangs"
    );
    let out = serve
        .signal_and_wait_within(libc::SIGTERM, ENDS)
        .expect("SIGTERM ends serve while its plugin hangs");
    out.code(0);
    assert_plugin_stopped(&hang);

    // With a bound, serve gives up on the plugin and says so, as a one-shot run does.
    let out = k3sdoctor([
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--request-timeout",
        "2s",
    ])
    .kubeconfig(&config)
    .spawn()
    .exit_within(ENDS)
    .expect("serve ends when the plugin does not answer in time");
    out.code(3).stderr_has(
        "k3sdoctor: error: context hangs: the credential plugin kubelogin did not answer within 2s",
    );
    assert_plugin_stopped(&hang);
}
