//! The split brought about the realistic way (the `<prog>-etcd` holder edited; the old holder
//! restarts and keeps `<prog>`) is found by `leases`, `check` and `snapshots diff`, and
//! `leases follow --fix` heals it: the `<prog>` holder becomes the `<prog>-etcd` holder and stays
//! so through real client-go renewals, and the snapshot ConfigMap catches up.

use crate::common::{CATCH_UP, run_as, until_exit, until_reported};
use crate::report::{CheckReport, LeaseReport};
use crate::support::envtest::servers::SimCluster;
use crate::support::envtest::{EnvTest, User};
use crate::support::readme::{read_only_role_without_watch, readme_namespaced_role};
use crate::support::wait::wait_for;

#[test]
fn real_lease_locks_split_is_found_and_follow_heals_it() {
    split_then_follow(
        "real_lease_locks_split_is_found_and_follow_heals_it",
        "k3s",
        "v1.29.4+k3s1",
    );
}

#[test]
fn real_multilock_split_is_found_and_follow_heals_it() {
    // 1.27 elects with client-go's MultiLock: a ConfigMap record and a Lease.
    split_then_follow(
        "real_multilock_split_is_found_and_follow_heals_it",
        "k3s",
        "v1.27.13+k3s1",
    );
}

#[test]
fn real_rke2_split_is_found_and_follow_heals_it() {
    split_then_follow(
        "real_rke2_split_is_found_and_follow_heals_it",
        "rke2",
        "v1.29.4+rke2r1",
    );
}

