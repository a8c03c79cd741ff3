//! Many ETCDSnapshotFiles on the real kube-apiserver: the paged, projected read
//! gives the report the whole-object read gives (CI, 1,200 CRs so the list takes 3 pages), and
//! an on-demand benchmark of memory and time at 5,000 and 50,000 CRs (docs/performance.md):
//!
//! ```sh
//! cargo build --release --locked
//! K3SDOCTOR_ENVTEST=../shared/envtest K3SDOCTOR_BENCH_BIN=$PWD/target/release/k3sdoctor \
//!   cargo test --locked --test real_apiserver many_snapshot_files::benchmark -- --ignored --nocapture
//! ```
//!
//! `many_snapshot_files::benchmark_all_missing` measures the same on a bed where the snapshot
//! controller never ran (no finalizers, no entries, so every CR is missing).
//! `K3SDOCTOR_BENCH_SIZES=5000,50000` (the default) sets the CR counts; the same bed grows
//! from one to the next. `K3SDOCTOR_BENCH_BIN` may name several builds, `label=path,…`, to
//! compare them side by side on the same objects.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{Value, json};

use crate::peak_launcher::PeakLauncher;
use crate::support::envtest::{EnvTest, User};
use crate::support::k3s_sim::snapshot_entry::{S3ConfigShape, data_key, entry_value};
use crate::support::objects::{extra_metadata, numbered_snapshot_cr, server, snapshot_configmap};
use crate::support::scrape::{get, served_address};
use crate::support::wait::wait_for;

const FILES: &str = "/apis/k3s.cattle.io/v1/etcdsnapshotfiles";
const SERVERS: [&str; 3] = ["server-1", "server-2", "server-3"];
/// The newest snapshot; every server takes one an hour, a second after the previous one.
const NEWEST: i64 = 1_717_156_840;
/// k3s's ConfigMap limit: the newest entries that fit in 1 MiB are kept.
const CONFIGMAP_LIMIT: usize = 1_048_576;
/// The same "now" for every run, so reports compare byte for byte.
const NOW: &str = "2024-05-31T12:20:40Z";

/// What the snapshot controller made of the CRs.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Scenario {
    /// It ran: every CR has its finalizer, and the ConfigMap holds the newest entries up to
    /// 1 MiB, so most CRs are `snapshot-pruned-for-size`.
    Pruned,
    /// It never ran (a split, or a shared S3 folder listing thousands of objects on a new
    /// cluster): no finalizers and no entries, so every CR is `missing`.
    AllMissing,
}

/// The `i`-th newest snapshot (`numbered_snapshot_cr`), with the controller's finalizer
/// where the controller ran.
fn snapshot(i: usize, scenario: Scenario) -> Value {
    let mut cr = numbered_snapshot_cr(i, &SERVERS, NEWEST);
    if scenario == Scenario::Pruned {
        cr["metadata"]["finalizers"] =
            json!(["wrangler.cattle.io/managed-etcd-snapshots-controller"]);
    }
    cr
}

/// Creates CRs `from..to` through the API, 64 requests in flight.
fn create_files(env: &EnvTest, from: usize, to: usize, scenario: Scenario) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime for the seeding");
    runtime.block_on(async {
        let kubeconfig = kube::config::Kubeconfig::read_from(env.kubeconfig(User::Admin)).unwrap();
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .unwrap();
        let client = kube::Client::try_from(config).unwrap();
        let failures = futures::stream::iter(from..to)
            .map(|i| {
                let client = client.clone();
                async move {
                    let request = http::Request::post(FILES)
                        .header("Content-Type", "application/json")
                        .body(snapshot(i, scenario).to_string().into_bytes())
                        .unwrap();
                    match client.request_text(request).await {
                        Ok(_) => None,
                        Err(kube::Error::Api(status)) if status.code == 409 => None,
                        Err(e) => Some(format!("create CR {i}: {e}")),
                    }
                }
            })
            .buffer_unordered(64)
            .filter_map(|failure| async move { failure })
            .collect::<Vec<_>>()
            .await;
        assert!(failures.is_empty(), "{failures:?}");
    });
}

