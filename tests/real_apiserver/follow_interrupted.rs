//! Ctrl-C right after the first write of a MultiLock `leases follow --fix` (1.27 elects with
//! client-go's MultiLock: a ConfigMap record and a Lease) on the real API server: the run
//! exits 4 naming exactly what it wrote, and the copies agree.

use std::time::Duration;

use crate::support::envtest::servers::{SimCluster, TRANSITION};
use crate::support::envtest::{EnvTest, User};
use crate::support::harness::k3sdoctor;
use crate::support::wait::wait_for;

#[test]
fn real_multilock_follow_interrupted_after_the_first_write_leaves_the_copies_agreeing() {
    let Some(env) = EnvTest::start(
        "real_multilock_follow_interrupted_after_the_first_write_leaves_the_copies_agreeing",
    ) else {
        return;
    };
    let cluster = SimCluster::start(&env, "k3s", "v1.27.13+k3s1", 3, &[]);
    cluster.split_etcd_onto("server-2");

    let mut run = k3sdoctor(["leases", "follow", "--fix", "--yes", "--timeout", "60s"])
        .kubeconfig(&env.kubeconfig(User::Admin))
        .spawn()
        .stream();
    let wrote = run.stderr_line_matching(Duration::from_secs(60), |l| {
        l.starts_with("wrote ConfigMap kube-system/k3s")
    });
    assert!(wrote.is_some(), "the ConfigMap copy was not written");
    let out = run.signal_and_wait(libc::SIGINT);

    out.code(4).one_line_error();
    let error = out.stderr.lines().last().unwrap_or_default();
    // Depending on where the signal lands: during the Lease write (the pair is finished first)
    // or after it, while waiting for the takeover. Either way both writes are named.
    assert!(
        error.contains(
            "interrupted: finished the write first: ConfigMap kube-system/k3s and Lease kube-system/k3s now name server-2"
        ) || (error.contains("interrupted while waiting for the takeover: wrote ConfigMap kube-system/k3s (resourceVersion")
            && error.contains("and Lease kube-system/k3s (resourceVersion")),
        "{}",
        out.stderr
    );
    // The copies agree — on server-2, which takes over through its own renewals.
    assert_eq!(
        cluster.holders("k3s"),
        vec!["server-2".to_string()],
        "{}",
        out.stderr
    );
    assert!(
        wait_for(TRANSITION, || cluster.log_count(
            "server-2",
            "became leader of k3s (identity server-2)"
        ) >= 1),
        "server-2 did not take k3s"
    );
    assert_eq!(cluster.holders("k3s"), vec!["server-2".to_string()]);
}
