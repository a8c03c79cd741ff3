//! `leases --watch` through the binary against the fake API server's watch: the first report,
//! one line or `LeaseChange` per holder change, a failed watch reported and retried, SIGTERM
//! ending it with the last verdict; and what it refuses before reading anything (exit 2). The
//! same against the real API server: `tests/real_apiserver/watch.rs`.

use std::time::Duration;

use serde_json::Value;

use crate::support::fake_api::{FakeApi, Fault, Role};
use crate::support::harness::{k3sdoctor, repo_path};
use crate::support::objects::{fresh_cluster, renewed_now};

/// Generous: a change is seen in milliseconds, a retried watch after the watcher's backoff.
const SEEN: Duration = Duration::from_secs(30);

fn healthy() -> FakeApi {
    fresh_cluster(&["s1", "s2"])
}

fn change(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_default()
}

#[test]
fn watch_streams_a_holder_change_as_json_and_ends_on_sigterm() {
    let fake = healthy();
    let mut watch = k3sdoctor(["leases", "--watch", "-o", "json"])
        .cluster(&fake, Role::ReadOnly)
        .spawn()
        .stream();
    let first = watch
        .line_matching(SEEN, |_| true)
        .expect("the first report");
    assert_eq!(change(&first)["kind"], "LeaseReport", "{first}");

    fake.put(renewed_now("k3s-etcd", "s2"));
    let line = watch
        .line_matching(SEEN, |l| change(l)["kind"] == "LeaseChange")
        .unwrap_or_else(|| panic!("no change line; stdout:\n{}", watch.seen()));
    let moved = change(&line);
    crate::support::harness::assert_matches_schema(&change(&first), "leases --watch");
    crate::support::harness::assert_matches_schema(&moved, "leases --watch");
    assert_eq!(moved["apiVersion"], "k3sdoctor.io/v1");
    assert_eq!(moved["lock"], "k3s-etcd", "{line}");
    assert_eq!(moved["from"]["holder"], "s1");
    assert_eq!(moved["to"]["holder"], "s2");
    assert_eq!(moved["to"]["node"], "s2");
    assert_eq!(moved["split"], true);

    fake.put(renewed_now("k3s", "s2"));
    let line = watch
        .line_matching(SEEN, |l| change(l)["lock"] == "k3s")
        .unwrap_or_else(|| panic!("no change of k3s; stdout:\n{}", watch.seen()));
    assert_eq!(change(&line)["split"], false, "{line}");

    // Aligned again: exit 0, and not because a signal killed it (that would be -1).
    let out = watch.signal_and_wait(libc::SIGTERM);
    out.code(0);
    assert_eq!(
        out.stdout.lines().count(),
        3,
        "a report and two changes; renewals print nothing:\n{}",
        out.stdout
    );
}

#[test]
fn watch_prints_one_line_per_change_after_the_table_and_reports_a_failed_watch() {
    let fake = healthy();
    // The first watch fails; the watcher retries it with backoff.
    fake.inject(Fault::status("GET", "watch=true", 503).times(1));
    let mut watch = k3sdoctor(["leases", "--watch"])
        .cluster(&fake, Role::ReadOnly)
        .spawn()
        .stream();
    assert!(
        watch
            .line_matching(SEEN, |l| l.starts_with("k3s-etcd "))
            .is_some(),
        "the table: {}",
        watch.seen()
    );
    fake.put(renewed_now("k3s-etcd", "s2"));
    let line = watch
        .line_matching(SEEN, |l| l.contains(" k3s-etcd "))
        .unwrap_or_else(|| panic!("no change line; stdout:\n{}", watch.seen()));
    assert!(
        line.ends_with("  k3s-etcd  s1 → s2  node s2  transitions 2  held  split"),
        "{line}"
    );
    // The change can arrive through the first list, before any watch request is made.
    let note = watch.stderr_line_matching(SEEN, |l| l.ends_with("; retrying"));
    let out = watch.signal_and_wait(libc::SIGINT);
    let note = note.unwrap_or_else(|| panic!("the failed watch was not reported:\n{}", out.stderr));
    assert!(note.starts_with("note: cannot watch "), "{note}");
    assert!(note.contains("503"), "{note}");
    out.code(1);
}

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