/// The cluster's ConfigMaps: the newest `count` CRs' entries that fit in 1 MiB (none where the
/// controller never ran), and Rancher's extra metadata. `drift`: the oldest 200 entries are
/// left out and every 97th has another size, so that the report shows entries of each kind.
fn put_configmaps(env: &EnvTest, count: usize, drift: bool, scenario: Scenario) {
    let mut entries = Vec::new();
    let mut bytes = 0;
    let with_entries = if scenario == Scenario::Pruned {
        count
    } else {
        0
    };
    for i in 0..with_entries {
        let cr = snapshot(i, scenario);
        if drift && i + 200 >= count {
            break;
        }
        let mut value = entry_value(&cr, S3ConfigShape::Legacy);
        if drift && i % 97 == 0 {
            value = value.replace("8417312", "8417313");
        }
        if bytes + value.len() > CONFIGMAP_LIMIT {
            break;
        }
        bytes += value.len();
        entries.push((data_key(&cr), value));
    }
    let admin = env.admin();
    for name in SERVERS {
        admin.put("/api/v1/nodes", &server(name, "v1.29.4+k3s1"));
    }
    let configmaps = "/api/v1/namespaces/kube-system/configmaps";
    admin.put(configmaps, &snapshot_configmap("k3s", &entries));
    admin.put(configmaps, &extra_metadata("k3s"));
}

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_k3sdoctor"))
}

/// The builds to measure: `K3SDOCTOR_BENCH_BIN` (`path` or `label=path,…`), else this one.
fn binaries() -> Vec<(String, PathBuf)> {
    match std::env::var("K3SDOCTOR_BENCH_BIN") {
        Ok(list) => list
            .split(',')
            .map(|item| match item.split_once('=') {
                Some((label, path)) => (label.to_string(), PathBuf::from(path)),
                None => ("k3sdoctor".to_string(), PathBuf::from(item)),
            })
            .collect(),
        Err(_) => vec![("k3sdoctor (test build)".to_string(), binary())],
    }
}

/// A finished child: exit code and stdout.
struct Finished {
    code: i32,
    stdout: Vec<u8>,
}

fn run(program: &Path, args: &[&str], stdout: &Path) -> Finished {
    let status = Command::new(program)
        .args(args)
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(stdout).unwrap())
        .stderr(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("start {}: {e}", program.display()));
    Finished {
        code: status.code().unwrap_or(-1),
        stdout: std::fs::read(stdout).unwrap(),
    }
}

fn diff_args(kubeconfig: &Path) -> Vec<String> {
    [
        "--kubeconfig",
        &kubeconfig.display().to_string(),
        "--distro",
        "k3s",
        "--now",
        NOW,
    ]
    .into_iter()
    .chain(["snapshots", "diff", "-o", "json"])
    .map(str::to_string)
    .collect()
}

/// What k3sdoctor's live read reports, and what it reports reading a whole-object dump of the
/// same objects (a `kubectl get -o json` List written by the admin client: every field, every
/// object, parsed whole).
#[test]
fn the_paged_projected_read_reports_what_a_whole_object_dump_reports() {
    let Some(env) = EnvTest::start("many_snapshot_files") else {
        return;
    };
    let count = 1_200;
    create_files(&env, 0, count, Scenario::Pruned);
    put_configmaps(&env, count, true, Scenario::Pruned);
    let dir = env.scratch().join("many");
    std::fs::create_dir_all(&dir).unwrap();
    let args = diff_args(&env.kubeconfig(User::Admin));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let live = run(&binary(), &args, &dir.join("live.json"));
    assert!(matches!(live.code, 0 | 1), "live diff exited {}", live.code);

    let admin = env.admin();
    let files = admin.get(FILES).expect("the ETCDSnapshotFile list");
    assert_eq!(files["items"].as_array().unwrap().len(), count);
    let configmaps = admin
        .get("/api/v1/namespaces/kube-system/configmaps")
        .expect("the ConfigMap list");
    let nodes = admin.get("/api/v1/nodes").expect("the Node list");
    // The live read judges the locks too (none here, so nothing writes the entries): the dump
    // holds the same Lease list, or it could only say the locks were not read.
    let leases = admin
        .get("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases")
        .expect("the Lease list");
    let leases_file = dir.join("leases.json");
    std::fs::write(&leases_file, serde_json::to_vec_pretty(&leases).unwrap()).unwrap();
    let dump = dir.join("dump.json");
    let mut items = files["items"].as_array().unwrap().clone();
    // A typed list's items carry no apiVersion and kind; `kubectl get -o json` adds them.
    for (list, kind) in [(&configmaps, "ConfigMap"), (&nodes, "Node")] {
        items.extend(list["items"].as_array().unwrap().iter().map(|object| {
            let mut object = object.clone();
            object["apiVersion"] = json!("v1");
            object["kind"] = json!(kind);
            object
        }));
    }
    std::fs::write(
        &dump,
        serde_json::to_vec_pretty(&json!({"apiVersion": "v1", "kind": "List", "items": items}))
            .unwrap(),
    )
    .unwrap();
    let dumped = run(
        &binary(),
        &[
            "--from-file",
            dump.to_str().unwrap(),
            "--from-file",
            leases_file.to_str().unwrap(),
            "--distro",
            "k3s",
            "--now",
            NOW,
            "snapshots",
            "diff",
            "-o",
            "json",
        ],
        &dir.join("dumped.json"),
    );
    assert_eq!(dumped.code, live.code);
    let (live, dumped): (Value, Value) = (
        serde_json::from_slice(&live.stdout).unwrap(),
        serde_json::from_slice(&dumped.stdout).unwrap(),
    );
    assert_eq!(
        strip_source(live.clone()),
        strip_source(dumped),
        "the live (paged) and the dump (whole-object) reports differ"
    );
    let rows = live["snapshots"].as_array().map_or(0, Vec::len);
    assert!(
        rows >= 200,
        "the report shows the missing and differing entries: {live}"
    );
}

