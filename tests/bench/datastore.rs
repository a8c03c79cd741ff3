//! Datastore benchmark: `cargo bench --bench datastore`.
//!
//! What reading every server's `/metrics` costs `check`: the fake API server answers
//! `GET /metrics` with (a) a 1.33 apiserver's recorded answer (0.4 MB), (b) a 100 MB answer of
//! well-formed series nobody reads, and (c) 404, which costs one request and no reading. The
//! release binary runs `check -o json` 5 times on each (after a warm-up) and one markdown table
//! gives the median wall time and the child's peak RSS. The cap is 16 MiB and the answer is
//! read line by line, so (b) must cost about what (a) does, not 100 MB; (a) against (c) is what
//! the read adds to `check`. Then five servers at five loopback addresses, against an older
//! binary when `K3SDOCTOR_BENCH_BEFORE` names one (the "1.2× today's wall time" of issue 42).
//! It measures and reports; it never fails on a number.

#[path = "../support/mod.rs"]
// Cargo compiles benches with `--cfg test` but, without the harness, drops their `#[test]`
// functions, which leaves the `use super::*` of the support files' unit-test modules unused.
#[allow(unused_imports)]
mod support;

// Shared with the perf benchmark, which uses all of it; this one does not.
#[allow(dead_code)]
mod measure;

use std::path::Path;

use measure::{Env, Invocation, Launcher, Sample, Stdout};
use serde_json::json;
use support::fake_api::{FakeApi, Fault, Role};
use support::objects::{NOW, lease, numbered_snapshot_cr, server_at};

const V: &str = "v1.33.5+k3s1";
const RECORDED: &str = include_str!("../fixtures/metrics/apiserver-v1.33.txt");
const REPEATS: usize = 5;
const HUGE_BYTES: usize = 100_000_000;
/// The history of the second five-server cluster: what `snapshots diff` and `check` list.
const SNAPSHOT_FILES: usize = 2_000;

fn median(mut samples: Vec<Sample>) -> Sample {
    samples.sort_by_key(|s| s.wall);
    samples[samples.len() / 2]
}

fn main() {
    if !measure::should_run("datastore") {
        return;
    }
    // Before anything big is allocated: see measure.rs.
    let mut launcher = Launcher::start();
    let bin = Path::new(env!("CARGO_BIN_EXE_k3sdoctor"));
    let work = measure::Workspace::new();
    let fake = FakeApi::start();
    let ip = fake.addr().ip().to_string();
    // One etcd server whose published address is the fake itself, its etcd out of reach.
    let mut node = server_at("s1", V, &ip);
    node["metadata"]["annotations"]["etcd.k3s.cattle.io/node-address"] = json!("198.51.100.7");
    for object in [
        node,
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
        json!({"apiVersion": "v1", "kind": "Endpoints",
               "metadata": {"name": "kubernetes", "namespace": "default"},
               "subsets": [{"addresses": [{"ip": ip}],
                            "ports": [{"name": "https", "port": fake.addr().port(), "protocol": "TCP"}]}]}),
    ] {
        fake.put(object);
    }
    let env = Env {
        kubeconfig: fake.write_kubeconfig(work.path(), Role::ReadOnly),
        home: work.home.clone(),
        scratch: work.scratch.clone(),
    };
    let check = Invocation::new(
        bin,
        &["check", "-o", "json", "--fail-on", "never", "--now", NOW],
    );
    let line = "noise_bucket{le=\"0.005\",resource=\"pods\",verb=\"GET\"} 12345\n";
    let huge = line.repeat(HUGE_BYTES / line.len());

    println!("k3sdoctor datastore benchmark (cargo bench --bench datastore)");
    println!();
    println!("| /metrics answer | median wall | median peak RSS |");
    println!("|---|---|---|");
    let floor = launcher.floor(&env);
    let cases: [(&str, Option<&str>); 3] = [
        ("recorded 1.33 apiserver (0.4 MB)", Some(RECORDED)),
        ("100 MB of series (cut at 16 MiB)", Some(&huge)),
        ("404: no metrics read", None),
    ];
    for (name, answer) in cases {
        fake.clear_faults();
        match answer {
            Some(text) => fake.set_metrics(text),
            None => fake.inject(Fault::status("GET", "/metrics", 404)),
        }
        launcher.run(&check, &env, Stdout::Discard);
        let runs: Vec<Sample> = (0..REPEATS)
            .map(|_| launcher.run(&check, &env, Stdout::Discard))
            .collect();
        let m = median(runs);
        println!(
            "| {name} | {} ms | {} MiB |",
            m.wall.as_millis(),
            m.max_rss_kib / 1024
        );
    }
    if let Some(floor) = floor {
        println!();
        println!(
            "Peak RSS of `true` through the same launcher: {} MiB.",
            floor.max_rss_kib / 1024
        );
    }
    five_servers(&mut launcher, &work, bin);
}

