//! Fleet benchmark: `cargo bench --bench fleet`.
//!
//! Starts 100 fake Kubernetes API servers on 127.0.0.1 (HTTPS, each with its own CA, so kubectl
//! sends its token), each seeded with a 3-server k3s cluster, three ETCDSnapshotFiles and the
//! snapshot ConfigMaps; one answers its Lease list after 5 s, and one context points at a
//! port that refuses connections. It writes one kubeconfig with a context per cluster and
//! measures, in one run:
//! - `k3sdoctor check --all-contexts` (the release binary; wall time, peak RSS, the requests
//!   each server received);
//! - the slowest cluster alone, `k3sdoctor --context <slow> check`;
//! - the shell-loop anchor: per context, serially, `kubectl get leases -n kube-system`,
//!   `kubectl get etcdsnapshotfiles.k3s.cattle.io` and `kubectl get configmap -n kube-system
//!   k3s-etcd-snapshots` (kubectl on PATH or `$KUBECTL`).
//!
//! It prints one markdown table with the targets and never fails on a number.
//! `cargo test --benches` only prints how to run it.

#[path = "../support/mod.rs"]
// Cargo compiles benches with `--cfg test` but, without the harness, drops their `#[test]`
// functions, which leaves the `use super::*` of the support files' unit-test modules unused.
#[allow(unused_imports)]
mod support;

// Shared with the perf benchmark, which uses all of it; this one does not.
#[allow(dead_code)]
mod measure;

use std::path::Path;
use std::time::Duration;

use measure::{Env, Invocation, Launcher, Sample, Stdout};
use support::fake_api::{FakeApi, Fault, FaultAction, Role};
use support::fleet::{FleetContext, closed_port_url, write_fleet_kubeconfig};
use support::objects::{NOW, extra_metadata, lease, server, snapshot_configmap, snapshot_cr};

const CLUSTERS: usize = 100;
const SLOW: Duration = Duration::from_secs(5);
const REPEATS: usize = 3;
const RSS_LIMIT_MIB: f64 = 150.0;
const T0: i64 = 1_717_142_400;

fn seed(fake: &FakeApi) {
    for object in [
        server("s1", "v1.29.6+k3s1"),
        server("s2", "v1.29.6+k3s1"),
        server("s3", "v1.29.6+k3s1"),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
        snapshot_cr("s1", T0, true),
        snapshot_cr("s2", T0 + 60, true),
        snapshot_cr("s3", T0 + 120, true),
        extra_metadata("k3s"),
        snapshot_configmap("k3s", &[]),
    ] {
        fake.put(object);
    }
}

