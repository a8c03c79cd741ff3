//! `leases --watch` against a real kube-apiserver: the first document is the LeaseReport, a
//! holder change made the realistic way (the k3s-etcd holder edited, client-go's electors
//! reacting) streams as a `LeaseChange`, and SIGTERM ends the watch with the exit code of the
//! last verdict. Run as a user bound to exactly the README's read-only role.

use std::time::Duration;

use serde_json::Value;

use crate::common::{another_server, viewer_with_the_read_only_role};
use crate::support::envtest::servers::{SimCluster, TRANSITION};
use crate::support::envtest::{EnvTest, User};
use crate::support::harness::k3sdoctor;
use crate::support::readme::read_only_role_without_watch;

#[test]
fn real_leases_watch_streams_a_holder_change_and_stops_on_sigterm() {
    let Some(env) =
        EnvTest::start("real_leases_watch_streams_a_holder_change_and_stops_on_sigterm")
    else {
        return;
    };
    let cluster = SimCluster::start(&env, "k3s", "v1.29.4+k3s1", 3, &[]);
    viewer_with_the_read_only_role(&env);
    let old = cluster.holder("k3s-etcd");
    let target = another_server(&cluster, "k3s-etcd");

    let mut watch = k3sdoctor(["leases", "--watch", "-o", "json"])
        .kubeconfig(&env.kubeconfig(User::Viewer))
        .spawn()
        .stream();
    let first = watch
        .line_matching(Duration::from_secs(30), |_| true)
        .expect("the first report");
    let report: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(report["kind"], "LeaseReport", "{first}");
    assert_eq!(report["apiVersion"], "k3sdoctor.io/v1");

    cluster.split_etcd_onto(target);
    let is_move = |line: &str| {
        let change: Value = serde_json::from_str(line).unwrap_or_default();
        change["kind"] == "LeaseChange"
            && change["lock"] == "k3s-etcd"
            && change["to"]["holder"] == target
    };
    let Some(line) = watch.line_matching(TRANSITION, is_move) else {
        let seen = watch.seen();
        let out = watch.signal_and_wait(libc::SIGTERM);
        panic!(
            "no LeaseChange onto {target}; stdout:\n{seen}\nstderr:\n{}",
            out.stderr
        );
    };
    let change: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(change["apiVersion"], "k3sdoctor.io/v1");
    assert_eq!(change["from"]["holder"], old.as_str(), "{line}");
    assert_eq!(
        change["to"]["node"],
        cluster.server(target).node.as_str(),
        "{line}"
    );
    assert_eq!(change["to"]["state"], "held");
    assert_eq!(change["split"], true, "{line}");
    // A hand edit moves the holder without counting a transition; only electors count them.
    assert_eq!(
        change["to"]["transitions"], change["from"]["transitions"],
        "{line}"
    );

    let out = watch.signal_and_wait(libc::SIGTERM);
    // Split on an affected version: an error finding remains, so exit 1 (not a signal death).
    out.code(1);
    assert!(!out.stderr.contains("error"), "{}", out.stderr);
}

#[test]
fn real_leases_watch_without_the_watch_verb_reports_the_403_and_keeps_running() {
    let Some(env) = EnvTest::start(
        "real_leases_watch_without_the_watch_verb_reports_the_403_and_keeps_running",
    ) else {
        return;
    };
    let _cluster = SimCluster::start(&env, "k3s", "v1.29.4+k3s1", 3, &[]);
    let admin = env.admin();
    // The README's read-only role as it was before it allowed watches.
    let without_watch = read_only_role_without_watch();
    admin.apply_yaml(&without_watch);
    admin.bind("k3sdoctor-read-only", "viewer");
    admin.bind_in("kube-system", "k3sdoctor-read-only", "viewer");

    let mut watch = k3sdoctor(["leases", "--watch"])
        .kubeconfig(&env.kubeconfig(User::Viewer))
        .spawn()
        .stream();
    assert!(
        watch
            .line_matching(Duration::from_secs(30), |l| l.starts_with("k3s-etcd "))
            .is_some(),
        "the table: {}",
        watch.seen()
    );
    let note = watch.stderr_line_matching(Duration::from_secs(30), |l| l.contains("forbidden"));
    let Some(note) = note else {
        let out = watch.signal_and_wait(libc::SIGTERM);
        panic!("no 403 reported:\n{}", out.stderr);
    };
    assert!(note.starts_with("note: cannot watch "), "{note}");
    assert!(
        note.contains("(`k3sdoctor rbac read-only` prints it"),
        "{note}"
    );
    assert!(note.ends_with("; retrying"), "{note}");
    // Healthy cluster, still watching after the 403: SIGTERM ends it with the verdict's exit 0.
    watch.signal_and_wait(libc::SIGTERM).code(0);
}

#[test]
fn real_leases_watch_ends_when_nobody_reads_its_output() {
    let Some(env) = EnvTest::start("real_leases_watch_ends_when_nobody_reads_its_output") else {
        return;
    };
    let cluster = SimCluster::start(&env, "k3s", "v1.29.4+k3s1", 3, &[]);
    let target = another_server(&cluster, "k3s-etcd");
    // `k3sdoctor leases --watch -o json | head -1`
    let mut watch = k3sdoctor(["leases", "--watch", "-o", "json"])
        .kubeconfig(&env.kubeconfig(User::Admin))
        .spawn();
    let first = watch.first_line_then_close_stdout();
    assert!(first.contains("\"kind\":\"LeaseReport\""), "{first}");
    cluster.split_etcd_onto(target);
    // The change line finds no reader: the watch ends with the verdict (split: exit 1).
    let out = watch
        .exit_within(TRANSITION)
        .expect("the watch kept running with nobody reading");
    out.code(1);
}
