//! The fault matrix: every way the API server can fail k3sdoctor, on reads and on each write
//! path. Each row checks the exit code, one clear line on stderr, and the fake's state —
//! nothing half-written, nothing lost.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::common::follow_fix;
use crate::support::fake_api::{FakeApi, Fault, Role};
use crate::support::harness::{Output, k3sdoctor};
use crate::support::objects::{
    NOW, configmap_lock, extra_metadata, lease, server, snapshot_configmap, snapshot_cr,
};

const V: &str = "v1.29.4+k3s1";
const T0: i64 = 1_717_142_400;

/// A split cluster with one snapshot missing from its ConfigMap.
pub(crate) fn split() -> Vec<Value> {
    vec![
        server("s1", V),
        server("s2", V),
        server("s3", V),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s2", 1),
        extra_metadata("k3s"),
        snapshot_cr("s1", T0, true),
        snapshot_configmap(
            "k3s",
            &[("etcd-snapshot-old-1634567890".into(), "{}".into())],
        ),
    ]
}

/// A 1.27 cluster (ConfigMap + Lease copies of every lock), split.
fn multilock_split() -> FakeApi {
    let v = "v1.27.10+k3s2";
    FakeApi::with_objects(vec![
        server("s1", v),
        server("s2", v),
        server("s3", v),
        lease("k3s", "s1", 1),
        configmap_lock("k3s", "s1", 1),
        lease("k3s-etcd", "s2", 1),
        configmap_lock("k3s-etcd", "s2", 1),
    ])
}

fn holder(fake: &FakeApi, kind: &str, name: &str) -> String {
    fake.lock_holder(kind, name).unwrap_or_default()
}

fn snapshot_data(fake: &FakeApi) -> Value {
    fake.get("ConfigMap", Some("kube-system"), "k3s-etcd-snapshots")
        .unwrap()["data"]
        .clone()
}

pub(crate) fn backfill(fake: &FakeApi) -> Output {
    k3sdoctor(["snapshots", "backfill", "--fix", "--yes", "--now", NOW])
        .cluster(fake, Role::Admin)
        .run()
}

