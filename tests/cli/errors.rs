//! Every way reading can fail: one line on stderr naming what failed and what to do, exit 3.

use std::time::Duration;

use crate::support::fake_api::{FakeApi, Fault, FaultAction, Role};
use crate::support::harness::k3sdoctor;
use crate::support::objects::{lease, server};

fn small_cluster() -> FakeApi {
    let fake = FakeApi::start();
    for o in [
        server("s1", "v1.29.4+k3s1"),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
    ] {
        fake.put(o);
    }
    fake
}

#[test]
fn unreachable_server() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    k3sdoctor(["leases"])
        .kubeconfig_for(&format!("http://127.0.0.1:{port}"), "admin-token")
        .run()
        .code(3)
        .one_line_error()
        .stderr_has("cannot list")
        .stderr_has("connection refused");
}

#[test]
fn tls_failure() {
    let fake = small_cluster();
    let https = fake.url().replace("http://", "https://");
    k3sdoctor(["leases"])
        .kubeconfig_for(&https, "admin-token")
        .run()
        .code(3)
        .one_line_error()
        .stderr_has("TLS handshake with https://127.0.0.1");
}

#[test]
fn bad_token_is_401() {
    let fake = small_cluster();
    k3sdoctor(["leases"])
        .kubeconfig_for(&fake.url(), "stolen-token")
        .run()
        .code(3)
        .one_line_error()
        .stderr_has("401 Unauthorized")
        .stderr_has("refresh the token");
}

#[test]
fn no_rights_is_403_naming_the_permission() {
    let fake = small_cluster();
    k3sdoctor(["leases"])
        .cluster(&fake, Role::Nobody)
        .run()
        .code(3)
        .one_line_error()
        .stderr_has("forbidden (403)")
        .stderr_has("cannot list resource")
        .stderr_has("(`k3sdoctor rbac read-only` prints it");
}

#[test]
fn missing_kubeconfig_file() {
    k3sdoctor(["leases", "--kubeconfig", "/nonexistent/k3s.yaml"])
        .run()
        .code(3)
        .one_line_error()
        .stderr_has("cannot read kubeconfig /nonexistent/k3s.yaml");
}

#[test]
fn no_kubeconfig_anywhere_names_the_k3s_and_rke2_paths() {
    k3sdoctor(["leases"])
        .run()
        .code(3)
        .one_line_error()
        .stderr_has("no kubeconfig found")
        .stderr_has("/etc/rancher/k3s/k3s.yaml")
        .stderr_has("/etc/rancher/rke2/rke2.yaml");
}

#[test]
fn kubeconfig_variable_naming_nothing() {
    k3sdoctor(["leases"])
        .env("KUBECONFIG", "/nope/a:/nope/b")
        .run()
        .code(3)
        .one_line_error()
        .stderr_has("KUBECONFIG names no file that exists");
}

#[test]
fn unknown_context() {
    let fake = small_cluster();
    k3sdoctor(["leases", "--context", "prod"])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(3)
        .one_line_error()
        .stderr_has("context \"prod\"")
        .stderr_has("(it has fake); pick one with --context");
}

/// A YAML error is one line naming the file and the position, not the parser's caret
/// diagram, and not the advice to pass an existing file (it exists).
#[test]
fn malformed_kubeconfig_names_file_line_and_column() {
    let run = k3sdoctor(["leases"]);
    let path = run.home().join("broken.yaml");
    std::fs::write(
        &path,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: a\n  cluster: {server: \"https://x\"\ncontexts: []\n",
    )
    .unwrap();
    let out = run.arg("--kubeconfig").arg(path.to_str().unwrap()).run();
    out.code(3).one_line_error().stderr_has(&format!(
        "kubeconfig {} is not valid: line 6 column 1: ",
        path.display()
    ));
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(
        !out.stderr.contains("pass an existing file"),
        "{}",
        out.stderr
    );
}

#[test]
fn unreadable_dump() {
    k3sdoctor(["leases", "--from-file", "/nonexistent/dump.yaml"])
        .run()
        .code(3)
        .one_line_error()
        .stderr_has("cannot read dump /nonexistent/dump.yaml");
}

#[test]
fn malformed_dump() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "apiVersion: v1\nkind: [List\n").unwrap();
    k3sdoctor(["leases", "--from-file"])
        .arg(bad.display().to_string())
        .run()
        .code(3)
        .one_line_error()
        .stderr_has("cannot parse dump file");

    let object = dir.path().join("object.yaml");
    std::fs::write(
        &object,
        "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: k3s, namespace: kube-system}\nspec: {renewTime: yesterday}\n",
    )
    .unwrap();
    k3sdoctor(["leases", "--from-file"])
        .arg(object.display().to_string())
        .run()
        .code(3)
        .one_line_error()
        .stderr_has("Lease k3s is malformed");
}

#[test]
fn verbose_adds_the_cause_chain() {
    let fake = small_cluster();
    let out = k3sdoctor(["leases", "-v"])
        .kubeconfig_for(&fake.url(), "stolen-token")
        .run();
    out.code(3).stderr_has("  cause: ");
}

