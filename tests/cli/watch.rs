//! `leases --watch` refuses what it cannot watch, before reading anything (exit 2, one line).
//! The watch itself is tested against the real API server (`tests/real_apiserver/watch.rs`):
//! the fake does not serve `?watch=true`.

use crate::support::harness::{k3sdoctor, repo_path};

#[test]
fn watch_refuses_a_dump_now_and_follow() {
    let dump = repo_path("tests/fixtures/split-cluster");
    let dump = dump.to_str().unwrap();
    k3sdoctor(["--from-file", dump, "leases", "--watch"])
        .run()
        .code(2)
        .one_line_error()
        .stderr_has("--watch needs a live cluster");
    k3sdoctor(["leases", "-w", "--now", "2024-05-31T12:10:00Z"])
        .kubeconfig_for("http://127.0.0.1:9", "admin-token")
        .run()
        .code(2)
        .one_line_error()
        .stderr_has("drop --now");
    k3sdoctor(["leases", "--watch", "follow", "--fix", "--yes"])
        .kubeconfig_for("http://127.0.0.1:9", "admin-token")
        .run()
        .code(2)
        .one_line_error()
        .stderr_has("`leases follow --fix` waits for the takeover itself");
}
