//! Rancher fleet benchmark: `K3SDOCTOR_ENVTEST=../shared/envtest cargo bench --bench rancher`.
//!
//! 200 fake downstream API servers (HTTPS, each with its own CA; 3 k3s servers, 2 Leases, 3
//! ETCDSnapshotFiles, the snapshot ConfigMaps), every request answered after 50 ms, behind one
//! Rancher proxy as `c-m-000` … `c-m-199`; the management cluster behind it as `local` is a
//! real apiserver with Rancher's CRDs and what Rancher 2.11.4 keeps for those clusters
//! (`rancher_seed.rs`). A Rancher-generated kubeconfig has one context per cluster plus `local`.
//! Measured with the release binary, one warm-up and then interleaved rounds:
//! - `--context local check --rancher-clusters --parallel 200`, and with the default parallelism;
//! - the slowest single cluster, `--context c-m-000 check` (which reads the management cluster
//!   for that one cluster too);
//! - the anchor: a shell loop of single checks over the 200 contexts.
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
mod rancher_seed;

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use measure::{Env, Invocation, Launcher, Sample, Stdout};
use support::envtest::{self, EnvTest, User};
use support::fake_api::{FakeApi, Fault, FaultAction, Role};
use support::fleet::{FleetContext, write_fleet_kubeconfig};
use support::objects::{NOW, extra_metadata, lease, server, snapshot_configmap, snapshot_cr};
use support::rancher::proxy::{Backend, RancherProxy};
use support::rancher::records::Rancher;

const CLUSTERS: usize = 200;
const LATENCY: Duration = Duration::from_millis(50);
const REPEATS: usize = 3;
const RSS_LIMIT_MIB: f64 = 96.0;
const RANCHER_VERSION: &str = "v2.11.4";
const NODES: [&str; 3] = ["s1", "s2", "s3"];
const T0: i64 = 1_717_142_400;
/// The Rancher user every context authenticates as; the proxy maps it to each backend's admin.
const USER: &str = "admin";
const RANCHER_TOKEN: &str =
    "kubeconfig-u-admin:0123456789abcdef0123456789abcdef0123456789abcdef012345";

fn seed(fake: &FakeApi) {
    for object in [
        server(NODES[0], "v1.29.6+k3s1"),
        server(NODES[1], "v1.29.6+k3s1"),
        server(NODES[2], "v1.29.6+k3s1"),
        lease("k3s", NODES[0], 1),
        lease("k3s-etcd", NODES[0], 1),
        snapshot_cr(NODES[0], T0, true),
        snapshot_cr(NODES[1], T0 + 60, true),
        snapshot_cr(NODES[2], T0 + 120, true),
        extra_metadata("k3s"),
        snapshot_configmap("k3s", &[]),
    ] {
        fake.put(object);
    }
}

