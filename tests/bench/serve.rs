//! `serve` benchmark: `cargo bench --bench serve`.
//!
//! Seeds the in-repo fake API server like the perf benchmark (3 servers + 1 agent on
//! v1.29.4+k3s1, the kube-system elections, 5,000 ETCDSnapshotFiles, the snapshot ConfigMap at
//! its 1 MiB limit), starts the release `k3sdoctor serve` against it and measures, in one run:
//! - time from start to `/readyz` 200 (the first list of everything);
//! - change → metric: the `k3s` Lease's holder edited on the server, then `/metrics` scraped
//!   every 2 ms until `k3sdoctor_lease_holder_info` names the new holder (100 edits);
//! - one `/metrics` scrape over a kept-alive connection, as Prometheus makes it (500 scrapes);
//! - CPU while idle (no change at all) and while the two k3s locks are renewed every 2 s as
//!   wrangler does, from `/proc/<pid>/stat`, and the requests the fake received meanwhile;
//! - peak RSS (`VmHWM`, reset by `execve`, so the benchmark's own memory is not counted);
//! - the time from SIGTERM to exit.
//!
//! It prints one markdown table with the issue's targets and never fails on a number.
//! `cargo test --benches` only prints how to run it.

#[path = "../support/mod.rs"]
// Cargo compiles benches with `--cfg test` but, without the harness, drops their `#[test]`
// functions, which leaves the `use super::*` of the support files' unit-test modules unused.
#[allow(unused_imports)]
mod support;

// Shared with the perf benchmark, which uses all of it; this one does not.
#[allow(dead_code)]
mod measure;
#[allow(dead_code)]
mod seed;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::fake_api::{FakeApi, Role};
use support::objects::renewed_now;
use support::scrape::{Scraper, sample, served_address};

const FILES: usize = 5_000;
const EDITS: usize = 100;
const SCRAPES: usize = 500;
const IDLE: Duration = Duration::from_secs(30);
const RENEW_EVERY: Duration = Duration::from_secs(2);

