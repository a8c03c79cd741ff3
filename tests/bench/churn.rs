//! Scrapes under connection churn: `cargo bench --bench churn`.
//!
//! Starts the release `k3sdoctor serve` against the in-repo fake API server with `/metrics`
//! closed, as by default (`--metrics-auth kubernetes`: every scraper's token is reviewed through
//! TokenReview and SubjectAccessReview), then lets 2,000 slow clients churn on its port (each
//! connects, trickles half a request head over 0.4–1 s and reconnects at once, or when closed)
//! while 20 Prometheus-like scrapers, each with a token of its own, scrape `/metrics` every 10 s
//! with Prometheus' default 10 s scrape timeout, keeping their connections between scrapes and
//! retrying once on a new connection where Go's Transport would (`support::churn::PromScraper`).
//! It prints the share of scrapes that failed (what Prometheus records as `up == 0`) and the
//! p50/p90/p99 of every scrape's duration, and never fails on a number.
//!
//! `K3SDOCTOR_CHURN_STALL=1` makes the slow clients stall instead: after their half head they
//! wait, silent, until serve closes the connection, then reconnect.
//! `K3SDOCTOR_BENCH_BIN=label=path,…` measures other builds one after the other (e.g. the build
//! before a change); `K3SDOCTOR_CHURN_CLIENTS` (2000), `K3SDOCTOR_CHURN_SCRAPERS` (20) and
//! `K3SDOCTOR_CHURN_ROUNDS` (12 scrapes per scraper) change the load.
//! `cargo test --benches` only prints how to run it.

#[path = "../support/mod.rs"]
// Cargo compiles benches with `--cfg test` but, without the harness, drops their `#[test]`
// functions, which leaves the `use super::*` of the support files' unit-test modules unused.
#[allow(unused_imports)]
mod support;

// Shared with the perf benchmark, which uses all of it; this one does not.
#[allow(dead_code)]
mod measure;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use support::churn::{Churn, SCRAPE_TIMEOUT, Scrape, scrape_rounds};
use support::fake_api::{FakeApi, Role};
use support::objects::fresh_cluster;
use support::scrape::served_address;

const INTERVAL: Duration = Duration::from_secs(10);
/// Time for the churn to fill serve's places and its accept queue before the scrapes start.
const WARM_UP: Duration = Duration::from_secs(5);

/// A Prometheus service account's rights: `get` on `/metrics` (deploy/prometheus's role).
const METRICS_READER: &str = "\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: k3sdoctor-metrics-reader
rules:
- nonResourceURLs: [/metrics]
  verbs: [get]
";

fn main() {
    if !measure::should_run("churn") {
        return;
    }
    let clients = setting("K3SDOCTOR_CHURN_CLIENTS", 2_000);
    let scrapers = setting("K3SDOCTOR_CHURN_SCRAPERS", 20);
    let rounds = setting("K3SDOCTOR_CHURN_ROUNDS", 12);
    let stall = std::env::var("K3SDOCTOR_CHURN_STALL").is_ok_and(|v| v == "1");
    let builds = builds();
    let work = measure::Workspace::new();
    let fake = fresh_cluster(&["s1", "s2", "s3"]);
    let tokens: Vec<Option<String>> = (0..scrapers)
        .map(|n| {
            let token = format!("prometheus-{n}-token");
            let user = format!("system:serviceaccount:monitoring:prometheus-{n}");
            fake.add_rbac_user(&token, &user, METRICS_READER);
            Some(token)
        })
        .collect();
    // serve's own account reviews the tokens (the admin may create the reviews).
    let kubeconfig = fake.write_kubeconfig(work.path(), Role::Admin);

    println!("k3sdoctor serve under connection churn (cargo bench --bench churn)");
    println!();
    let after_head = if stall {
        "wait silent until serve closes the connection"
    } else {
        "go"
    };
    println!(
        "- load: {clients} slow clients (connect, half a request head in 4–10 pieces 100 ms \
         apart, {after_head}, reconnect at once), {scrapers} Prometheus-like scrapers with a token each, \
         every {} s, scrape timeout {} s, {rounds} scrapes each, after {} s of churn",
        INTERVAL.as_secs(),
        SCRAPE_TIMEOUT.as_secs(),
        WARM_UP.as_secs()
    );
    println!(
        "- serve: default `--metrics-auth kubernetes`, fake API server at {}",
        fake.url()
    );
    println!(
        "- machine: {} CPUs, open files (soft) {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        open_files().map_or("unknown".into(), |n| n.to_string())
    );
    println!();
    println!(
        "| build | scrapes | failed | failure rate | p50 s | p90 s | p99 s | max s | failures by kind | churn connections | TokenReviews | serve peak RSS MiB |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|");
    for (label, bin) in builds {
        if !bin.components().any(|c| c.as_os_str() == "release") && label == "this build" {
            eprintln!("warning: {} is not a release build", bin.display());
        }
        let reviews_before = token_reviews(&fake);
        let (mut child, address) = start(&bin, &kubeconfig);
        let ready = (0..600).any(|_| {
            std::thread::sleep(Duration::from_millis(100));
            support::churn::PromScraper::new(address, tokens[0].as_deref())
                .scrape()
                .succeeded()
        });
        assert!(ready, "{label}: serve never answered /metrics");
        let churn = if stall {
            Churn::stalling(address, clients)
        } else {
            Churn::start(address, clients)
        };
        std::thread::sleep(WARM_UP);
        let scrapes = scrape_rounds(address, &tokens, INTERVAL, rounds);
        let connects = churn.connects();
        drop(churn);
        let peak = peak_rss_mib(child.id());
        // SAFETY: a plain signal to the child this benchmark started.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let _ = child.wait();
        let reviews = token_reviews(&fake) - reviews_before;
        row(&label, &scrapes, connects, reviews, peak);
    }
}

