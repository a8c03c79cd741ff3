//! Ctrl-C (SIGINT) or SIGTERM between the two writes of a MultiLock `leases follow --fix`
//! (1.24–1.27) never leaves the copies disagreeing silently: once the first write is sent the
//! pair is finished, then the run exits 4 saying what was written; a second signal stops at
//! once and reports what was confirmed and what each copy names now.

use std::time::Duration;

use crate::support::fake_api::{FakeApi, Fault, FaultAction, Role};
use crate::support::harness::{Streaming, k3sdoctor};
use crate::support::objects::{NOW, configmap_lock, lease, server};

const V: &str = "v1.27.10+k3s2";
const WAIT: Duration = Duration::from_secs(20);

/// A 1.27 split whose Lease write is held for `delay`, so a signal lands between the writes.
fn multilock_split_with_a_slow_lease_write(delay: Duration) -> FakeApi {
    let fake = FakeApi::with_objects(vec![
        server("s1", V),
        server("s2", V),
        server("s3", V),
        lease("k3s", "s1", 1),
        configmap_lock("k3s", "s1", 1),
        lease("k3s-etcd", "s2", 1),
        configmap_lock("k3s-etcd", "s2", 1),
    ]);
    fake.inject(Fault::new(
        Some("PUT"),
        "leases/k3s?&fieldManager",
        FaultAction::Delay(delay),
    ));
    fake
}

/// Starts the repair and returns once the ConfigMap copy is written (the Lease write pending).
fn between_the_writes(fake: &FakeApi) -> Streaming {
    let mut run = k3sdoctor([
        "leases",
        "follow",
        "--fix",
        "--yes",
        "--no-wait",
        "--now",
        NOW,
    ])
    .cluster(fake, Role::Admin)
    .spawn()
    .stream();
    let wrote =
        run.stderr_line_matching(WAIT, |l| l.starts_with("wrote ConfigMap kube-system/k3s"));
    assert!(wrote.is_some(), "the ConfigMap copy was not written");
    run
}

fn holders(fake: &FakeApi) -> (String, String) {
    (
        fake.lock_holder("ConfigMap", "k3s").unwrap_or_default(),
        fake.lock_holder("Lease", "k3s").unwrap_or_default(),
    )
}

#[test]
fn a_signal_between_the_two_writes_finishes_the_pair_then_exits_4() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let fake = multilock_split_with_a_slow_lease_write(Duration::from_millis(1500));
        let out = between_the_writes(&fake).signal_and_wait(signal);
        out.code(4)
            .one_line_error()
            .stderr_has("interrupted: a write is already sent")
            .stderr_has(
                "interrupted: finished the write first: ConfigMap kube-system/k3s and Lease kube-system/k3s now \
                 name s2; the takeover was not verified",
            );
        assert_eq!(
            holders(&fake),
            ("s2".into(), "s2".into()),
            "signal {signal}"
        );
    }
}

#[test]
fn a_second_signal_stops_at_once_and_reports_each_copy() {
    let fake = multilock_split_with_a_slow_lease_write(Duration::from_secs(8));
    let mut run = between_the_writes(&fake);
    run.signal(libc::SIGINT);
    assert!(
        run.stderr_line_matching(WAIT, |l| l.contains("interrupted: a write is already sent"))
            .is_some(),
        "the first signal was not acknowledged"
    );
    let out = run.signal_and_wait(libc::SIGINT);
    // The Lease write is still held by the server: the Lease names the old holder.
    let lease_rv =
        fake.get("Lease", Some("kube-system"), "k3s").unwrap()["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .to_string();
    out.code(4)
        .one_line_error()
        .stderr_has("stopped by a second interrupt: confirmed written: ConfigMap kube-system/k3s (resourceVersion")
        .stderr_has("the write of Lease kube-system/k3s was sent and may or may not have landed")
        .stderr_has("read again, ConfigMap kube-system/k3s names \"s2\" and Lease kube-system/k3s names \"s1\"")
        .stderr_has(&format!(
            "patch lease k3s --type merge -p '{{\"metadata\":{{\"resourceVersion\":\"{lease_rv}\"}},\"spec\":{{\"holderIdentity\":\"s2\"}}}}'"
        ));
}

/// Once written, a signal while waiting for the target's takeover (no simulated server here
/// ever takes it) ends the run with exit 4 naming the writes, not silently.
#[test]
fn a_signal_while_waiting_for_the_takeover_names_what_was_written() {
    let fake = FakeApi::with_objects(vec![
        server("s1", "v1.29.4+k3s1"),
        server("s2", "v1.29.4+k3s1"),
        server("s3", "v1.29.4+k3s1"),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s2", 1),
    ]);
    let mut run = k3sdoctor([
        "leases",
        "follow",
        "--fix",
        "--yes",
        "--timeout",
        "60s",
        "--now",
        NOW,
    ])
    .cluster(&fake, Role::Admin)
    .spawn()
    .stream();
    let wrote = run.stderr_line_matching(WAIT, |l| l.starts_with("wrote Lease kube-system/k3s"));
    assert!(wrote.is_some(), "the Lease was not written");
    let out = run.signal_and_wait(libc::SIGTERM);
    out.code(4)
        .one_line_error()
        .stderr_has("interrupted while waiting for the takeover: wrote Lease kube-system/k3s (resourceVersion")
        .stderr_has("(naming s2); the takeover was not verified");
    assert_eq!(fake.lock_holder("Lease", "k3s").unwrap(), "s2");
}