fn main() {
    if !measure::should_run("serve") {
        return;
    }
    let bin = Path::new(env!("CARGO_BIN_EXE_k3sdoctor"));
    let work = measure::Workspace::new();
    let fake = FakeApi::start();
    seed::seed(&fake, FILES);
    // Fresh locks, as on a running cluster (the seed's are dated to the dump's `NOW`).
    fake.put(renewed_now("k3s", seed::SERVERS[0]));
    fake.put(renewed_now("k3s-etcd", seed::SERVERS[0]));
    let kubeconfig = fake.write_kubeconfig(work.path(), Role::ReadOnly);

    println!("k3sdoctor serve benchmark (cargo bench --bench serve)");
    println!();
    println!("- k3sdoctor: {}", bin.display());
    if !bin.components().any(|c| c.as_os_str() == "release") {
        println!("  warning: not a release build; run `cargo bench --bench serve`");
    }
    println!(
        "- cluster: fake API server at {} (read-only token): 3 servers + 1 agent on {}, 8 kube-system \
         Leases, {FILES} ETCDSnapshotFiles, the snapshot ConfigMap at its 1 MiB limit",
        fake.url(),
        seed::VERSION
    );
    println!(
        "- machine: {} CPUs",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );

    let started = Instant::now();
    let (mut child, address) = start(bin, &kubeconfig);
    let scraper = Scraper::new();
    let ready = wait(Duration::from_secs(120), || {
        scraper
            .get(address, "/readyz")
            .is_some_and(|(s, _)| s == 200)
    });
    let to_ready = started.elapsed();
    assert!(ready, "serve never became ready");
    let pid = child.id();

    // Change → metric.
    let mut latencies = Vec::new();
    for i in 0..EDITS {
        let holder = seed::SERVERS[1 + i % 2];
        let series = format!(
            r#"k3sdoctor_lease_holder_info{{lock="k3s",holder="{holder}",node="{holder}"}}"#
        );
        let edited = Instant::now();
        fake.put(renewed_now("k3s", holder));
        let seen = wait_fine(Duration::from_secs(10), || {
            scraper
                .get(address, "/metrics")
                .is_some_and(|(_, body)| sample(&body, &series) == Some(1.0))
        });
        latencies.push(if seen {
            edited.elapsed()
        } else {
            Duration::MAX
        });
    }
    // Back to no split, as the rest measures a healthy cluster.
    fake.put(renewed_now("k3s", seed::SERVERS[0]));

    // Scrapes, with 5,000 snapshots behind the last evaluation.
    let mut scrapes = Vec::new();
    let mut body = String::new();
    for _ in 0..SCRAPES {
        let at = Instant::now();
        let (_, text) = scraper.get(address, "/metrics").expect("scrape");
        scrapes.push(at.elapsed());
        body = text;
    }
    let evaluations = sample(&body, "k3sdoctor_evaluation_duration_seconds_count").unwrap_or(0.0);
    let evaluation_ms = sample(&body, "k3sdoctor_evaluation_duration_seconds_sum").unwrap_or(0.0)
        / evaluations.max(1.0)
        * 1000.0;

    // Idle: nothing changes.
    std::thread::sleep(Duration::from_secs(2));
    fake.clear_requests();
    let idle = cpu_over(pid, IDLE, || {});
    let (idle_probes, idle_requests) = probes_and_others(&fake);

    // Renewals every 2 s, as the two k3s locks get them on a running cluster.
    fake.clear_requests();
    let renewing = cpu_over(pid, IDLE, || {
        fake.put(renewed_now("k3s", seed::SERVERS[0]));
        fake.put(renewed_now("k3s-etcd", seed::SERVERS[0]));
    });
    let (renewing_probes, renewing_requests) = probes_and_others(&fake);

    let peak_rss_kib = status_kib(pid, "VmHWM:").unwrap_or(0);
    let terminated = Instant::now();
    // SAFETY: kill(2) on our own child's pid has no memory-safety preconditions.
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    let status = child.wait().expect("wait for serve");
    let to_exit = terminated.elapsed();

    latencies.sort();
    scrapes.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let p = |v: &[Duration], q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    let p99 = p(&latencies, 0.99);
    let scrape_p99 = p(&scrapes, 0.99);
    println!();
    println!("| measure | result | target |");
    println!("|---|---:|---|");
    println!(
        "| start → `/readyz` 200 (lists {FILES} ETCDSnapshotFiles) | {:.0} ms | – |",
        ms(to_ready)
    );
    println!(
        "| change → metric, {EDITS} Lease holder edits: p50 / p99 / max | {:.1} / {:.1} / {:.1} ms | p99 ≤ 1 s: {} |",
        ms(p(&latencies, 0.5)),
        ms(p99),
        ms(*latencies.last().unwrap()),
        met(p99 <= Duration::from_secs(1))
    );
    println!(
        "| one evaluation (mean of {evaluations:.0}, from the histogram) | {evaluation_ms:.1} ms | – |"
    );
    println!(
        "| `/metrics` scrape, {SCRAPES} on one connection: p50 / p99 / max | {:.2} / {:.2} / {:.2} ms | ≤ 5 ms: {} |",
        ms(p(&scrapes, 0.5)),
        ms(scrape_p99),
        ms(*scrapes.last().unwrap()),
        met(scrape_p99 <= Duration::from_millis(5))
    );
    println!(
        "| CPU idle, {} s without changes | {:.2} % of a core, {idle_requests} requests besides {idle_probes} contact probes | ≈ 0, no periodic lists: {} |",
        IDLE.as_secs(),
        idle * 100.0,
        met(idle < 0.005 && idle_requests == 0)
    );
    println!(
        "| CPU with `k3s` and `k3s-etcd` renewed every {} s, {} s | {:.2} % of a core, {renewing_requests} requests besides {renewing_probes} contact probes | – |",
        RENEW_EVERY.as_secs(),
        IDLE.as_secs(),
        renewing * 100.0
    );
    println!(
        "| peak RSS (VmHWM) with {FILES} ETCDSnapshotFiles | {:.1} MiB | ≤ 48 MiB: {} |",
        peak_rss_kib as f64 / 1024.0,
        met(peak_rss_kib <= 48 * 1024)
    );
    println!(
        "| SIGTERM → exit | {:.0} ms, exit {} | ≤ 5 s: {} |",
        ms(to_exit),
        status
            .code()
            .map_or("by signal".to_string(), |c| c.to_string()),
        met(to_exit <= Duration::from_secs(5) && status.code() == Some(0))
    );
}

fn start(bin: &Path, kubeconfig: &Path) -> (Child, SocketAddr) {
    let mut child = Command::new(bin)
        .args(["--kubeconfig", &kubeconfig.display().to_string()])
        .args(["serve", "--listen", "127.0.0.1:0", "--metrics-auth", "none"])
        .env_clear()
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start k3sdoctor serve");
    let stderr = child.stderr.take().expect("stderr is piped");
    let mut lines = BufReader::new(stderr).lines();
    let address = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|line| served_address(&line))
        .expect("serve logs its address");
    // Keep draining the log so serve never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (child, address)
}

/// CPU time (user + system) of `pid` over `window` as a share of one core; `tick` runs every
/// two seconds meanwhile.
fn cpu_over(pid: u32, window: Duration, mut tick: impl FnMut()) -> f64 {
    let hz = 100.0; // USER_HZ on Linux
    let before = cpu_ticks(pid);
    let started = Instant::now();
    while started.elapsed() < window {
        tick();
        std::thread::sleep(RENEW_EVERY.min(window.saturating_sub(started.elapsed())));
    }
    let spent = (cpu_ticks(pid) - before) as f64 / hz;
    spent / started.elapsed().as_secs_f64()
}

fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    field(11) + field(12)
}

fn status_kib(pid: u32, key: &str) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix(key))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The requests the fake saw since it was last cleared: serve's contact probes (`GET
/// /version`, every 5 s by design) and everything else (lists, watches: none while nothing fails).
fn probes_and_others(fake: &FakeApi) -> (usize, usize) {
    let requests = fake.requests();
    let probes = requests.iter().filter(|r| r.path == "/version").count();
    (probes, requests.len() - probes)
}

fn wait(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    support::wait::wait_for(limit, &mut cond)
}

/// As [`wait`], polling every 2 ms: the resolution of the change → metric figure.
fn wait_fine(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    cond()
}

fn met(ok: bool) -> &'static str {
    if ok { "met" } else { "NOT met" }
}
