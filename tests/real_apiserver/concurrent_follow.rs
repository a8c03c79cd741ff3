//! Concurrent `leases follow --fix` runs on the real API server: of forced runs with different
//! `--to` targets released at the same instant, exactly one writes; the others exit 4 with
//! "nothing was written", and the Lease names the winner's target — through real client-go
//! renewals and takeovers between the rounds.

use crate::support::envtest::servers::SimCluster;
use crate::support::envtest::{EnvTest, User};
use crate::support::faults::writers::release_together;
use crate::support::harness::{Output, k3sdoctor};

const SERVERS: [&str; 5] = ["server-1", "server-2", "server-3", "server-4", "server-5"];

/// Whether a run's plan (stdout) judged the lock as held by `holder`.
fn judged_from(out: &Output, holder: &str) -> bool {
    out.stdout.contains(&format!("move k3s from {holder} "))
}

#[test]
fn real_concurrent_follow_runs_with_different_targets_write_exactly_once() {
    let Some(env) =
        EnvTest::start("real_concurrent_follow_runs_with_different_targets_write_exactly_once")
    else {
        return;
    };
    let cluster = SimCluster::start(&env, "k3s", "v1.29.4+k3s1", SERVERS.len(), &[]);
    let kubeconfig = env.kubeconfig(User::Admin);

    // A round counts when every run judged the same holder: the race the issue saw ("both
    // wrote in 3 of 4 rounds"). A run that started so late it read the first write is not
    // racing it, so such a round is run again rather than judged.
    let mut raced_rounds = 0;
    for _round in 0..5 {
        if raced_rounds == 2 {
            break;
        }
        let holder = cluster.holder("k3s");
        let targets: Vec<&str> = SERVERS.iter().copied().filter(|s| *s != holder).collect();
        let runs = targets
            .iter()
            .map(|to| {
                // Without --no-wait: the winner waits until its target renews the lock
                // itself, so the next round starts from a settled lock.
                k3sdoctor([
                    "leases",
                    "follow",
                    "--fix",
                    "--yes",
                    "--force",
                    "--timeout",
                    "60s",
                    "--to",
                    to,
                ])
                .kubeconfig(&kubeconfig)
            })
            .collect();
        let outs = release_together(runs);
        let summary = || {
            outs.iter()
                .zip(&targets)
                .map(|(o, t)| format!("--to {t}: exit {}\n{}\n{}", o.code, o.stdout, o.stderr))
                .collect::<Vec<_>>()
                .join("\n----\n")
        };
        let wrote: Vec<usize> = (0..outs.len())
            .filter(|i| outs[*i].stderr.contains("wrote Lease kube-system/k3s"))
            .collect();
        if !outs.iter().all(|o| judged_from(o, &holder)) {
            eprintln!(
                "round not raced (a run read after the first write); again:\n{}",
                summary()
            );
            continue;
        }
        raced_rounds += 1;
        assert_eq!(wrote.len(), 1, "exactly one run may write:\n{}", summary());
        let winner = wrote[0];
        // The verdict of the cluster after a verified write (1 when the move left a split).
        assert!(matches!(outs[winner].code, 0 | 1), "{}", summary());
        for (i, out) in outs.iter().enumerate().filter(|(i, _)| *i != winner) {
            out.code(4)
                .one_line_error()
                .stderr_has("nothing was written");
            assert!(
                out.stderr.contains(&format!(
                    "from \"{}\" to \"{}\"",
                    targets[winner], targets[i]
                )) || out.stderr.contains("changed under every one"),
                "{}",
                summary()
            );
        }
        let target = targets[winner];
        // Verified: the target renewed the lock itself, through its real client-go elector.
        outs[winner].stderr_has(&format!("{target} renewed k3s itself"));
        assert_eq!(cluster.holder("k3s"), target, "{}", summary());
    }
    eprintln!("{raced_rounds} raced round(s)");
    assert!(
        raced_rounds >= 1,
        "no round had every run judge the same holder: the runs did not race"
    );
}