/// Where the objects came from (the server or the file) is the one field that differs.
fn strip_source(mut report: Value) -> Value {
    if let Some(o) = report.as_object_mut() {
        for key in ["source", "origin", "server", "input"] {
            o.remove(key);
        }
    }
    report
}

/// The apiserver's own paged list (`?limit=500`, following `continue`) over curl, with the
/// admin's token: wall time of all pages.
fn curl_list(env: &EnvTest, expected: usize) -> Duration {
    let mut pages = 0;
    let kubeconfig = std::fs::read_to_string(env.kubeconfig(User::Admin)).unwrap();
    let token = kubeconfig
        .lines()
        .find_map(|l| l.trim().strip_prefix("token:"))
        .expect("a token kubeconfig")
        .trim()
        .trim_matches('"')
        .to_string();
    let ca = env
        .kubeconfig(User::Admin)
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("pki/ca.crt");
    let page = env.scratch().join("page.json");
    let started = Instant::now();
    let mut token_arg = String::new();
    loop {
        let url = format!("{}{FILES}?limit=500{token_arg}", env.server());
        // Not curl's own user agent: the apiserver pretty-prints JSON for curl.
        let status = Command::new("curl")
            .args([
                "-sf",
                "-A",
                "k3sdoctor-benchmark",
                "--cacert",
                ca.to_str().unwrap(),
            ])
            .args([
                "-H",
                "Accept: application/json",
                "-o",
                page.to_str().unwrap(),
            ])
            .args(["-H", &format!("Authorization: Bearer {token}"), &url])
            .status()
            .unwrap();
        assert!(status.success(), "curl {url}");
        let body = std::fs::read_to_string(&page).unwrap();
        // The list's metadata comes last; only the continue token is read.
        let tail = &body[body.len().saturating_sub(2_000)..];
        let next = tail.rsplit_once("\"continue\"").and_then(|(_, rest)| {
            let rest = rest
                .trim_start()
                .strip_prefix(':')?
                .trim_start()
                .strip_prefix('"')?;
            rest.split_once('"').map(|(token, _)| token.to_string())
        });
        match next.filter(|t| !t.is_empty()) {
            Some(next) => {
                let escaped = next
                    .replace('+', "%2B")
                    .replace('/', "%2F")
                    .replace('=', "%3D");
                token_arg = format!("&continue={escaped}");
                pages += 1;
            }
            None => {
                assert!(
                    pages * 500 + 500 >= expected,
                    "curl read every page: {pages}"
                );
                return started.elapsed();
            }
        }
    }
}

/// `serve` until ready: time to ready, peak RSS at ready, and peak and current RSS after
/// `settle` more.
fn measure_serve(env: &EnvTest, bin: &Path, settle: Duration) -> (Duration, u64, u64, u64) {
    let started = Instant::now();
    let mut child = Command::new(bin)
        .args([
            "--kubeconfig",
            env.kubeconfig(User::Admin).to_str().unwrap(),
        ])
        .args(["--distro", "k3s", "serve", "--listen", "127.0.0.1:0"])
        .env_remove("KUBECONFIG")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start serve");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let address = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| served_address(&l))
        .expect("serve logs its address");
    std::thread::spawn(move || for _ in lines {});
    let ready = wait_for(Duration::from_secs(600), || {
        let ok = get(address, "/readyz").is_some_and(|(status, _)| status == 200);
        if !ok {
            std::thread::sleep(Duration::from_millis(100));
        }
        ok
    });
    assert!(ready, "serve became ready");
    let to_ready = started.elapsed();
    let peak_at_ready = status_kib(child.id(), "VmHWM:");
    std::thread::sleep(settle);
    let (peak, now) = (
        status_kib(child.id(), "VmHWM:"),
        status_kib(child.id(), "VmRSS:"),
    );
    child.kill().unwrap();
    child.wait().unwrap();
    (to_ready, peak_at_ready, peak, now)
}

