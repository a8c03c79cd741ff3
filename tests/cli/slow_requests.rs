//! `--request-timeout`'s stated default, and the spinner that names a slow request: on a
//! terminal only, never in a pipe.

use std::time::Duration;

use crate::support::fake_api::{FakeApi, Fault, FaultAction, Role};
use crate::support::harness::{k3sdoctor, on_terminal};
use crate::support::objects::{NOW, lease, server};

/// A cluster whose Lease list answers after 2 s: long enough for the spinner to show.
fn slow_leases() -> FakeApi {
    let fake = FakeApi::start();
    for o in [
        server("s1", "v1.29.4+k3s1"),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
    ] {
        fake.put(o);
    }
    fake.inject(Fault::new(
        Some("GET"),
        "/leases",
        FaultAction::Delay(Duration::from_secs(2)),
    ));
    fake
}

#[test]
fn the_help_states_the_request_timeout_that_applies() {
    // The global options, --request-timeout among them, are shown by `options`.
    {
        let out = k3sdoctor(["options"]).run();
        out.code(0);
        let words = out.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words.contains("(e.g. 10s, 1m; 0 = no limit) [default: 30s]"),
            "{}",
            out.stdout
        );
    }
}

#[test]
fn on_a_pipe_a_slow_request_draws_no_spinner() {
    let fake = slow_leases();
    let out = k3sdoctor(["leases", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    out.code(0).stdout_has("s1");
    // stderr has the report's prose (off a terminal), and nothing of a spinner.
    assert!(
        !out.stderr.contains("list leases in kube-system") && !out.stderr.contains('\r'),
        "stderr on a pipe:\n{}",
        out.stderr
    );
}

#[test]
fn on_a_terminal_a_slow_request_is_named_with_its_server() {
    let fake = slow_leases();
    let run = k3sdoctor(Vec::<String>::new());
    let kubeconfig = fake.write_kubeconfig(run.home(), Role::ReadOnly);
    let command = format!(
        "{} leases --now {NOW} --kubeconfig {}",
        env!("CARGO_BIN_EXE_k3sdoctor"),
        kubeconfig.display()
    );
    let Some(out) = on_terminal(&command, run.home()) else {
        return;
    };
    let screen = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{screen}");
    assert!(
        screen.contains(&format!("list leases in kube-system from {}", fake.url())),
        "{screen}"
    );
    assert!(screen.contains("LOCK"), "{screen}");
}
