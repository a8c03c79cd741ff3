//! Datastore benchmark: `cargo bench --bench datastore`.
//!
//! What reading every server's `/metrics` costs `check`: the fake API server answers
//! `GET /metrics` with (a) a 1.33 apiserver's recorded answer (0.4 MB), (b) a 100 MB answer of
//! well-formed series nobody reads, and (c) 404, which costs one request and no reading. The
//! release binary runs `check -o json` 5 times on each (after a warm-up) and one markdown table
//! gives the median wall time and the child's peak RSS. The cap is 16 MiB and the answer is
//! read line by line, so (b) must cost about what (a) does, not 100 MB; (a) against (c) is what
//! the read adds to `check`. It measures and reports; it never fails on a number.

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
use support::objects::{NOW, lease, server_at};

const V: &str = "v1.33.5+k3s1";
const RECORDED: &str = include_str!("../fixtures/metrics/apiserver-v1.33.txt");
const REPEATS: usize = 5;
const HUGE_BYTES: usize = 100_000_000;

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
}
