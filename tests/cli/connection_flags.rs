//! kubectl's connection flags against the fake API server: each one changes
//! what a run reaches or how it authenticates, and without it the same run fails.

use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::{Output, k3sdoctor};
use crate::support::objects::{NOW, server};

fn fake() -> FakeApi {
    let fake = FakeApi::start();
    fake.put(server("s1", "v1.30.2+k3s1"));
    fake
}

fn read(out: Output) -> Output {
    assert!(
        out.code == 0 || out.code == 1,
        "expected a reading, got {}: {}",
        out.code,
        out.stderr
    );
    out
}

const CLOSED: &str = "http://127.0.0.1:9";

#[test]
fn server_replaces_the_kubeconfigs_and_needs_none_with_a_token() {
    let fake = fake();
    k3sdoctor(["leases", "--now", NOW])
        .kubeconfig_for(CLOSED, FakeApi::token(Role::Admin))
        .run()
        .code(3);
    read(
        k3sdoctor(["leases", "--now", NOW, "--server", &fake.url()])
            .kubeconfig_for(CLOSED, FakeApi::token(Role::Admin))
            .run(),
    );
    read(
        k3sdoctor([
            "leases",
            "--now",
            NOW,
            "--server",
            &fake.url(),
            "--token",
            FakeApi::token(Role::Admin),
        ])
        .run(),
    );
}

#[test]
fn token_replaces_the_users_credentials() {
    let fake = fake();
    k3sdoctor(["leases", "--now", NOW])
        .kubeconfig_for(&fake.url(), "wrong-token")
        .run()
        .code(3);
    read(
        k3sdoctor([
            "leases",
            "--now",
            NOW,
            "--token",
            FakeApi::token(Role::Admin),
        ])
        .kubeconfig_for(&fake.url(), "wrong-token")
        .run(),
    );
}

#[test]
fn cluster_and_user_pick_other_kubeconfig_entries() {
    let fake = fake();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kc.yaml");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: dead\n  cluster: {{server: '{CLOSED}'}}\n\
             - name: live\n  cluster: {{server: '{}'}}\nusers:\n- name: nobody\n  user: {{token: wrong}}\n\
             - name: admin\n  user: {{token: {}}}\ncontexts:\n- name: c\n  context: {{cluster: dead, user: nobody}}\n\
             current-context: c\n",
            fake.url(),
            FakeApi::token(Role::Admin)
        ),
    )
    .unwrap();
    k3sdoctor(["leases", "--now", NOW, "--cluster", "live"])
        .kubeconfig(&path)
        .run()
        .code(3);
    read(
        k3sdoctor([
            "leases",
            "--now",
            NOW,
            "--cluster",
            "live",
            "--user",
            "admin",
        ])
        .kubeconfig(&path)
        .run(),
    );
    k3sdoctor(["leases", "--now", NOW, "--user", "root"])
        .kubeconfig(&path)
        .run()
        .code(3)
        .one_line_error()
        .stderr_has("user \"root\" is not in kubeconfig")
        .stderr_has("(it has nobody, admin); pick one with --user");
}

#[test]
fn certificate_authority_and_insecure_skip_tls_verify() {
    let fake = FakeApi::start_tls();
    fake.put(server("s1", "v1.30.2+k3s1"));
    let dir = tempfile::tempdir().unwrap();
    let untrusting = fake.write_kubeconfig(dir.path(), Role::Admin);
    k3sdoctor(["leases", "--now", NOW])
        .kubeconfig(&untrusting)
        .run()
        .code(3);
    let ca = dir.path().join("ca.crt");
    std::fs::write(&ca, fake.ca_pem().unwrap()).unwrap();
    read(
        k3sdoctor([
            "leases",
            "--now",
            NOW,
            "--certificate-authority",
            &ca.display().to_string(),
        ])
        .kubeconfig(&untrusting)
        .run(),
    );
    read(
        k3sdoctor(["leases", "--now", NOW, "--insecure-skip-tls-verify"])
            .kubeconfig(&untrusting)
            .run(),
    );
    k3sdoctor([
        "leases",
        "--insecure-skip-tls-verify",
        "--certificate-authority",
        &ca.display().to_string(),
    ])
    .run()
    .code(2)
    .one_line_error();
}

#[test]
fn namespace_is_kube_system_or_refused() {
    let fake = fake();
    read(
        k3sdoctor(["leases", "--now", NOW, "-n", "kube-system"])
            .cluster(&fake, Role::Admin)
            .run(),
    );
    fake.clear_requests();
    k3sdoctor(["leases", "-n", "default"])
        .cluster(&fake, Role::Admin)
        .run()
        .code(2)
        .one_line_error()
        .stderr_has("k3sdoctor reads only kube-system")
        .stderr_has("drop -n or use -n kube-system");
    assert!(
        fake.requests().is_empty(),
        "nothing was read for a refused -n"
    );
}

#[test]
fn as_group_needs_as() {
    k3sdoctor(["leases", "--as-group", "ops"])
        .run()
        .code(2)
        .one_line_error()
        .stderr_has("--as");
}

#[test]
fn durations_take_fractions() {
    let fake = fake();
    read(
        k3sdoctor(["leases", "--now", NOW, "--request-timeout", "1.5m"])
            .cluster(&fake, Role::Admin)
            .run(),
    );
}

#[test]
fn fleets_refuse_the_one_cluster_flags() {
    let fake = fake();
    k3sdoctor(["check", "--all-contexts", "--as", "jane"])
        .cluster(&fake, Role::Admin)
        .run()
        .code(2)
        .one_line_error()
        .stderr_has("apply to one cluster");
}