/// Five servers, each at its own loopback address (one fake answers them all), each
/// publishing the recorded 1.33 answer; their etcd's `:2381` refuses, as k3s's default
/// loopback-only metrics do from elsewhere. With `K3SDOCTOR_BENCH_BEFORE` naming an older
/// binary (built from a commit before the metrics reads), the two run in turn and the table
/// gives the ratio of their medians: the goal is at most 1.2.
fn five_servers(launcher: &mut Launcher, work: &measure::Workspace, bin: &Path) {
    let ips = [
        "127.0.0.11",
        "127.0.0.12",
        "127.0.0.13",
        "127.0.0.14",
        "127.0.0.15",
    ];
    let fake = FakeApi::start_tls_on_each(&ips);
    fake.set_metrics(RECORDED);
    let port = fake.addr().port();
    for (i, ip) in ips.iter().enumerate() {
        fake.put(server_at(&format!("s{}", i + 1), V, ip));
    }
    fake.put(lease("k3s", "s1", 1));
    fake.put(lease("k3s-etcd", "s1", 1));
    fake.put(json!({"apiVersion": "v1", "kind": "Endpoints",
                    "metadata": {"name": "kubernetes", "namespace": "default"},
                    "subsets": [{"addresses": ips.iter().map(|ip| json!({"ip": ip})).collect::<Vec<_>>(),
                                 "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}]}));
    let env = Env {
        kubeconfig: fake.write_kubeconfig_trusting(work.path(), Role::ReadOnly),
        home: work.home.clone(),
        scratch: work.scratch.clone(),
    };
    let args = ["check", "-o", "json", "--fail-on", "never", "--now", NOW];
    let before = std::env::var_os("K3SDOCTOR_BENCH_BEFORE").map(std::path::PathBuf::from);
    let mut binaries = vec![("this build", bin.to_path_buf())];
    binaries.extend(before.map(|b| ("K3SDOCTOR_BENCH_BEFORE", b)));
    let invocations: Vec<Invocation> = binaries
        .iter()
        .map(|(_, b)| Invocation::new(b, &args))
        .collect();
    compare(launcher, &env, &binaries, &invocations, "no snapshots");
    // A cluster with history: the lists `check` makes anyway now take time of their own.
    let servers: Vec<String> = (1..=ips.len()).map(|i| format!("s{i}")).collect();
    let servers: Vec<&str> = servers.iter().map(String::as_str).collect();
    for i in 0..SNAPSHOT_FILES {
        fake.put(numbered_snapshot_cr(i, &servers, 1_717_153_200));
    }
    compare(
        launcher,
        &env,
        &binaries,
        &invocations,
        &format!("{SNAPSHOT_FILES} ETCDSnapshotFiles"),
    );
    let metrics_reads = fake
        .requests()
        .iter()
        .filter(|r| r.path == "/metrics")
        .count();
    println!();
    println!(
        "The fake answered {metrics_reads} GET /metrics in all ({} runs of this build).",
        2 * (REPEATS + 1)
    );
}

/// Each binary in turn, so a drift of the machine's speed falls on both alike; one table.
fn compare(
    launcher: &mut Launcher,
    env: &Env,
    binaries: &[(&str, std::path::PathBuf)],
    invocations: &[Invocation],
    cluster: &str,
) {
    for inv in invocations {
        launcher.run(inv, env, Stdout::Discard);
    }
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); invocations.len()];
    for _ in 0..REPEATS {
        for (i, inv) in invocations.iter().enumerate() {
            samples[i].push(launcher.run(inv, env, Stdout::Discard));
        }
    }
    let medians: Vec<Sample> = samples.into_iter().map(median).collect();
    println!();
    println!(
        "Five servers, each read at its own address, {cluster} (`check -o json`, median of {REPEATS}):"
    );
    println!();
    println!("| binary | median wall | median peak RSS | wall ÷ this build's |");
    println!("|---|---|---|---|");
    for ((name, _), m) in binaries.iter().zip(&medians) {
        println!(
            "| {name} | {} ms | {} MiB | {:.2} |",
            m.wall.as_millis(),
            m.max_rss_kib / 1024,
            m.wall.as_secs_f64() / medians[0].wall.as_secs_f64()
        );
    }
}
