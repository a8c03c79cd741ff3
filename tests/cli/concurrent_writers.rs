//! `leases follow --fix` never overwrites what it did not judge: the write carries the
//! resourceVersion of the very object the plan was judged on, so a concurrent writer — another
//! run with another `--to`, or a k3s takeover — ends the run with exit 4, nothing written.

use std::sync::Arc;
use std::time::Duration;

use crate::common::follow_fix;
use crate::support::fake_api::{FakeApi, Fault, FaultAction, Role};
use crate::support::faults::writers::release_together;
use crate::support::harness::k3sdoctor;
use crate::support::objects::{NOW, lease, server};
use crate::support::wait::wait_for;

const V: &str = "v1.29.4+k3s1";
const LEASE_PATH: &str = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/k3s";

fn five_servers(core: &str, etcd: &str) -> FakeApi {
    FakeApi::with_objects(vec![
        server("s1", V),
        server("s2", V),
        server("s3", V),
        server("s4", V),
        server("s5", V),
        lease("k3s", core, 1),
        lease("k3s-etcd", etcd, 1),
    ])
}

fn real_lease_writes(fake: &FakeApi) -> usize {
    fake.requests()
        .iter()
        .filter(|r| {
            r.method == "PUT"
                && r.path == LEASE_PATH
                && !r.query.contains("dryRun")
                && r.status == 200
        })
        .count()
}

/// The window the old code had: the plan judged one read, the PUT carried the resourceVersion
/// of a later GET. A takeover landing between the two was overwritten.
#[test]
fn a_takeover_between_the_plan_and_the_write_is_never_overwritten() {
    let fake = Arc::new(five_servers("s1", "s2"));
    // Every GET of the lock object is slow: the dry run's, then the one the write is judged on.
    fake.inject(Fault::new(
        Some("GET"),
        LEASE_PATH,
        FaultAction::Delay(Duration::from_millis(700)),
    ));
    let mover = {
        let fake = fake.clone();
        std::thread::spawn(move || {
            let gets = || {
                fake.requests()
                    .iter()
                    .filter(|r| r.method == "GET" && r.path == LEASE_PATH)
                    .count()
            };
            // While the second GET is held, s3 takes the lock (a k3s takeover).
            assert!(wait_for(Duration::from_secs(20), || gets() >= 2));
            fake.put(lease("k3s", "s3", 0));
        })
    };
    let out = follow_fix(&fake, &["--no-wait"]);
    mover.join().unwrap();
    out.code(4)
        .one_line_error()
        .stderr_has("the lock changed since the plan: now k3s would move from \"s3\" to \"s2\"")
        .stderr_has("nothing was written");
    assert_eq!(fake.lock_holder("Lease", "k3s").unwrap(), "s3");
    assert_eq!(real_lease_writes(&fake), 0);
}

/// N forced runs with different `--to` targets, released at the same instant: exactly one
/// writes; every other run exits 4 saying nothing was written; the Lease names the winner's
/// target.
#[test]
fn of_concurrent_runs_with_different_targets_exactly_one_writes() {
    let fake = five_servers("s1", "s1");
    // Hold every real write long enough that every run has judged the lock before one lands.
    fake.inject(Fault::new(
        Some("PUT"),
        "leases/k3s?&fieldManager",
        FaultAction::Delay(Duration::from_millis(1500)),
    ));
    let targets = ["s2", "s3", "s4", "s5"];
    let runs = targets
        .iter()
        .map(|to| {
            k3sdoctor([
                "leases",
                "follow",
                "--fix",
                "--yes",
                "--force",
                "--no-wait",
                "--now",
                NOW,
            ])
            .args(&["--to", to])
            .cluster(&fake, Role::Admin)
        })
        .collect();
    let outs = release_together(runs);
    let winners: Vec<usize> = (0..outs.len()).filter(|i| outs[*i].code != 4).collect();
    assert_eq!(
        winners.len(),
        1,
        "exactly one run may write: {:#?}",
        outs.iter().map(|o| (o.code, &o.stderr)).collect::<Vec<_>>()
    );
    let winner = winners[0];
    outs[winner].stderr_has("wrote Lease kube-system/k3s");
    for (i, out) in outs.iter().enumerate().filter(|(i, _)| *i != winner) {
        out.one_line_error()
            .stderr_has("nothing was written")
            .stderr_has(&format!(
                "from \"{}\" to \"{}\"",
                targets[winner], targets[i]
            ));
        assert!(!out.stderr.contains("wrote Lease"), "{}", out.stderr);
    }
    assert_eq!(fake.lock_holder("Lease", "k3s").unwrap(), targets[winner]);
    assert_eq!(real_lease_writes(&fake), 1);
}
