//! Every suggested command carries the run's `--kubeconfig`, `--context` and explicit
//! `--distro`, shell-quoted, so a pasted command targets the same cluster.

use crate::support::fake_api::{FakeApi, Fault, Role};
use crate::support::harness::k3sdoctor;
use crate::support::objects::{NOW, configmap_lock, lease, server};

const V: &str = "v1.29.4+k3s1";

#[test]
fn remediations_and_next_steps_carry_the_connection_flags() {
    let fake = FakeApi::with_objects(vec![
        server("s1", V),
        server("s2", V),
        server("s3", V),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s2", 1),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let spaced = dir.path().join("my configs");
    std::fs::create_dir(&spaced).unwrap();
    let kubeconfig = fake.write_kubeconfig(&spaced, Role::Admin);
    let flags = format!(
        "k3sdoctor --kubeconfig '{}' --context fake --distro k3s ",
        kubeconfig.display()
    );
    let run = |args: &[&str]| {
        k3sdoctor(["--kubeconfig", &kubeconfig.display().to_string()])
            .args(&["--context", "fake", "--distro", "k3s", "--now", NOW])
            .args(args)
            .run()
    };
    run(&["leases"])
        .code(1)
        .stderr_has(&format!("fix: {flags}leases follow --fix (moves k3s to s2"));
    run(&["leases", "follow", "--fix", "--yes", "--no-wait"])
        .code(0)
        .stderr_has(&format!("check with `{flags}leases`"));
}

#[test]
fn a_kubectl_command_to_finish_a_partial_write_carries_them_too() {
    let v = "v1.27.10+k3s2";
    let fake = FakeApi::with_objects(vec![
        server("s1", v),
        server("s2", v),
        server("s3", v),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s2", 1),
        configmap_lock("k3s", "s1", 1),
        configmap_lock("k3s-etcd", "s2", 1),
    ]);
    fake.inject(Fault::status("PUT", "leases/k3s?&fieldManager", 500));
    let out = k3sdoctor([
        "leases",
        "follow",
        "--fix",
        "--yes",
        "--no-wait",
        "--now",
        NOW,
    ])
    .args(&["--context", "fake"])
    .cluster(&fake, Role::Admin)
    .run();
    out.code(4).one_line_error();
    let error = out.stderr.lines().last().unwrap();
    assert!(
        error.contains("finish now with: kubectl --kubeconfig ")
            && error.contains(" --context fake -n kube-system patch lease k3s")
            && error.contains("(or re-run k3sdoctor --kubeconfig ")
            && error.contains(" --context fake leases follow --fix)"),
        "{error}"
    );
}

#[test]
fn kubectls_other_connection_flags_are_carried_but_never_the_token() {
    let fake = FakeApi::with_objects(vec![
        server("s1", V),
        server("s2", V),
        server("s3", V),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s2", 1),
    ]);
    let token = FakeApi::token(Role::Admin);
    let out = k3sdoctor(["leases", "--now", NOW, "--server", &fake.url()])
        .args(&["--token", token, "--as", "jane", "--as-group", "ops"])
        .run();
    out.code(1).stderr_has(&format!(
        "fix: k3sdoctor --server {} --as jane --as-group ops leases follow --fix",
        fake.url()
    ));
    assert!(!out.stdout.contains(token), "{}", out.stdout);
    assert!(!out.stderr.contains(token), "{}", out.stderr);
}
