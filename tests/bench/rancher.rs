//! Rancher fleet benchmark: `K3SDOCTOR_ENVTEST=../shared/envtest cargo bench --bench rancher`.
//!
//! 500 fake downstream API servers (HTTPS, each with its own CA; 3 k3s servers, 2 Leases, 3
//! ETCDSnapshotFiles, the snapshot ConfigMaps), every request answered after 50 ms, behind one
//! Rancher proxy (HTTP/2 by ALPN, as Rancher) as `c-m-000` … `c-m-499`; the management
//! cluster behind it as `local` is a real apiserver with Rancher's CRDs and what Rancher
//! 2.11.4 keeps for those clusters (`rancher_seed.rs`). A Rancher-generated kubeconfig has one context per cluster plus `local`.
//! Measured with the release binary (and, with `K3SDOCTOR_BENCH_BEFORE=PATH`, another build
//! the same way, rounds interleaved), one warm-up and then interleaved rounds:
//! - `--context local check --rancher-clusters --parallel 500`, and with the default parallelism,
//!   each with the TLS handshakes the proxy completed during the run;
//! - the slowest single cluster, `--context c-m-000 check` (which reads the management cluster
//!   for that one cluster too);
//! - then 5 clusters lose their agent: Rancher still lists them connected, and the proxy
//!   answers "cluster agent disconnected" after 20, 25, 30, 35 and 40 s; one fleet run each.
//!
//! `K3SDOCTOR_BENCH_CLUSTERS=N` sets the number of clusters (default 500). It prints one
//! markdown table with the targets and never fails on a number. `cargo test --benches`
//! only prints how to run it.

#[path = "../support/mod.rs"]
// Cargo compiles benches with `--cfg test` but, without the harness, drops their `#[test]`
// functions, which leaves the `use super::*` of the support files' unit-test modules unused.
#[allow(unused_imports)]
mod support;

// Shared with the perf benchmark, which uses all of it; this one does not.
#[allow(dead_code)]
mod measure;
mod rancher_runs;
mod rancher_seed;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use measure::{Env, Launcher};
use rancher_runs::{Bench, Build};
use support::envtest::{self, EnvTest, User};
use support::fake_api::{FakeApi, Fault, FaultAction};
use support::fleet::{FleetContext, write_fleet_kubeconfig};
use support::objects::{extra_metadata, lease, server, snapshot_configmap, snapshot_cr};
use support::rancher::proxy::{Backend, Disconnected, RancherProxy};
use support::rancher::records::Rancher;

const CLUSTERS: usize = 500;
const LATENCY: Duration = Duration::from_millis(50);
/// Rancher's dialer gives up on a cluster without its agent after four jittered 5 s rounds.
const DISCONNECTED_AFTER: [u64; 5] = [20, 25, 30, 35, 40];
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
    let launcher = Launcher::start();
    let mut builds = vec![Build {
        name: "after",
        bin: PathBuf::from(env!("CARGO_BIN_EXE_k3sdoctor")),
    }];
    if let Some(before) = std::env::var_os("K3SDOCTOR_BENCH_BEFORE") {
        builds.insert(
            0,
            Build {
                name: "before",
                bin: PathBuf::from(before),
            },
        );
    }
    let clusters: usize = std::env::var("K3SDOCTOR_BENCH_CLUSTERS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(CLUSTERS);
    let work = measure::Workspace::new();

    let started = Instant::now();
    let Some(management) = EnvTest::start("rancher benchmark (management)") else {
        return;
    };
    support::rancher::crds::install(management.admin());
    // One runtime serves every fake cluster: a thread pool per fake (1,500 threads at 500
    // clusters) spent a core of the two in context switches, time taken from the runs measured.
    let fake_runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime for the fake clusters");
    let fakes: Vec<FakeApi> = (0..clusters)
        .map(|_| {
            let fake = FakeApi::start_tls_in(fake_runtime.handle());
            seed(&fake);
            fake
        })
        .collect();
    let ids: Vec<String> = (0..clusters).map(|i| format!("c-m-{i:03}")).collect();
    let names: Vec<String> = (0..clusters).map(|i| format!("cluster-{i:03}")).collect();
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
        proxy.register(id, &Backend::fake_admin(fake, USER));
        fake.inject(Fault::new(None, "", FaultAction::Delay(LATENCY)));
    }
    let kubeconfig = rancher_kubeconfig(work.path(), &proxy, &ids);
    let env = Env {
        kubeconfig,
        home: work.home.clone(),
        scratch: work.scratch.clone(),
    };
    let setup = started.elapsed();
    hold_if_asked(&env, &builds[builds.len() - 1].bin);

    println!("k3sdoctor Rancher fleet benchmark (cargo bench --bench rancher)");
    println!();
    for build in &builds {
        println!("- k3sdoctor {}: {}", build.name, build.bin.display());
    }
    println!(
        "- downstream: {clusters} fake API servers (HTTPS, own CA each, all on one 2-thread \
         runtime) with 3 servers on \
         v1.29.6+k3s1, 2 Leases, 3 ETCDSnapshotFiles, the snapshot ConfigMaps; every request \
         answered after {} ms",
        LATENCY.as_millis()
    );
    println!(
        "- Rancher: one TLS proxy routing /k8s/clusters/<id>, HTTP/2 to a client that offers \
         it by ALPN and HTTP/1.1 otherwise, as Rancher's listener; its connections to each \
         backend reused, as Rancher reuses its tunnel to an agent; `local` a real kube-apiserver \
         v1.24 with Rancher's CRDs: {clusters} management and provisioning Clusters (Connected, \
         administrated, {}), {clusters} RKEControlPlanes, {} Machines, {} records as Rancher \
         {RANCHER_VERSION} writes them, the backpopulate Feature, the server-version Setting",
        rancher_seed::WORKSPACE,
        written.machines,
        written.records
    );
    println!(
        "- kubeconfig: {} contexts (`local` and one per cluster), one Rancher token; set up in {:.1} s",
        clusters + 1,
        setup.as_secs_f64()
    );

    let mut bench = Bench {
        launcher,
        env: &env,
        proxy: &proxy,
        fakes: &fakes,
        ids: &ids,
        builds: &builds,
        results: HashMap::new(),
    };
    bench.measure_healthy();
    // The last clusters lose their agent; Rancher still lists them connected.
    let gone: Vec<&str> = ids
        .iter()
        .rev()
        .take(DISCONNECTED_AFTER.len())
        .map(String::as_str)
        .collect();
    for (id, secs) in gone.iter().zip(DISCONNECTED_AFTER) {
        proxy.register_disconnected_after(
            id,
            Disconnected::AgentDisconnected,
            Duration::from_secs(secs),
        );
    }
    let disconnected = bench.measure_disconnected(&gone);
    bench.print(&disconnected);
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
fn rancher_kubeconfig(dir: &Path, proxy: &RancherProxy, ids: &[String]) -> PathBuf {
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
