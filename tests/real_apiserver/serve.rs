//! `serve` against a real kube-apiserver, run as a user bound to exactly the README's
//! read-only role: ready once its watches have listed, a split brought about the realistic
//! way shows on `/metrics` as it happens, `leases follow --fix` clears it there, and SIGTERM
//! ends it with exit 0.

use std::time::{Duration, Instant};

use crate::common::{CATCH_UP, another_server, run_as, viewer_with_every_read_only_right};
use crate::support::envtest::servers::SimCluster;
use crate::support::envtest::{EnvTest, User};
use crate::support::harness::k3sdoctor;
use crate::support::scrape::{get, metrics, sample, start_serve, wait_for_sample};

/// Generous: a change reaches `/metrics` in well under a second; a busy CI machine is slow.
const SEEN: Duration = Duration::from_secs(30);

#[test]
fn real_serve_reports_a_split_as_it_happens_and_clears_it_after_follow() {
    let Some(env) =
        EnvTest::start("real_serve_reports_a_split_as_it_happens_and_clears_it_after_follow")
    else {
        return;
    };
    let cluster = SimCluster::start(&env, "k3s", "v1.29.4+k3s1", 3, &[]);
    viewer_with_every_read_only_right(&env);
    let holder = cluster.holder("k3s-etcd");
    let target = another_server(&cluster, "k3s-etcd");

    let (serve, address) =
        start_serve(k3sdoctor(["serve"]).kubeconfig(&env.kubeconfig(User::Viewer)));
    wait_for_sample(address, "k3sdoctor_ready", 1.0, SEEN);
    let split = r#"k3sdoctor_lease_split{lock="k3s",affected="true"}"#;
    wait_for_sample(address, split, 0.0, SEEN);
    let scrape = metrics(address);
    assert_eq!(sample(&scrape, "k3sdoctor_up"), Some(1.0), "{scrape}");
    assert_eq!(
        sample(&scrape, r#"k3sdoctor_etcd_members{state="ready"}"#),
        Some(3.0),
        "{scrape}"
    );
    let holder_series = |lock: &str, server: &str| {
        let node = &cluster.server(server).node;
        format!(r#"k3sdoctor_lease_holder_info{{lock="{lock}",holder="{server}",node="{node}"}}"#)
    };
    assert_eq!(
        sample(&scrape, &holder_series("k3s-etcd", &holder)),
        Some(1.0),
        "{scrape}"
    );

    // The split: the k3s-etcd holder is edited, the old holder restarts and keeps k3s.
    let edited = Instant::now();
    cluster.split_etcd_onto(target);
    wait_for_sample(address, split, 1.0, SEEN);
    // Reported, not asserted: the watches deliver the edit, then one debounced evaluation.
    eprintln!(
        "split on /metrics {} ms after the edit (includes the old holder's restart)",
        edited.elapsed().as_millis()
    );
    let scrape = metrics(address);
    assert_eq!(
        sample(
            &scrape,
            r#"k3sdoctor_findings{code="lease-split",severity="error"}"#
        ),
        Some(1.0),
        "{scrape}"
    );
    assert_eq!(
        sample(&scrape, &holder_series("k3s-etcd", target)),
        Some(1.0),
        "{scrape}"
    );
    let (status, report) = get(address, "/report").expect("/report answers");
    assert_eq!(status, 200);
    assert!(report.contains(r#""code": "lease-split""#), "{report}");

    // The repair, as admin: serve sees the split end.
    run_as(
        &env,
        User::Admin,
        &["leases", "follow", "--fix", "--yes", "--timeout", "60s"],
    )
    .code(0);
    wait_for_sample(address, split, 0.0, SEEN);
    assert_eq!(
        sample(&metrics(address), &holder_series("k3s", target)),
        Some(1.0)
    );
    // The snapshot controller starts on the new holder and the ConfigMap catches up.
    wait_for_sample(
        address,
        r#"k3sdoctor_snapshot_entries{state="missing"}"#,
        0.0,
        CATCH_UP,
    );

    let out = serve.signal_and_wait(libc::SIGTERM);
    out.code(0);
    out.stderr_has("verdict: lease-split");
    out.stderr_has("stopping: SIGTERM or SIGINT received");
}