fn main() {
    if !measure::should_run("fleet") {
        return;
    }
    // Before anything big is allocated: see measure.rs.
    let mut launcher = Launcher::start();
    let bin = Path::new(env!("CARGO_BIN_EXE_k3sdoctor"));
    let work = measure::Workspace::new();
    let (home, scratch) = (work.home.clone(), work.scratch.clone());

    let fakes: Vec<FakeApi> = (0..CLUSTERS - 1)
        .map(|_| {
            let fake = FakeApi::start_tls();
            seed(&fake);
            fake
        })
        .collect();
    let slow = &fakes[0];
    slow.inject(Fault::new(Some("GET"), "/leases", FaultAction::Delay(SLOW)));
    let refused = closed_port_url().replace("http://", "https://");
    let names: Vec<String> = (0..CLUSTERS).map(|i| format!("cluster-{i:03}")).collect();
    let urls: Vec<String> = fakes.iter().map(FakeApi::url).collect();
    let mut contexts: Vec<FleetContext<'_>> = fakes
        .iter()
        .zip(&urls)
        .zip(&names)
        .map(|((fake, url), name)| FleetContext {
            name,
            server: url,
            token: Role::ReadOnly.token(),
            ca_pem: fake.ca_pem(),
        })
        .collect();
    contexts.push(FleetContext {
        name: &names[CLUSTERS - 1],
        server: &refused,
        token: Role::ReadOnly.token(),
        ca_pem: None,
    });
    let kubeconfig = write_fleet_kubeconfig(work.path(), "fleet.yaml", &contexts);
    let env = Env {
        kubeconfig,
        home,
        scratch,
    };
    let clear = || fakes.iter().for_each(FakeApi::clear_requests);

    println!("k3sdoctor fleet benchmark (cargo bench --bench fleet)");
    println!();
    println!("- k3sdoctor: {}", bin.display());
    println!(
        "- fleet: {CLUSTERS} contexts; {} fake API servers (HTTPS, read-only token, own CA each) with 3 servers \
         on v1.29.6+k3s1, 2 Leases, 3 ETCDSnapshotFiles, the snapshot ConfigMaps; {} answers its Lease list \
         after {} s; {} refuses connections",
        CLUSTERS - 1,
        names[0],
        SLOW.as_secs(),
        names[CLUSTERS - 1]
    );

    // The single-cluster request count, on a cluster of the same shape.
    clear();
    let single = Invocation::new(
        bin,
        &["--context", &names[1], "check", "-o", "json", "--now", NOW],
    );
    let single_sample = launcher.run(&single, &env, Stdout::Discard);
    let single_requests = fakes[1].requests().len();

    let fleet = Invocation::new(
        bin,
        &["check", "--all-contexts", "-o", "json", "--now", NOW],
    );
    let slowest = Invocation::new(
        bin,
        &["--context", &names[0], "check", "-o", "json", "--now", NOW],
    );
    // One unmeasured warm-up of each, then interleaved measured runs.
    launcher.run(&fleet, &env, Stdout::Keep);
    let mut fleet_runs: Vec<Sample> = Vec::new();
    let mut slowest_runs: Vec<Sample> = Vec::new();
    let mut per_cluster: Vec<usize> = Vec::new();
    for _ in 0..REPEATS {
        clear();
        fleet_runs.push(launcher.run(&fleet, &env, Stdout::Discard));
        per_cluster = fakes.iter().map(|f| f.requests().len()).collect();
        slowest_runs.push(launcher.run(&slowest, &env, Stdout::Discard));
    }

    let kubectl = measure::find_kubectl();
    let loop_sample = kubectl.as_ref().map(|k| {
        let script = work.path().join("loop.sh");
        let body = format!(
            "for c in $({k} config get-contexts -o name); do\n  \
             {k} --context \"$c\" get leases -n kube-system\n  \
             {k} --context \"$c\" get etcdsnapshotfiles.k3s.cattle.io\n  \
             {k} --context \"$c\" get configmap -n kube-system k3s-etcd-snapshots\n\
             done\n",
            k = k.display()
        );
        std::fs::write(&script, body).expect("write the shell loop");
        launcher.run(
            &Invocation::new(Path::new("/bin/sh"), &[script.to_str().unwrap_or_default()]),
            &env,
            Stdout::Discard,
        )
    });

    let ms = |s: &Sample| s.wall.as_secs_f64() * 1000.0;
    let median = |samples: &[Sample], f: &dyn Fn(&Sample) -> f64| {
        let mut values: Vec<f64> = samples.iter().map(f).collect();
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    let fleet_ms = median(&fleet_runs, &ms);
    let fleet_rss = median(&fleet_runs, &|s| s.max_rss_kib as f64 / 1024.0);
    let slowest_ms = median(&slowest_runs, &ms);
    let exits: Vec<i32> = fleet_runs.iter().map(|s| s.exit).collect();
    let read: Vec<usize> = per_cluster.clone();
    let same = read.iter().all(|&n| n == single_requests);
    let verdict = |ok: bool| if ok { "met" } else { "missed" };

    println!();
    println!("| measure | value | target |");
    println!("|---|---:|---|");
    println!(
        "| `check --all-contexts`, wall ms (median of {REPEATS}) | {fleet_ms:.1} | ≤ slowest cluster + 1000 ms: {} |",
        verdict(fleet_ms <= slowest_ms + 1000.0)
    );
    println!("| slowest cluster alone, wall ms | {slowest_ms:.1} | – |");
    match &loop_sample {
        Some(s) => println!(
            "| shell loop ({CLUSTERS} × 3 kubectl), wall ms | {:.1} | fleet ≤ 0.1× loop: {} ({:.3}×) |",
            ms(s),
            verdict(fleet_ms <= 0.1 * ms(s)),
            fleet_ms / ms(s)
        ),
        None => println!("| shell loop | not run: kubectl not found (PATH or $KUBECTL) | – |"),
    }
    println!(
        "| peak RSS MiB | {fleet_rss:.1} | ≤ {RSS_LIMIT_MIB} MiB: {} |",
        verdict(fleet_rss <= RSS_LIMIT_MIB)
    );
    println!(
        "| requests per reachable cluster | {}–{} (single-cluster run: {single_requests}) | = single: {} |",
        read.iter().min().copied().unwrap_or_default(),
        read.iter().max().copied().unwrap_or_default(),
        verdict(same),
    );
    println!();
    println!(
        "exit codes of the measured fleet runs: {exits:?} (3 expected: one context refuses connections); \
         single-cluster run: exit {} in {:.1} ms",
        single_sample.exit,
        ms(&single_sample)
    );
}
