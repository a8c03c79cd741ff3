//! What the many-snapshot benchmarks measure, and how: the builds to compare, the apiserver's
//! own list over curl, `serve`'s memory once ready, and medians.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::Value;

use crate::peak_launcher::PeakLauncher;
use crate::support::envtest::{EnvTest, User};
use crate::support::scrape::{get, served_address};
use crate::support::wait::wait_for;

pub(crate) const FILES: &str = "/apis/k3s.cattle.io/v1/etcdsnapshotfiles";

pub(crate) fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_k3sdoctor"))
}

/// The builds to measure: `K3SDOCTOR_BENCH_BIN` (`path` or `label=path,…`), else this one.
pub(crate) fn binaries() -> Vec<(String, PathBuf)> {
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

/// The CR counts to seed, one after the other on the same bed: `K3SDOCTOR_BENCH_SIZES`.
pub(crate) fn sizes() -> Vec<usize> {
    std::env::var("K3SDOCTOR_BENCH_SIZES")
        .unwrap_or_else(|_| "5000,50000".into())
        .split(',')
        .map(|n| n.trim().parse().expect("K3SDOCTOR_BENCH_SIZES: numbers"))
        .collect()
}

/// `K3SDOCTOR_BENCH_HOLD=FILE`: keeps the bed up while FILE exists, for profiling by hand.
pub(crate) fn hold_if_asked(env: &EnvTest, user: User) {
    if let Ok(hold) = std::env::var("K3SDOCTOR_BENCH_HOLD") {
        eprintln!("HOLD kubeconfig={}", env.kubeconfig(user).display());
        while Path::new(&hold).exists() {
            std::thread::sleep(Duration::from_secs(1));
        }
    }
}

/// A finished child: exit code and stdout.
pub(crate) struct Finished {
    pub code: i32,
    pub stdout: Vec<u8>,
}

pub(crate) fn run(program: &Path, args: &[&str], stdout: &Path) -> Finished {
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

/// The bearer token of `user`'s kubeconfig.
fn token_of(env: &EnvTest, user: User) -> String {
    let kubeconfig = std::fs::read_to_string(env.kubeconfig(user)).unwrap();
    kubeconfig
        .lines()
        .find_map(|l| l.trim().strip_prefix("token:"))
        .expect("a token kubeconfig")
        .trim()
        .trim_matches('"')
        .to_string()
}

/// The apiserver's own paged list (`?limit=500`, following `continue`) over curl, with
/// `user`'s token: wall time of all pages.
pub(crate) fn curl_list(env: &EnvTest, user: User, expected: usize) -> Duration {
    let mut pages = 0;
    let token = token_of(env, user);
    let ca = env
        .kubeconfig(user)
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
        match continue_token(&body) {
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

/// The list's metadata comes last; only its continue token is read.
fn continue_token(body: &str) -> Option<String> {
    let tail = &body[body.len().saturating_sub(2_000)..];
    let (_, rest) = tail.rsplit_once("\"continue\"")?;
    let rest = rest
        .trim_start()
        .strip_prefix(':')?
        .trim_start()
        .strip_prefix('"')?;
    let (token, _) = rest.split_once('"')?;
    (!token.is_empty()).then(|| token.to_string())
}

/// What `serve` held: time to ready, peak RSS at ready, and peak and current RSS `settle` later.
pub(crate) struct ServeMemory {
    pub to_ready: Duration,
    pub peak_at_ready_kib: u64,
    pub peak_kib: u64,
    pub steady_kib: u64,
}

/// `serve` as `user` with `global` flags, until ready and `settle` more.
pub(crate) fn measure_serve(
    env: &EnvTest,
    bin: &Path,
    user: User,
    global: &[&str],
    settle: Duration,
) -> ServeMemory {
    let started = Instant::now();
    let mut child = Command::new(bin)
        .args(["--kubeconfig", env.kubeconfig(user).to_str().unwrap()])
        .args(global)
        .args(["serve", "--listen", "127.0.0.1:0"])
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
    let peak_at_ready_kib = status_kib(child.id(), "VmHWM:");
    std::thread::sleep(settle);
    let memory = ServeMemory {
        to_ready,
        peak_at_ready_kib,
        peak_kib: status_kib(child.id(), "VmHWM:"),
        steady_kib: status_kib(child.id(), "VmRSS:"),
    };
    child.kill().unwrap();
    child.wait().unwrap();
    memory
}

fn status_kib(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

pub(crate) fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

pub(crate) fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// One bed as a benchmark measures it: who reads, with which flags, and how long `serve`
/// settles after ready before its peak is read.
pub(crate) struct Bed<'a> {
    pub env: &'a EnvTest,
    pub user: User,
    pub diff_args: &'a [&'a str],
    pub serve_flags: &'a [&'a str],
    pub settle: Duration,
}

/// The markdown table the benchmarks print: one row per size and build, and whether each
/// build wrote the same `diff -o json` as the first.
pub(crate) struct BenchTable {
    builds: Vec<(String, PathBuf)>,
    dir: PathBuf,
    first_output: Option<(usize, String)>,
}

impl BenchTable {
    pub(crate) fn start(env: &EnvTest, launcher: &mut PeakLauncher, settle: &str) -> BenchTable {
        let dir = env.scratch().join("bench");
        std::fs::create_dir_all(&dir).unwrap();
        let builds = binaries();
        for (label, path) in &builds {
            println!("{label}: {}", path.display());
        }
        println!(
            "floor of the peak RSS figures (`true` through the launcher): {:.1} MiB",
            launcher.floor(&dir) as f64 / 1024.0
        );
        println!(
            "| ETCDSnapshotFiles | build | diff -o json wall s | curl list wall s (500-item pages) | ratio | \
             diff peak RSS MiB (median of 3) | serve ready s | serve peak at ready MiB | \
             serve peak / current MiB ({settle}) | diff output |"
        );
        println!("|---:|---|---:|---:|---:|---:|---:|---:|---:|---|");
        BenchTable {
            builds,
            dir,
            first_output: None,
        }
    }

    /// Every build on the bed as it is now (`n` CRs): one unmeasured warm-up of each, then 3
    /// rounds alternating with the apiserver's own list; medians. Then `serve`.
    pub(crate) fn measure(&mut self, bed: &Bed, launcher: &mut PeakLauncher, n: usize) {
        for (label, bin) in &self.builds.clone() {
            let out = self.dir.join("diff.json");
            let _ = curl_list(bed.env, bed.user, n);
            let _ = launcher.run(bin, bed.diff_args, &out);
            let (mut diffs, mut lists, mut peaks) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..3 {
                lists.push(curl_list(bed.env, bed.user, n).as_secs_f64());
                let run = launcher.run(bin, bed.diff_args, &out);
                assert!(matches!(run.code, 0 | 1), "diff exited {}", run.code);
                diffs.push(run.wall.as_secs_f64());
                peaks.push(run.peak_kib as f64 / 1024.0);
            }
            let output = self.compare_output(n, &std::fs::read(&out).unwrap());
            let (diff, list, peak) = (median(&mut diffs), median(&mut lists), median(&mut peaks));
            let serve = measure_serve(bed.env, bin, bed.user, bed.serve_flags, bed.settle);
            println!(
                "| {n} | {label} | {diff:.2} | {list:.2} | {:.2}× | {peak:.1} | {:.1} | {:.1} | {:.1} / {:.1} | {output} |",
                diff / list,
                serve.to_ready.as_secs_f64(),
                mib(serve.peak_at_ready_kib),
                mib(serve.peak_kib),
                mib(serve.steady_kib)
            );
        }
    }

    /// The output's size and sha256, and whether it is byte for byte the first build's.
    fn compare_output(&mut self, n: usize, output: &[u8]) -> String {
        use sha2::{Digest, Sha256};
        let digest: String = Sha256::digest(output)
            .iter()
            .take(6)
            .map(|b| format!("{b:02x}"))
            .collect();
        let verdict = match &self.first_output {
            Some((size, first)) if *size == n && *first == digest => "same as the first build",
            Some((size, _)) if *size == n => "DIFFERS from the first build",
            _ => {
                self.first_output = Some((n, digest.clone()));
                "first build"
            }
        };
        format!(
            "{:.1} MB, sha256 {digest}…, {verdict}",
            output.len() as f64 / 1e6
        )
    }
}

/// Creates `objects` as ETCDSnapshotFiles, 64 requests in flight, as `field_manager` where
/// given (`kubectl create` sends `kubectl-create`, which names the managedFields entry).
pub(crate) fn create_all(env: &EnvTest, objects: Vec<Value>, field_manager: Option<&str>) {
    let path = match field_manager {
        Some(manager) => format!("{FILES}?fieldManager={manager}"),
        None => FILES.to_string(),
    };
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
        let failures = futures::stream::iter(objects)
            .map(|object| {
                let (client, path) = (client.clone(), path.clone());
                async move {
                    let name = object["metadata"]["name"].to_string();
                    let request = http::Request::post(path)
                        .header("Content-Type", "application/json")
                        .body(object.to_string().into_bytes())
                        .unwrap();
                    match client.request_text(request).await {
                        Ok(_) => None,
                        // Already there: the bed grows from one size to the next.
                        Err(kube::Error::Api(status)) if status.code == 409 => None,
                        Err(e) => Some(format!("create CR {name}: {e}")),
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