fn split_then_follow(test: &str, prog: &'static str, version: &str) {
    let Some(env) = EnvTest::start(test) else {
        return;
    };
    let cluster = SimCluster::start(&env, prog, version, 3, &[]);
    let admin = env.admin();
    let core = cluster.core_lock();
    let etcd = cluster.etcd_lock();

    // Healthy: one server holds both locks.
    let healthy: LeaseReport = run_as(&env, User::Admin, &["leases", "-o", "json"])
        .code(0)
        .json();
    assert!(healthy.findings.is_empty(), "{:?}", healthy.findings);
    assert_holders_match(&healthy, &cluster);
    assert!(
        wait_for(CATCH_UP, || admin.snapshot_files().len() >= 3),
        "no snapshot round happened"
    );
    until_exit(&env, &["snapshots", "diff"], 0);
    let check: CheckReport = run_as(&env, User::Admin, &["check", "-o", "json"])
        .code(0)
        .json();
    assert!(
        !check.codes().iter().any(|c| c.starts_with("error/")),
        "{:?}",
        check.codes()
    );

    // The split.
    cluster.split_etcd_onto("server-2");
    let split: LeaseReport = run_as(&env, User::Admin, &["leases", "-o", "json"])
        .code(1)
        .json();
    assert_holders_match(&split, &cluster);
    assert_eq!(split.lock(&core).holder.as_deref(), Some("server-1"));
    assert_eq!(split.lock(&etcd).holder.as_deref(), Some("server-2"));
    let etcd_node = split
        .lock(&etcd)
        .node
        .as_ref()
        .expect("holder mapped to its node");
    assert_eq!(etcd_node.name, cluster.server("server-2").node);
    assert_eq!(split.codes(), vec![("error", "lease-split")]);
    let check: CheckReport = run_as(&env, User::Admin, &["check", "-o", "json"])
        .code(1)
        .json();
    assert_eq!(
        check.findings[0].finding.code,
        "lease-split",
        "{:?}",
        check.codes()
    );

    // Snapshots taken during the split never reach the ConfigMap.
    let before = admin.snapshot_files().len();
    assert!(
        wait_for(CATCH_UP, || admin.snapshot_files().len() > before),
        "no snapshot round during the split"
    );
    until_reported(
        &env,
        &["snapshots", "diff"],
        "snapshot-missing-from-configmap",
    );

    // The repair.
    let exits_before = cluster.log_count("server-1", "supervisor: k3ssim exited");
    let fix = run_as(
        &env,
        User::Admin,
        &["leases", "follow", "--fix", "--yes", "--timeout", "60s"],
    );
    fix.code(0)
        .stdout_has(&format!(
            "Plan: move {core} from server-1 (node ip-10-0-0-11) to server-2 (node ip-10-0-0-12)"
        ))
        .stderr_has(&format!("server-2 renewed {core} itself"));
    // Verified through the watch from the write's resourceVersion, not by falling back.
    assert!(!fix.stderr.contains("polling instead"), "{}", fix.stderr);
    assert_eq!(cluster.holders(&core), vec!["server-2".to_string()]);
    // The real API server took the Event (events.k8s.io/v1 validation included).
    let events = admin
        .get("/apis/events.k8s.io/v1/namespaces/kube-system/events")
        .expect("events list");
    let moved: Vec<&serde_json::Value> = events["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["reason"] == "LockMoved")
        .collect();
    assert_eq!(moved.len(), 1, "{events:#}");
    assert_eq!(moved[0]["regarding"]["name"], core.as_str());
    assert_eq!(moved[0]["reportingController"], "k3sdoctor.io/k3sdoctor");
    assert!(
        moved[0]["note"]
            .as_str()
            .unwrap()
            .contains("asked by leases follow --fix, run by admin"),
        "{:#}",
        moved[0]
    );

    // It stays so through real renewals: the old holder loses, restarts as a fresh candidate,
    // sees server-2 leading, and server-2 keeps renewing.
    assert!(
        wait_for(CATCH_UP, || cluster
            .log_count("server-1", "supervisor: k3ssim exited")
            > exits_before
            && cluster
                .log_since_last("server-1", "supervisor: k3ssim exited")
                .contains(&format!("observed {core} leader: server-2"))),
        "server-1 did not restart and observe server-2 leading {core}"
    );
    let renewed = admin.lease_record(&core).expect("the lease").renew_time;
    assert!(
        wait_for(CATCH_UP, || admin
            .lease_record(&core)
            .is_some_and(|r| r.renew_time > renewed)),
        "server-2 stopped renewing {core}"
    );
    assert_eq!(cluster.holders(&core), vec!["server-2".to_string()]);
    assert_eq!(cluster.holders(&etcd), vec!["server-2".to_string()]);

    // The controller now runs on server-2 and the ConfigMap catches up.
    until_exit(&env, &["snapshots", "diff"], 0);
    let healed: LeaseReport = run_as(&env, User::Admin, &["leases", "-o", "json"])
        .code(0)
        .json();
    assert_holders_match(&healed, &cluster);
}

#[test]
fn real_follow_without_the_watch_verb_verifies_by_polling_with_one_note() {
    let Some(env) =
        EnvTest::start("real_follow_without_the_watch_verb_verifies_by_polling_with_one_note")
    else {
        return;
    };
    let cluster = SimCluster::start(&env, "k3s", "v1.29.4+k3s1", 3, &[]);
    let admin = env.admin();
    // The README's read-only role as it was before it allowed watches, and the repair role.
    let without_watch = read_only_role_without_watch();
    admin.apply_yaml(&without_watch);
    admin.apply_yaml(&readme_namespaced_role("k3sdoctor-repair"));
    admin.bind("k3sdoctor-read-only", "repair");
    admin.bind_in("kube-system", "k3sdoctor-read-only", "repair");
    admin.bind_in("kube-system", "k3sdoctor-repair", "repair");
    cluster.split_etcd_onto("server-2");

    let fix = run_as(
        &env,
        User::Repair,
        &["leases", "follow", "--fix", "--yes", "--timeout", "60s"],
    );
    fix.code(0)
        .stderr_has("note: cannot watch lease kube-system/k3s (forbidden (403)")
        .stderr_has("server-2 renewed k3s itself");
    let notes = fix
        .stderr
        .lines()
        .filter(|l| l.ends_with("; polling instead"))
        .count();
    assert_eq!(notes, 1, "{}", fix.stderr);
    assert_eq!(cluster.holders("k3s"), vec!["server-2".to_string()]);
}

/// Every lock the report shows names the holder the lock objects name.
#[track_caller]
fn assert_holders_match(report: &LeaseReport, cluster: &SimCluster) {
    for lock in [cluster.core_lock(), cluster.etcd_lock()] {
        let shown = report.lock(&lock).holder.clone().unwrap_or_default();
        assert_eq!(cluster.holders(&lock), vec![shown.clone()], "{lock}");
        let node = report.lock(&lock).node.as_ref().expect("holder mapped");
        assert_eq!(node.name, cluster.server(&shown).node, "{lock}");
    }
}
