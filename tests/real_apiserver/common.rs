//! Runs of the built binary against the test cluster, and waits on what it reports.

use std::time::Duration;

use crate::support::envtest::servers::SimCluster;
use crate::support::envtest::{EnvTest, User};
use crate::support::harness::{Output, k3sdoctor};
use crate::support::readme::readme_namespaced_role;
use crate::support::wait::wait_for;

/// How long a test waits for a ConfigMap to catch up: a snapshot round (20 s) and the
/// controller's start after a takeover, with room for a busy CI machine; and, to see an entry
/// missing, the minute a CR without its entry is only pending.
pub(crate) const CATCH_UP: Duration = Duration::from_secs(150);

/// `k3sdoctor ARGS` as `user` against the test cluster.
pub(crate) fn run_as(env: &EnvTest, user: User, args: &[&str]) -> Output {
    k3sdoctor(args).kubeconfig(&env.kubeconfig(user)).run()
}

/// Runs `args` as admin until it exits `code` (bounded by `CATCH_UP`); returns that run.
#[track_caller]
pub(crate) fn until_exit(env: &EnvTest, args: &[&str], code: i32) -> Output {
    let mut last = None;
    let reached = wait_for(CATCH_UP, || {
        let out = run_as(env, User::Admin, args);
        let done = out.code == code;
        last = Some(out);
        if !done {
            std::thread::sleep(Duration::from_millis(500));
        }
        done
    });
    let out = last.expect("at least one run");
    if !reached {
        out.code(code);
    }
    out
}

/// Runs `args` as the admin until it exits 1 reporting `finding`. Waiting for exit 1 alone is
/// not enough: after a split the idle controller is a finding at once, while a CR counts as
/// missing only once it is a minute old.
pub(crate) fn until_reported(env: &EnvTest, args: &[&str], finding: &str) -> Output {
    let mut last = None;
    let reached = wait_for(CATCH_UP, || {
        let out = run_as(env, User::Admin, args);
        // Off a terminal a table command's findings are on stderr; check's are on stdout.
        let done = out.code == 1 && (out.stdout.contains(finding) || out.stderr.contains(finding));
        last = Some(out);
        if !done {
            std::thread::sleep(Duration::from_millis(500));
        }
        done
    });
    let out = last.expect("at least one run");
    if !reached {
        out.code(1);
        assert!(
            out.stdout.contains(finding) || out.stderr.contains(finding),
            "{args:?} did not report {finding}:\n{}\n{}",
            out.stdout,
            out.stderr
        );
    }
    out
}

/// A server of the three that does not hold `lock`: where a test moves it.
pub(crate) fn another_server(cluster: &SimCluster, lock: &str) -> &'static str {
    let holder = cluster.holder(lock);
    ["server-1", "server-2", "server-3"]
        .into_iter()
        .find(|s| *s != holder)
        .expect("three servers")
}

/// `user` bound to the read-only rights every command needs, as the README binds them: the
/// ClusterRole and the Role in kube-system (the locks' Leases live there).
pub(crate) fn grant_read_only(env: &EnvTest, user: &str) {
    let admin = env.admin();
    admin.apply_yaml(&crate::support::readme::readme_read_only_roles());
    admin.bind("k3sdoctor-read-only", user);
    admin.bind_in("kube-system", "k3sdoctor-read-only", user);
}

/// The test user `viewer`, bound to exactly the README's read-only roles every command needs.
pub(crate) fn viewer_with_the_read_only_role(env: &EnvTest) {
    grant_read_only(env, "viewer");
}

/// The test user `viewer` with all the README's read-only rights: the ClusterRole and the Role
/// in default (the kubernetes Service's Endpoints and EndpointSlices) and in kube-system
/// (HelmCharts and Jobs).
pub(crate) fn viewer_with_every_read_only_right(env: &EnvTest) {
    viewer_with_the_read_only_role(env);
    let admin = env.admin();
    admin.apply_yaml(&readme_namespaced_role("k3sdoctor-read-only"));
    admin.bind_in("default", "k3sdoctor-read-only", "viewer");
    admin.apply_yaml(&crate::support::readme::readme_role_in(
        "k3sdoctor-read-only",
        "kube-node-lease",
    ));
    admin.bind_in("kube-node-lease", "k3sdoctor-read-only", "viewer");
}
