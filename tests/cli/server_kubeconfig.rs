//! On a k3s/RKE2 server with no kubeconfig of the user's: the server's own
//! kubeconfig is used, only after kubectl's order found nothing, and the run says which file.
//! `K3SDOCTOR_TEST_SERVER_KUBECONFIGS` stands for `/etc/rancher/k3s/k3s.yaml:/etc/rancher/rke2/rke2.yaml`.

use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::k3sdoctor;
use crate::support::objects::{NOW, server};

fn fake() -> FakeApi {
    let fake = FakeApi::start();
    fake.put(server("s1", "v1.30.2+k3s1"));
    fake
}

#[test]
fn with_nothing_else_the_server_kubeconfig_is_used_and_named() {
    let fake = fake();
    let dir = tempfile::tempdir().unwrap();
    let rke2 = fake.write_kubeconfig(dir.path(), Role::Admin);
    let k3s = dir.path().join("absent-k3s.yaml");
    let list = format!("{}:{}", k3s.display(), rke2.display());
    let out = k3sdoctor(["leases", "--now", NOW])
        .env("K3SDOCTOR_TEST_SERVER_KUBECONFIGS", &list)
        .run();
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    out.stderr_has(&format!(
        "using {}: no --kubeconfig, KUBECONFIG or ~/.kube/config, and not in a Pod",
        rke2.display()
    ));
    // -q keeps the note out, as every note.
    let out = k3sdoctor(["leases", "--now", NOW, "-q"])
        .env("K3SDOCTOR_TEST_SERVER_KUBECONFIGS", &list)
        .run();
    assert!(!out.stderr.contains("using "), "{}", out.stderr);
}

#[test]
fn a_users_kubeconfig_comes_first() {
    let fake = fake();
    let dir = tempfile::tempdir().unwrap();
    // The server file points nowhere: using it would fail the run.
    let unreachable = FakeApi::write_kubeconfig_for(dir.path(), "http://127.0.0.1:9", "t");
    let run = k3sdoctor(["leases", "--now", NOW]).env(
        "K3SDOCTOR_TEST_SERVER_KUBECONFIGS",
        &unreachable.display().to_string(),
    );
    let kube_dir = run.home().join(".kube");
    std::fs::create_dir_all(&kube_dir).unwrap();
    std::fs::copy(
        fake.write_kubeconfig(dir.path(), Role::Admin),
        kube_dir.join("config"),
    )
    .unwrap();
    let out = run.run();
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    assert!(!out.stderr.contains("using "), "{}", out.stderr);
    // KUBECONFIG too.
    let out = k3sdoctor(["leases", "--now", NOW])
        .env(
            "K3SDOCTOR_TEST_SERVER_KUBECONFIGS",
            &unreachable.display().to_string(),
        )
        .env(
            "KUBECONFIG",
            &fake
                .write_kubeconfig(dir.path(), Role::Admin)
                .display()
                .to_string(),
        )
        .run();
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
}

#[test]
fn with_no_server_kubeconfig_either_the_error_names_both_paths() {
    k3sdoctor(["leases"])
        .run()
        .code(3)
        .one_line_error()
        .stderr_has("no kubeconfig found")
        .stderr_has("/etc/rancher/k3s/k3s.yaml or /etc/rancher/rke2/rke2.yaml");
}