fn status_kib(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// The controller ran: most CRs pruned from the 1 MiB ConfigMap.
#[test]
#[ignore = "a benchmark: minutes and GBs; run on demand (docs/performance.md)"]
fn benchmark() {
    run_benchmark(Scenario::Pruned);
}

/// The controller never ran: every CR missing.
#[test]
#[ignore = "a benchmark: minutes and GBs; run on demand (docs/performance.md)"]
fn benchmark_all_missing() {
    run_benchmark(Scenario::AllMissing);
}

fn run_benchmark(scenario: Scenario) {
    // Before anything grows this process: see peak_launcher.rs.
    let mut launcher = PeakLauncher::start();
    let bed = match scenario {
        Scenario::Pruned => "many_snapshot_files_benchmark",
        Scenario::AllMissing => "many_snapshot_files_benchmark_all_missing",
    };
    let Some(env) = EnvTest::start(bed) else {
        return;
    };
    println!("scenario: {scenario:?}");
    let sizes: Vec<usize> = std::env::var("K3SDOCTOR_BENCH_SIZES")
        .unwrap_or_else(|_| "5000,50000".into())
        .split(',')
        .map(|n| n.trim().parse().expect("K3SDOCTOR_BENCH_SIZES: numbers"))
        .collect();
    let dir = env.scratch().join("bench");
    std::fs::create_dir_all(&dir).unwrap();
    let args = diff_args(&env.kubeconfig(User::Admin));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let builds = binaries();
    for (label, path) in &builds {
        println!("{label}: {}", path.display());
    }
    println!(
        "floor of the peak RSS figures (`true` through the launcher): {:.1} MiB",
        launcher.floor(&dir) as f64 / 1024.0
    );
    println!(
        "| ETCDSnapshotFiles | build | diff -o json wall s | curl list wall s (500-item pages) | ratio | diff peak RSS MiB | \
         serve ready s | serve peak at ready MiB | serve peak / steady MiB (ready + 20 s) |"
    );
    println!("|---:|---|---:|---:|---:|---:|---:|---:|---:|");
    let mut created = 0;
    for n in sizes {
        let seeding = Instant::now();
        create_files(&env, created, n, scenario);
        created = n;
        put_configmaps(&env, n, false, scenario);
        eprintln!("seeded {n} CRs in {:.1} s", seeding.elapsed().as_secs_f64());
        if let Ok(hold) = std::env::var("K3SDOCTOR_BENCH_HOLD") {
            eprintln!("HOLD kubeconfig={}", env.kubeconfig(User::Admin).display());
            while Path::new(&hold).exists() {
                std::thread::sleep(Duration::from_secs(1));
            }
        }
        for (label, bin) in &builds {
            // One unmeasured warm-up of each, then alternate, 3 rounds; medians.
            let _ = curl_list(&env, n);
            let _ = launcher.run(bin, &args, &dir.join("diff.json"));
            let (mut diffs, mut lists, mut peaks) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..3 {
                lists.push(curl_list(&env, n).as_secs_f64());
                let run = launcher.run(bin, &args, &dir.join("diff.json"));
                assert!(matches!(run.code, 0 | 1), "diff exited {}", run.code);
                diffs.push(run.wall.as_secs_f64());
                peaks.push(run.peak_kib as f64 / 1024.0);
            }
            let (diff, list, peak) = (median(&mut diffs), median(&mut lists), median(&mut peaks));
            let (ready, at_ready, serve_peak, steady) =
                measure_serve(&env, bin, Duration::from_secs(20));
            println!(
                "| {n} | {label} | {diff:.2} | {list:.2} | {:.2}× | {peak:.1} | {:.1} | {:.1} | {:.1} / {:.1} |",
                diff / list,
                ready.as_secs_f64(),
                mib(at_ready),
                mib(serve_peak),
                mib(steady)
            );
        }
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