fn main() {
    if !measure::should_run("rancher") {
        return;
    }
    if envtest::assets().is_none() {
        println!(
            "rancher: needs the real-apiserver test bed for the management cluster; run it with \
             `K3SDOCTOR_ENVTEST=/work/shared/envtest cargo bench --bench rancher`"
        );
        return;
    }
    // Before anything big is allocated: see measure.rs.
    let mut launcher = Launcher::start();
    let bin = Path::new(env!("CARGO_BIN_EXE_k3sdoctor"));
    let work = measure::Workspace::new();

    let started = Instant::now();
    let Some(management) = EnvTest::start("rancher benchmark (management)") else {
        return;
    };
    support::rancher::crds::install(management.admin());
    let fakes: Vec<FakeApi> = (0..CLUSTERS)
        .map(|_| {
            let fake = FakeApi::start_tls();
            seed(&fake);
            fake
        })
        .collect();
    let ids: Vec<String> = (0..CLUSTERS).map(|i| format!("c-m-{i:03}")).collect();
    let names: Vec<String> = (0..CLUSTERS).map(|i| format!("cluster-{i:03}")).collect();
    let members: Vec<rancher_seed::Member<'_>> = fakes
        .iter()
        .enumerate()
        .map(|(i, fake)| rancher_seed::Member {
            id: &ids[i],
            name: &names[i],
            nodes: &NODES,
            snapshot_files: fake.list("ETCDSnapshotFile"),
        })
        .collect();
    let rancher = Rancher::parse(RANCHER_VERSION).expect("a Rancher version");
    let written = rancher_seed::seed(
        &management.kubeconfig(User::Admin),
        rancher,
        RANCHER_VERSION,
        &members,
    );
    drop(members);

    let proxy = RancherProxy::start();
    proxy.add_user(USER, RANCHER_TOKEN);
    proxy.register("local", &envtest_backend(&management));
    for (fake, id) in fakes.iter().zip(&ids) {
        let tokens = HashMap::from([(USER.to_string(), Role::Admin.token().to_string())]);
        proxy.register(
            id,
            &Backend {
                server: fake.url(),
                ca_pem: fake.ca_pem().unwrap_or_default().to_string(),
                tokens,
            },
        );
        fake.inject(Fault::new(None, "", FaultAction::Delay(LATENCY)));
    }
    let kubeconfig = rancher_kubeconfig(work.path(), &proxy, &ids);
    let env = Env {
        kubeconfig,
        home: work.home.clone(),
        scratch: work.scratch.clone(),
    };
    let setup = started.elapsed();
    hold_if_asked(&env, bin);

    println!("k3sdoctor Rancher fleet benchmark (cargo bench --bench rancher)");
    println!();
    println!("- k3sdoctor: {}", bin.display());
    println!(
        "- downstream: {CLUSTERS} fake API servers (HTTPS, own CA each) with 3 servers on \
         v1.29.6+k3s1, 2 Leases, 3 ETCDSnapshotFiles, the snapshot ConfigMaps; every request \
         answered after {} ms",
        LATENCY.as_millis()
    );
    println!(
        "- Rancher: one TLS proxy routing /k8s/clusters/<id> (a fresh TLS connection to the \
         backend per request, as the test proxy does); `local` a real kube-apiserver v1.24 with \
         Rancher's CRDs: {CLUSTERS} management and provisioning Clusters (Connected, \
         administrated, {}), {CLUSTERS} RKEControlPlanes, {} Machines, {} records as \
         Rancher {RANCHER_VERSION} writes them, the backpopulate Feature, the server-version \
         Setting",
        rancher_seed::WORKSPACE,
        written.machines,
        written.records
    );
    println!(
        "- kubeconfig: {} contexts (`local` and one per cluster), one Rancher token; set up in {:.1} s",
        CLUSTERS + 1,
        setup.as_secs_f64()
    );

    let clear = || {
        fakes.iter().for_each(FakeApi::clear_requests);
        proxy.clear_requests();
    };
    let check = |context: &str, extra: &[&str]| {
        let mut args = vec!["--context", context, "check"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["-o", "json", "--now", NOW]);
        Invocation::new(bin, &args)
    };
    let fleet_wide = check("local", &["--rancher-clusters", "--parallel", "200"]);
    let fleet_default = check("local", &["--rancher-clusters"]);
    let slowest = check(&ids[0], &[]);

    // The single-cluster request counts, downstream and on `local`.
    clear();
    let single_sample = launcher.run(&check(&ids[1], &[]), &env, Stdout::Discard);
    let single_requests = fakes[1].requests().len();
    let single_local = proxy.requests_to("local").len();

    // Unmeasured warm-ups; the fleet's output kept to say what it concluded.
    launcher.run(&slowest, &env, Stdout::Discard);
    let warm = launcher.run(&fleet_wide, &env, Stdout::Keep);
    let verdict_line = describe_fleet(&env, warm.exit);

    let loop_script = work.path().join("loop.sh");
    write_loop(&loop_script, bin, &ids);
    let mut runs: HashMap<&str, Vec<Sample>> = HashMap::new();
    let mut per_cluster: Vec<usize> = Vec::new();
    let mut fleet_local = 0;
    for round in 1..=REPEATS {
        eprintln!("rancher bench: round {round} of {REPEATS}");
        clear();
        let sample = launcher.run(&fleet_wide, &env, Stdout::Discard);
        per_cluster = fakes.iter().map(|f| f.requests().len()).collect();
        fleet_local = proxy.requests_to("local").len();
        runs.entry("wide").or_default().push(sample);
        let sample = launcher.run(&fleet_default, &env, Stdout::Discard);
        runs.entry("default").or_default().push(sample);
        let sample = launcher.run(&slowest, &env, Stdout::Discard);
        runs.entry("slowest").or_default().push(sample);
        runs.entry("loop")
            .or_default()
            .push(run_loop(&loop_script, &env));
    }

    let ms = |s: &Sample| s.wall.as_secs_f64() * 1000.0;
    let mib = |s: &Sample| s.max_rss_kib as f64 / 1024.0;
    let median = |key: &str, f: &dyn Fn(&Sample) -> f64| {
        let mut values: Vec<f64> = runs[key].iter().map(f).collect();
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    let exits = |key: &str| runs[key].iter().map(|s| s.exit).collect::<Vec<_>>();
    let (wide_ms, default_ms) = (median("wide", &ms), median("default", &ms));
    let (slowest_ms, loop_ms) = (median("slowest", &ms), median("loop", &ms));
    let (wide_rss, default_rss) = (median("wide", &mib), median("default", &mib));
    let slowest_rss = median("slowest", &mib);
    let budget_ms = 1.2 * slowest_ms + 1000.0;
    let met = |ok: bool| if ok { "met" } else { "missed" };
    let floor = launcher.floor(&env).map(|s| mib(&s)).unwrap_or_default();

    println!();
    println!("| measure (median of {REPEATS}) | wall ms | peak RSS MiB | target |");
    println!("|---|---:|---:|---|");
    println!(
        "| `check --rancher-clusters --parallel 200` | {wide_ms:.0} | {wide_rss:.1} | ≤ 1.2 × slowest + 1000 ms = {budget_ms:.0} ms: {}; ≤ {RSS_LIMIT_MIB} MiB: {} |",
        met(wide_ms <= budget_ms),
        met(wide_rss <= RSS_LIMIT_MIB)
    );
    println!(
        "| `check --rancher-clusters` (default --parallel 16) | {default_ms:.0} | {default_rss:.1} | for the record ({}) |",
        if default_ms <= budget_ms {
            "within the time budget"
        } else {
            "over the time budget"
        }
    );
    println!(
        "| slowest cluster alone, `--context {} check` | {slowest_ms:.0} | {slowest_rss:.1} | – |",
        ids[0]
    );
    println!(
        "| shell loop of {CLUSTERS} single checks | {loop_ms:.0} | – | fleet is {:.1}× faster |",
        loop_ms / wide_ms
    );
    println!(
        "| downstream requests per cluster, fleet run | {}–{} (single check: {single_requests}) | – | = single: {} |",
        per_cluster.iter().min().copied().unwrap_or_default(),
        per_cluster.iter().max().copied().unwrap_or_default(),
        met(per_cluster.iter().all(|&n| n == single_requests))
    );
    println!(
        "| requests to `local`, fleet run | {fleet_local} (single check: {single_local}) | – | – |"
    );
    println!();
    println!(
        "exit codes: --parallel 200 {:?}, --parallel 16 {:?}, slowest {:?}, loop {:?}; \
         single check of {}: exit {} in {:.0} ms; RSS floor of a trivial program through the \
         launcher {floor:.1} MiB",
        exits("wide"),
        exits("default"),
        exits("slowest"),
        exits("loop"),
        ids[1],
        single_sample.exit,
        ms(&single_sample)
    );
    println!("{verdict_line}");
}

/// The management apiserver as the proxy's backend: its URL, CA and static tokens.
fn envtest_backend(env: &EnvTest) -> Backend {
    let pki = env.scratch().join("pki");
    let tokens = std::fs::read_to_string(pki.join("tokens.csv")).expect("the test bed's tokens");
    Backend {
        server: env.server().to_string(),
        ca_pem: std::fs::read_to_string(pki.join("ca.crt")).expect("the test bed's CA"),
        tokens: tokens
            .lines()
            .filter_map(|line| {
                let mut fields = line.split(',');
                let token = fields.next()?;
                let user = fields.next()?;
                Some((user.to_string(), token.to_string()))
            })
            .collect(),
    }
}

/// As Rancher generates one: every context through the proxy with the same token, `local`
/// first and current.
fn rancher_kubeconfig(dir: &Path, proxy: &RancherProxy, ids: &[String]) -> std::path::PathBuf {
    let servers: Vec<(String, String)> = std::iter::once("local")
        .chain(ids.iter().map(String::as_str))
        .map(|id| (id.to_string(), proxy.cluster_url(id)))
        .collect();
    let contexts: Vec<FleetContext<'_>> = servers
        .iter()
        .map(|(name, server)| FleetContext {
            name,
            server,
            token: RANCHER_TOKEN,
            ca_pem: Some(proxy.ca_pem()),
        })
        .collect();
    write_fleet_kubeconfig(dir, "rancher.yaml", &contexts)
}

fn write_loop(script: &Path, bin: &Path, ids: &[String]) {
    let body = format!(
        "for c in {}; do\n  {} --context \"$c\" check -o json --now {NOW} >/dev/null\ndone\n",
        ids.join(" "),
        bin.display()
    );
    std::fs::write(script, body).expect("write the shell loop");
}

/// The loop runs longer than the launcher's per-child limit, and only its wall time matters:
/// it is timed here. The same cleared environment as the launcher's children.
fn run_loop(script: &Path, env: &Env) -> Sample {
    let started = Instant::now();
    let status = Command::new("/bin/sh")
        .arg(script)
        .env_clear()
        .env("HOME", &env.home)
        .env("KUBECONFIG", &env.kubeconfig)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .current_dir(&env.home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run the shell loop");
    Sample {
        wall: started.elapsed(),
        max_rss_kib: 0,
        exit: status.code().unwrap_or(-1),
    }
}

/// One line on what the warm-up fleet run concluded: its exit, how many clusters were checked,
/// and how many had Rancher's side compared.
fn describe_fleet(env: &Env, exit: i32) -> String {
    let text = std::fs::read_to_string(measure::stdout_path(env)).unwrap_or_default();
    let Ok(report) = serde_json::from_str::<serde_json::Value>(&text) else {
        let stderr = std::fs::read_to_string(measure::stderr_path(env)).unwrap_or_default();
        return format!(
            "warm-up fleet run: exit {exit}, no JSON report; stderr: {}",
            stderr.lines().take(5).collect::<Vec<_>>().join(" / ")
        );
    };
    let entries = report["entries"].as_array().cloned().unwrap_or_default();
    let unreadable = entries.iter().filter(|e| !e["error"].is_null()).count();
    let with_rancher = entries
        .iter()
        .filter(|e| text_has(e, "\"rancher\""))
        .count();
    format!(
        "warm-up fleet run: exit {exit}, {} entries, {unreadable} unreadable, {with_rancher} \
         mentioning Rancher; summary {}",
        entries.len(),
        report["summary"]
    )
}

/// `K3SDOCTOR_BENCH_HOLD=1`: after setting up, print how to reach the bed and keep it up
/// until the named file is removed, to profile runs by hand.
fn hold_if_asked(env: &Env, bin: &Path) {
    if std::env::var_os("K3SDOCTOR_BENCH_HOLD").is_none() {
        return;
    }
    let flag = env.scratch.join("hold");
    std::fs::write(&flag, "remove me to go on\n").expect("write the hold file");
    println!(
        "holding: KUBECONFIG={} HOME={} {}; remove {} to go on",
        env.kubeconfig.display(),
        env.home.display(),
        bin.display(),
        flag.display()
    );
    while flag.exists() {
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn text_has(value: &serde_json::Value, needle: &str) -> bool {
    value.to_string().contains(needle)
}