#[test]
fn slow_answer_hits_the_request_timeout() {
    let fake = small_cluster();
    fake.inject(Fault::new(
        Some("GET"),
        "/leases",
        FaultAction::Delay(Duration::from_secs(5)),
    ));
    k3sdoctor(["leases", "--request-timeout", "300ms"])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(3)
        .one_line_error()
        .stderr_has("request timeout");
}

#[test]
fn server_errors_and_garbage_bodies() {
    let fake = small_cluster();
    fake.inject(Fault::new(Some("GET"), "/leases", FaultAction::Status(503)));
    k3sdoctor(["leases"])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(3)
        .one_line_error()
        .stderr_has("503");

    let fake = small_cluster();
    fake.inject(Fault::new(
        Some("GET"),
        "/api/v1/nodes",
        FaultAction::Raw {
            status: 200,
            content_type: "text/html".into(),
            body: b"<html>login</html>".to_vec(),
        },
    ));
    k3sdoctor(["leases"])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(3)
        .one_line_error()
        .stderr_has("not the expected JSON");

    let fake = small_cluster();
    fake.inject(Fault::new(
        Some("GET"),
        "/api/v1/nodes",
        FaultAction::DropConnection,
    ));
    k3sdoctor(["leases"])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(3)
        .one_line_error()
        .stderr_has("closed the connection");
}

#[test]
fn tls_with_a_certificate_the_kubeconfig_does_not_trust() {
    let fake = FakeApi::start_tls();
    for o in [
        server("s1", "v1.29.4+k3s1"),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
    ] {
        fake.put(o);
    }
    k3sdoctor(["leases"])
        .cluster(&fake, Role::Admin)
        .run()
        .code(3)
        .one_line_error()
        .stderr_has("TLS handshake with https://127.0.0.1")
        .stderr_has("certificate-authority-data");
    assert!(
        fake.requests().is_empty(),
        "nothing should have been sent before the handshake"
    );

    // The same server, trusted: the whole path works over TLS.
    let run = k3sdoctor(["leases", "--now", "2024-05-31T12:10:40Z"]);
    let kubeconfig = fake.write_kubeconfig_trusting(run.home(), Role::Admin);
    run.arg("--kubeconfig")
        .arg(kubeconfig.display().to_string())
        .run()
        .code(0);
}

#[test]
fn a_distro_that_no_node_runs_is_refused() {
    let fake = small_cluster();
    for command in [&["leases"][..], &["snapshots", "diff"], &["check"]] {
        k3sdoctor(["--distro", "rke2"])
            .args(command)
            .cluster(&fake, Role::ReadOnly)
            .run()
            .code(2)
            .one_line_error()
            .stderr_has(
                "--distro rke2, but every Node reports a K3s version (v1.29.4+k3s1 on s1); drop --distro or \
                 pass --distro k3s",
            );
    }
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("rke2.yaml");
    crate::support::objects::write_dump(
        &dump,
        &[
            server("r1", "v1.29.5+rke2r1"),
            lease("rke2", "r1", 1),
            lease("rke2-etcd", "r1", 1),
        ],
    );
    k3sdoctor(["--distro", "k3s", "leases", "--from-file"])
        .arg(dump.display().to_string())
        .run()
        .code(2)
        .one_line_error()
        .stderr_has("every Node reports an RKE2 version (v1.29.5+rke2r1 on r1)");
}

/// clap's own `error: … Usage: … For more information …` block is not the tool's format: a
/// command line it refuses is one `k3sdoctor: error:` line, with clap's hint on it and the
/// `--help` to read, exit 2. `--help` and `--version` are untouched.
#[test]
fn usage_errors_are_one_line_with_the_hint_and_exit_2() {
    for (args, says) in [
        (
            &["--bogus", "check"][..],
            "k3sdoctor: error: unexpected argument '--bogus' found; see `k3sdoctor --help`",
        ),
        (
            &["check", "--fail-on", "maybe"][..],
            "k3sdoctor: error: invalid value 'maybe' for '--fail-on <FAIL_ON>'; possible values: error, \
             warning, never; see `k3sdoctor check --help`",
        ),
        (
            &["chek"][..],
            "k3sdoctor: error: unrecognized subcommand 'chek'; a similar subcommand exists: 'check'; see \
             `k3sdoctor --help`",
        ),
        (
            &["leases", "follow", "--to"][..],
            "k3sdoctor: error: a value is required for '--to <NODE|HOSTNAME>' but none was supplied; see \
             `k3sdoctor leases follow --help`",
        ),
        (
            &["check", "--request-timeout", "xx"][..],
            "k3sdoctor: error: invalid value 'xx' for '--request-timeout <DURATION>': \"xx\" is not a \
             duration; use e.g. 30s, 1.5m or 0 for no limit; see `k3sdoctor check --help`",
        ),
    ] {
        let out = k3sdoctor(args).run();
        out.code(2).one_line_error();
        assert_eq!(out.stderr, format!("{says}\n"), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}: {}", out.stdout);
    }
    let help = k3sdoctor(["check", "--help"]).run();
    help.code(0).stdout_has("Usage: k3sdoctor check [OPTIONS]");
    assert!(help.stderr.is_empty(), "{}", help.stderr);
    let version = k3sdoctor(["--version"]).run();
    version.code(0).stdout_has("k3sdoctor ");
}