fn row(label: &str, scrapes: &[Vec<Scrape>], connects: u64, reviews: usize, peak: f64) {
    let all: Vec<&Scrape> = scrapes.iter().flatten().collect();
    let failed: Vec<&&Scrape> = all.iter().filter(|s| !s.succeeded()).collect();
    let mut kinds = std::collections::BTreeMap::new();
    for scrape in &failed {
        *kinds.entry(format!("{:?}", scrape.outcome)).or_insert(0) += 1;
    }
    let kinds = if kinds.is_empty() {
        "–".to_string()
    } else {
        kinds
            .iter()
            .map(|(kind, n)| format!("{kind} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut took: Vec<f64> = all.iter().map(|s| s.took.as_secs_f64()).collect();
    took.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        let i = ((p * took.len() as f64).ceil() as usize).clamp(1, took.len().max(1)) - 1;
        took.get(i).copied().unwrap_or(f64::NAN)
    };
    println!(
        "| {label} | {} | {} | {:.2} % | {:.3} | {:.3} | {:.3} | {:.3} | {kinds} | {connects} | {reviews} | {peak:.1} |",
        all.len(),
        failed.len(),
        100.0 * failed.len() as f64 / all.len().max(1) as f64,
        pct(0.50),
        pct(0.90),
        pct(0.99),
        took.last().copied().unwrap_or(f64::NAN),
    );
}

/// `K3SDOCTOR_BENCH_BIN` as `label=path,…` (a bare path is labelled by itself), else this build.
fn builds() -> Vec<(String, PathBuf)> {
    match std::env::var("K3SDOCTOR_BENCH_BIN") {
        Ok(list) if !list.trim().is_empty() => list
            .split(',')
            .map(|item| match item.split_once('=') {
                Some((label, path)) => (label.to_string(), PathBuf::from(path)),
                None => (item.to_string(), PathBuf::from(item)),
            })
            .collect(),
        _ => vec![(
            "this build".to_string(),
            PathBuf::from(env!("CARGO_BIN_EXE_k3sdoctor")),
        )],
    }
}

fn setting(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn open_files() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// serve's own high-water RSS (`VmHWM`), which no parent inflates.
fn peak_rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

fn token_reviews(fake: &FakeApi) -> usize {
    fake.requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("/tokenreviews"))
        .count()
}

fn start(bin: &Path, kubeconfig: &Path) -> (Child, SocketAddr) {
    let mut child = Command::new(bin)
        .args(["--kubeconfig", &kubeconfig.display().to_string()])
        .args(["serve", "--listen", "127.0.0.1:0"])
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
