//! Admission-webhook benchmark: `cargo bench --bench webhooks`.
//!
//! What reading the admission webhooks and the Services they name costs `check`: the fake API
//! server holds a 3-server v1.31 cluster (no SUC Plans), 60 ETCDSnapshotFiles and four webhooks
//! in three configurations (a kyverno-like one excluding kube-system, a Rancher-like one, a
//! fail-closed one on kube-system's Leases whose Service has no endpoints, a `url:` one), their
//! Services and Endpoints. The release binary runs `check -o json` and, when
//! `K3SDOCTOR_BASELINE` names a binary built from before this check (e.g. `git archive` of the
//! parent commit, `cargo build --release`), that binary too, alternately, `REPEATS` times each
//! after a warm-up; one markdown table gives the median wall times and their ratio, both with
//! the fake answering at once and with every request delayed 5 ms (a LAN's round trip, where
//! requests in a row add up and requests side by side do not). It measures and reports; it
//! never fails on a number.

#[path = "../support/mod.rs"]
// Cargo compiles benches with `--cfg test` but, without the harness, drops their `#[test]`
// functions, which leaves the `use super::*` of the support files' unit-test modules unused.
#[allow(unused_imports)]
mod support;

// Shared with the perf benchmark, which uses all of it; this one does not.
#[allow(dead_code)]
mod measure;

use std::path::{Path, PathBuf};
use std::time::Duration;

use measure::{Env, Invocation, Launcher, Sample, Stdout};
use serde_json::{Value, json};
use support::fake_api::{FakeApi, Fault, Role};
use support::objects::{NOW, lease, numbered_snapshot_cr, server_at};

const V: &str = "v1.31.5+k3s1";
const REPEATS: usize = 9;
const SNAPSHOTS: usize = 60;
const ROUND_TRIP: Duration = Duration::from_millis(5);

fn median(mut samples: Vec<Sample>) -> Sample {
    samples.sort_by_key(|s| s.wall);
    samples[samples.len() / 2]
}

fn configuration(kind: &str, name: &str, webhooks: Value) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
           "metadata": {"name": name}, "webhooks": webhooks})
}

fn service(namespace: &str, name: &str, ready: bool) -> [Value; 2] {
    let addresses = if ready {
        "addresses"
    } else {
        "notReadyAddresses"
    };
    [
        json!({"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": name, "namespace": namespace},
               "spec": {"ports": [{"port": 443}]}}),
        json!({"apiVersion": "v1", "kind": "Endpoints",
               "metadata": {"name": name, "namespace": namespace},
               "subsets": [{addresses: [{"ip": "10.42.0.9"}], "ports": [{"port": 9443}]}]}),
    ]
}

/// The cluster: three servers, their locks, the snapshots, the webhooks and their Services.
fn objects() -> Vec<Value> {
    let servers = ["s1", "s2", "s3"];
    let mut objects: Vec<Value> = servers
        .iter()
        .enumerate()
        .map(|(i, s)| server_at(s, V, &format!("10.0.0.{}", i + 1)))
        .collect();
    objects.push(lease("k3s", "s1", 1));
    objects.push(lease("k3s-etcd", "s1", 1));
    objects.extend((0..SNAPSHOTS).map(|i| numbered_snapshot_cr(i, &servers, 1_717_157_000)));
    let everything = json!([{"operations": ["CREATE", "UPDATE"], "apiGroups": ["*"],
                            "apiVersions": ["*"], "resources": ["*"]}]);
    let leases = json!([{"operations": ["UPDATE"], "apiGroups": ["coordination.k8s.io"],
                        "apiVersions": ["v1"], "resources": ["leases"]}]);
    objects.push(configuration(
        "ValidatingWebhookConfiguration",
        "kyverno-resource-validating-webhook-cfg",
        json!([{"name": "validate.kyverno.svc-fail", "rules": everything,
                "namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name",
                    "operator": "NotIn", "values": ["kube-system", "kyverno"]}]},
                "clientConfig": {"service": {"namespace": "kyverno", "name": "kyverno-svc"}}}]),
    ));
    objects.push(configuration(
        "ValidatingWebhookConfiguration",
        "rancher.cattle.io",
        json!([{"name": "rancher.cattle.io.namespaces", "rules": [{"operations": ["UPDATE"],
                    "apiGroups": [""], "apiVersions": ["v1"], "resources": ["namespaces"]}],
                "clientConfig": {"service": {"namespace": "cattle-system", "name": "rancher-webhook"}}},
               {"name": "leases.gate.example.com", "rules": leases,
                "clientConfig": {"service": {"namespace": "policy", "name": "gate"}}}]),
    ));
    objects.push(configuration(
        "MutatingWebhookConfiguration",
        "labeler",
        json!([{"name": "nodes.labeler.example.com", "rules": [{"operations": ["UPDATE"],
                    "apiGroups": [""], "apiVersions": ["v1"], "resources": ["nodes"]}],
                "clientConfig": {"url": "https://labeler.example.com/mutate"}}]),
    ));
    objects.extend(service("kyverno", "kyverno-svc", true));
    objects.extend(service("cattle-system", "rancher-webhook", true));
    objects.extend(service("policy", "gate", false));
    objects
}

fn main() {
    if !measure::should_run("webhooks") {
        return;
    }
    // Before anything big is allocated: see measure.rs.
    let mut launcher = Launcher::start();
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_k3sdoctor"));
    let baseline = std::env::var_os("K3SDOCTOR_BASELINE").map(PathBuf::from);
    let work = measure::Workspace::new();
    let fake = FakeApi::with_objects(objects());
    let env = Env {
        kubeconfig: fake.write_kubeconfig(work.path(), Role::ReadOnly),
        home: work.home.clone(),
        scratch: work.scratch.clone(),
    };
    let args = ["check", "-o", "json", "--fail-on", "never", "--now", NOW];
    let check = |program: &Path| Invocation::new(program, &args);

    println!("k3sdoctor admission-webhook benchmark (cargo bench --bench webhooks)");
    println!();
    match &baseline {
        Some(path) => println!("baseline: {}", path.display()),
        None => println!("no K3SDOCTOR_BASELINE: this build only"),
    }
    println!();
    println!("| answers | this build, median wall | baseline, median wall | ratio |");
    println!("|---|---|---|---|");
    for (name, delay) in [("at once", None), ("each delayed 5 ms", Some(ROUND_TRIP))] {
        fake.clear_faults();
        if let Some(delay) = delay {
            fake.inject(Fault::delay("*", "/api", delay));
        }
        let mut now_runs = Vec::new();
        let mut before_runs = Vec::new();
        launcher.run(&check(&bin), &env, Stdout::Discard);
        if let Some(base) = &baseline {
            launcher.run(&check(base), &env, Stdout::Discard);
        }
        for _ in 0..REPEATS {
            now_runs.push(launcher.run(&check(&bin), &env, Stdout::Discard));
            if let Some(base) = &baseline {
                before_runs.push(launcher.run(&check(base), &env, Stdout::Discard));
            }
        }
        let now = median(now_runs).wall;
        let (before, ratio) = match before_runs.is_empty() {
            true => ("-".to_string(), "-".to_string()),
            false => {
                let before = median(before_runs).wall;
                (
                    format!("{} ms", before.as_millis()),
                    format!("{:.2}", now.as_secs_f64() / before.as_secs_f64()),
                )
            }
        };
        println!("| {name} | {} ms | {before} | {ratio} |", now.as_millis());
    }
}