#[test]
fn reads_404_for_lists_and_absent_objects() {
    for path in ["/namespaces/kube-system/leases", "/api/v1/nodes"] {
        let fake = FakeApi::with_objects(split());
        fake.inject(Fault::status("GET", path, 404));
        k3sdoctor(["leases"])
            .cluster(&fake, Role::ReadOnly)
            .run()
            .code(3)
            .one_line_error()
            .stderr_has("(404");
    }
    // Absent lock ConfigMaps and snapshot ConfigMaps are a normal state, not an error.
    let fake = FakeApi::with_objects(vec![
        server("s1", V),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
    ]);
    k3sdoctor(["check", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(0);
    // No CRD: the snapshot commands say so instead of reporting a healthy comparison.
    fake.set_crd_installed(false);
    k3sdoctor(["snapshots", "diff", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(0)
        .stderr_has("does not serve etcdsnapshotfiles.k3s.cattle.io");
    k3sdoctor(["check", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(0)
        .stdout_has("not checked: snapshots");
}

#[test]
fn truncated_and_non_json_bodies() {
    let fake = FakeApi::with_objects(split());
    fake.inject(Fault::raw(
        "GET",
        "/namespaces/kube-system/leases",
        200,
        "application/json",
        "{\"kind\":\"LeaseList\",\"items\":[{\"metadata\"",
    ));
    k3sdoctor(["leases"])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(3)
        .one_line_error()
        .stderr_has("not the expected JSON");
}

#[test]
fn server_errors_on_reads() {
    for code in [500, 503] {
        let fake = FakeApi::with_objects(split());
        fake.inject(Fault::status("GET", "etcdsnapshotfiles", code));
        k3sdoctor(["snapshots", "diff"])
            .cluster(&fake, Role::ReadOnly)
            .run()
            .code(3)
            .one_line_error()
            .stderr_has(&format!("failed ({code}"));
    }
}

#[test]
fn a_write_refused_by_the_server_writes_nothing() {
    // The permission check passes but the write itself is forbidden (a policy or webhook).
    let fake = FakeApi::with_objects(split());
    fake.inject(Fault::status("PUT", "leases/k3s?&fieldManager", 403));
    follow_fix(&fake, &["--no-wait"])
        .code(3)
        .one_line_error()
        .stderr_has("nothing was written");
    assert_eq!(holder(&fake, "Lease", "k3s"), "s1");

    for code in [500, 503] {
        let fake = FakeApi::with_objects(split());
        fake.inject(Fault::status("PUT", "leases/k3s?&fieldManager", code));
        follow_fix(&fake, &["--no-wait"])
            .code(4)
            .one_line_error()
            .stderr_has("nothing was written");
        assert_eq!(holder(&fake, "Lease", "k3s"), "s1");
    }
}

#[test]
fn backfill_write_failures_lose_nothing() {
    for code in [409, 413, 422, 500] {
        let fake = FakeApi::with_objects(split());
        let before = snapshot_data(&fake);
        let times = if code == 409 { 5 } else { 1 };
        fake.inject(
            Fault::status("PUT", "configmaps/k3s-etcd-snapshots?&fieldManager", code).times(times),
        );
        let out = backfill(&fake);
        out.code(4)
            .one_line_error()
            .stderr_has("nothing was written");
        assert_eq!(
            snapshot_data(&fake),
            before,
            "HTTP {code} changed the ConfigMap"
        );
        assert!(
            out.stderr
                .contains("saved ConfigMap kube-system/k3s-etcd-snapshots to"),
            "no backup for {code}"
        );
    }
    // One conflict is re-read and the same change goes through.
    let fake = FakeApi::with_objects(split());
    fake.inject(Fault::status("PUT", "configmaps/k3s-etcd-snapshots?&fieldManager", 409).times(1));
    // Written and verified; exit 1 is the verdict: nothing runs the snapshot controller here.
    backfill(&fake)
        .code(1)
        .stderr_has("changed while planning (409)")
        .stdout_has("snapshot-controller-idle");
    let data = snapshot_data(&fake);
    assert!(
        data.get("etcd-snapshot-old-1634567890").is_some(),
        "an existing entry was lost: {data}"
    );
    assert_eq!(data.as_object().unwrap().len(), 2);
}

/// A dry run the API server refuses (an invalid or over-1-MiB ConfigMap, a server error)
/// changed nothing: exit 4 and "nothing was written", like the same refusal of the write, and
/// no backup is saved for a write that never came.
#[test]
fn a_refused_dry_run_writes_nothing_and_says_so() {
    for code in [413, 422, 500] {
        let fake = FakeApi::with_objects(split());
        let before = snapshot_data(&fake);
        fake.inject(Fault::status(
            "PUT",
            "configmaps/k3s-etcd-snapshots?&dryRun=All",
            code,
        ));
        let out = backfill(&fake);
        out.code(4)
            .one_line_error()
            .stderr_has("dry-run update configmap kube-system/k3s-etcd-snapshots")
            .stderr_has("nothing was written");
        assert!(!out.stderr.contains("saved ConfigMap"), "{}", out.stderr);
        assert_eq!(
            snapshot_data(&fake),
            before,
            "HTTP {code} changed the ConfigMap"
        );
    }
    // The same for the lock a follow would move.
    let fake = FakeApi::with_objects(split());
    fake.inject(Fault::status("PUT", "leases/k3s?&dryRun=All", 422));
    follow_fix(&fake, &["--no-wait"])
        .code(4)
        .one_line_error()
        .stderr_has("nothing was written");
    assert_eq!(holder(&fake, "Lease", "k3s"), "s1");
}

#[test]
fn a_failed_second_write_of_a_multilock_says_exactly_what_state_is_left() {
    let fake = multilock_split();
    fake.inject(Fault::status("PUT", "leases/k3s?&fieldManager", 500));
    let out = follow_fix(&fake, &["--no-wait"]);
    // The copies are read again before a command is suggested; the command is conditioned on
    // the Lease as read, so it cannot overwrite a change made after it.
    let lease_rv =
        fake.get("Lease", Some("kube-system"), "k3s").unwrap()["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .to_string();
    out.code(4)
        .one_line_error()
        .stderr_has("ConfigMap kube-system/k3s now names s2 but writing Lease kube-system/k3s failed")
        .stderr_has("read again, ConfigMap kube-system/k3s names \"s2\" and Lease kube-system/k3s names \"s1\"")
        // The kubectl command that finishes the job targets the same cluster as the run.
        .stderr_has("finish now with: kubectl --kubeconfig ")
        .stderr_has(&format!(
            " -n kube-system patch lease k3s --type merge -p \
             '{{\"metadata\":{{\"resourceVersion\":\"{lease_rv}\"}},\"spec\":{{\"holderIdentity\":\"s2\"}}}}'"
        ));
    assert_eq!(holder(&fake, "ConfigMap", "k3s"), "s2");
    assert_eq!(holder(&fake, "Lease", "k3s"), "s1");
}

#[test]
fn the_server_going_away_during_verification() {
    let fake = Arc::new(FakeApi::with_objects(split()));
    let cutter =
        {
            let fake = fake.clone();
            std::thread::spawn(move || {
                // Once the real write has landed, every further read of the lock fails: the
                // watch open now ends, and neither it nor a GET can be made again.
                for _ in 0..200 {
                    if fake.requests().iter().any(|r| {
                        r.method == "PUT" && !r.query.contains("dryRun") && r.status == 200
                    }) {
                        fake.inject(Fault::drop_connection("GET", "leases/k3s"));
                        fake.inject(Fault::drop_connection("GET", "watch=true"));
                        fake.end_watches();
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            })
        };
    let out = follow_fix(&fake, &["--timeout", "2s"]);
    cutter.join().unwrap();
    out.code(4)
        .stderr_has("not verified within 2s: could not read the lock at the end")
        .stderr_has("note: cannot watch lease kube-system/k3s (")
        .stderr_has("; polling instead");
    assert_eq!(
        holder(&fake, "Lease", "k3s"),
        "s2",
        "the write itself happened and is reported"
    );
    assert!(
        fake.requests()
            .iter()
            .any(|r| r.query.contains("watch=true") && r.status == 0),
        "the watch was cut: {:#?}",
        fake.requests()
    );
}

#[test]
fn credentials_never_appear_in_output() {
    let fake = FakeApi::with_objects(split());
    for args in [
        vec!["check", "-vvv"],
        vec!["leases", "follow", "-vvv", "--fix", "--yes", "--no-wait"],
        vec!["snapshots", "backfill", "-vvv"],
    ] {
        let out = k3sdoctor(args).cluster(&fake, Role::Admin).run();
        for token in ["admin-token", "Bearer"] {
            assert!(
                !out.stdout.contains(token) && !out.stderr.contains(token),
                "{token} leaked:\n{}\n{}",
                out.stdout,
                out.stderr
            );
        }
    }
    let out = k3sdoctor(["leases", "-vvv"])
        .kubeconfig_for(&fake.url(), "s3cr3t-stolen-token")
        .run();
    out.code(3);
    assert!(!out.stderr.contains("s3cr3t"), "{}", out.stderr);
    assert!(fake.requests().iter().all(|r| r.authorization.is_some()));
}

#[test]
fn every_fix_with_the_read_only_token_is_refused_before_writing() {
    let fake = FakeApi::with_objects(split());
    for args in [
        vec!["leases", "follow", "--fix", "--yes"],
        vec!["snapshots", "backfill", "--fix", "--yes"],
    ] {
        k3sdoctor(args)
            .arg("--now")
            .arg(NOW)
            .cluster(&fake, Role::ReadOnly)
            .run()
            .code(3)
            .one_line_error()
            .stderr_has("not allowed to");
    }
    assert!(
        fake.requests()
            .iter()
            .all(|r| r.method == "GET" || r.path.contains("selfsubjectaccessreviews"))
    );
}

#[test]
fn every_read_only_command_works_with_the_read_only_token() {
    let fake = FakeApi::with_objects(split());
    for args in [
        vec!["leases"],
        vec!["leases", "follow"],
        vec!["snapshots", "list"],
        vec!["snapshots", "diff"],
        vec!["snapshots", "backfill"],
        vec!["check"],
    ] {
        let out = k3sdoctor(args.clone())
            .arg("--now")
            .arg(NOW)
            .cluster(&fake, Role::ReadOnly)
            .run();
        assert!(matches!(out.code, 0 | 1), "{args:?}: {}", out.stderr);
    }
    assert!(fake.requests().iter().all(|r| r.method == "GET"));
}

#[test]
fn a_conflict_on_the_configmap_copy_of_a_multilock_is_replanned() {
    let fake = multilock_split();
    fake.inject(Fault::status("PUT", "configmaps/k3s?&fieldManager", 409).times(1));
    follow_fix(&fake, &["--no-wait", "-v"])
        .code(0)
        .stderr_has("conflict writing ConfigMap kube-system/k3s");
    assert_eq!(holder(&fake, "ConfigMap", "k3s"), "s2");
    assert_eq!(holder(&fake, "Lease", "k3s"), "s2");
}

#[test]
fn a_conflict_on_the_lease_after_the_configmap_landed_is_retried_on_the_lease_alone() {
    // The old holder's last renewal of the Lease races the second write; the ConfigMap copy,
    // which client-go's MultiLock reads first, already fences it.
    let fake = multilock_split();
    fake.inject(Fault::status("PUT", "leases/k3s?&fieldManager", 409).times(1));
    follow_fix(&fake, &["--no-wait", "-v"])
        .code(0)
        .stderr_has("conflict writing Lease kube-system/k3s after the first copy landed");
    assert_eq!(holder(&fake, "ConfigMap", "k3s"), "s2");
    assert_eq!(holder(&fake, "Lease", "k3s"), "s2");
    let configmap_puts = fake
        .writes()
        .iter()
        .filter(|w| {
            w.starts_with("PUT /") && w.contains("/configmaps/k3s?") && !w.contains("dryRun")
        })
        .count();
    assert_eq!(configmap_puts, 1, "the ConfigMap copy is not written again");
}

#[test]
fn a_lease_that_keeps_conflicting_leaves_a_clear_partial_write() {
    let fake = multilock_split();
    fake.inject(Fault::status("PUT", "leases/k3s?&fieldManager", 409));
    follow_fix(&fake, &["--no-wait"])
        .code(4)
        .one_line_error()
        .stderr_has(
            "ConfigMap kube-system/k3s now names s2 but writing Lease kube-system/k3s failed",
        );
}
