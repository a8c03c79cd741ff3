//! The Rancher benchmark's runs and its table: each build's fleet runs with the TLS
//! handshakes the proxy completed during each, the slowest single cluster, and the fleet with
//! clusters whose agent is gone.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::measure::{self, Env, Invocation, Launcher, Sample, Stdout};
use crate::support::fake_api::FakeApi;
use crate::support::objects::NOW;
use crate::support::rancher::proxy::RancherProxy;

const REPEATS: usize = 3;
const RSS_LIMIT_MIB: f64 = 96.0;
const DEFAULT_PARALLEL: usize = 16;

/// A k3sdoctor binary under measure.
pub struct Build {
    pub name: &'static str,
    pub bin: PathBuf,
}

/// One measured run.
#[derive(Clone, Copy)]
pub struct Run {
    sample: Sample,
    handshakes: usize,
    /// The CPU this process (the proxy and the fake clusters) spent during the run: on two
    /// cores, time the run could not have.
    bed_cpu: std::time::Duration,
}

/// What the fleet concluded with some agents gone, per build.
pub struct Disconnected {
    build: &'static str,
    run: Run,
    summary: String,
}

pub struct Bench<'a> {
    pub launcher: Launcher,
    pub env: &'a Env,
    pub proxy: &'a RancherProxy,
    pub fakes: &'a [FakeApi],
    pub ids: &'a [String],
    pub builds: &'a [Build],
    /// (build, measure) → runs.
    pub results: HashMap<(&'static str, &'static str), Vec<Run>>,
}

/// The healthy fleet's request counts, for the table.
struct Counts {
    single_requests: usize,
    single_local: usize,
    per_cluster: Vec<usize>,
    fleet_local: usize,
    verdicts: Vec<String>,
}

impl Bench<'_> {
    fn check(&self, build: &Build, context: &str, extra: &[&str]) -> Invocation {
        let mut args = vec!["--context", context, "check"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["-o", "json", "--now", NOW]);
        Invocation::new(&build.bin, &args)
    }

    fn wide(&self, build: &Build) -> Invocation {
        let parallel = self.ids.len().to_string();
        self.check(
            build,
            "local",
            &["--rancher-clusters", "--parallel", &parallel],
        )
    }

    fn run(&mut self, inv: &Invocation, stdout: Stdout) -> Run {
        let before = self.proxy.handshakes();
        let bed_before = measure::own_cpu();
        let sample = self.launcher.run(inv, self.env, stdout);
        Run {
            sample,
            handshakes: self.proxy.handshakes() - before,
            bed_cpu: measure::own_cpu().saturating_sub(bed_before),
        }
    }

    fn clear(&self) {
        self.fakes.iter().for_each(FakeApi::clear_requests);
        self.proxy.clear_requests();
    }

    /// Warm-ups, then `REPEATS` interleaved rounds of every build.
    pub fn measure_healthy(&mut self) {
        let builds = self.builds;
        let Some(after) = builds.last() else { return };
        self.clear();
        let single = self.check(after, &self.ids[1], &[]);
        self.run(&single, Stdout::Discard);
        let mut counts = Counts {
            single_requests: self.fakes[1].requests().len(),
            single_local: self.proxy.requests_to("local").len(),
            per_cluster: Vec::new(),
            fleet_local: 0,
            verdicts: Vec::new(),
        };
        for build in builds {
            self.run(&self.check(build, &self.ids[0], &[]), Stdout::Discard);
            let warm = self.run(&self.wide(build), Stdout::Keep);
            let line = describe_fleet(self.env, warm.sample.exit);
            counts.verdicts.push(format!("{}: {line}", build.name));
        }
        for round in 1..=REPEATS {
            eprintln!("rancher bench: round {round} of {REPEATS}");
            for build in builds {
                self.clear();
                let run = self.run(&self.wide(build), Stdout::Discard);
                if build.name == after.name {
                    counts.per_cluster = self.fakes.iter().map(|f| f.requests().len()).collect();
                    counts.fleet_local = self.proxy.requests_to("local").len();
                }
                self.record(build.name, "wide", run);
                let default = self.check(build, "local", &["--rancher-clusters"]);
                let run = self.run(&default, Stdout::Discard);
                self.record(build.name, "default", run);
                let run = self.run(&self.check(build, &self.ids[0], &[]), Stdout::Discard);
                self.record(build.name, "slowest", run);
            }
        }
        self.print_healthy(&counts);
    }

    fn record(&mut self, build: &'static str, key: &'static str, run: Run) {
        self.results.entry((build, key)).or_default().push(run);
    }

    /// One fleet run per build with the agents of `gone` disconnected.
    pub fn measure_disconnected(&mut self, gone: &[&str]) -> Vec<Disconnected> {
        eprintln!("rancher bench: {} clusters without their agent", gone.len());
        let builds = self.builds;
        builds
            .iter()
            .map(|build| {
                let run = self.run(&self.wide(build), Stdout::Keep);
                Disconnected {
                    build: build.name,
                    run,
                    summary: unreachable_summary(self.env),
                }
            })
            .collect()
    }

    fn median(&self, build: &'static str, key: &'static str, f: &dyn Fn(&Run) -> f64) -> f64 {
        let mut values: Vec<f64> = self.results[&(build, key)].iter().map(f).collect();
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    }

    fn print_healthy(&mut self, counts: &Counts) {
        let n = self.ids.len();
        let met = |ok: bool| if ok { "met" } else { "missed" };
        println!();
        println!(
            "| build | measure (median of {REPEATS}) | wall ms | k3sdoctor CPU ms | bed CPU ms | peak RSS MiB | TLS handshakes | target |"
        );
        println!("|---|---|---:|---:|---:|---:|---:|---|");
        for build in self.builds {
            let b = build.name;
            let ms = |key| self.median(b, key, &|r: &Run| r.sample.wall.as_secs_f64() * 1000.0);
            let cpu = |key| self.median(b, key, &|r: &Run| r.sample.cpu.as_secs_f64() * 1000.0);
            let bed = |key| self.median(b, key, &|r: &Run| r.bed_cpu.as_secs_f64() * 1000.0);
            let mib = |key| self.median(b, key, &|r: &Run| r.sample.max_rss_kib as f64 / 1024.0);
            let tls = |key| self.median(b, key, &|r: &Run| r.handshakes as f64) as usize;
            let budget = 1.2 * ms("slowest") + 1000.0;
            println!(
                "| {b} | `check --rancher-clusters --parallel {n}` | {:.0} | {:.0} | {:.0} | {:.1} | {} | wall ≤ 1.2 × slowest + 1000 ms = {budget:.0} ms: {}; ≤ {RSS_LIMIT_MIB} MiB: {}; handshakes ≤ {n}: {} |",
                ms("wide"),
                cpu("wide"),
                bed("wide"),
                mib("wide"),
                tls("wide"),
                met(ms("wide") <= budget),
                met(mib("wide") <= RSS_LIMIT_MIB),
                met(tls("wide") <= n)
            );
            println!(
                "| {b} | `check --rancher-clusters` (default --parallel {DEFAULT_PARALLEL}) | {:.0} | {:.0} | {:.0} | {:.1} | {} | handshakes ≤ {DEFAULT_PARALLEL}: {} |",
                ms("default"),
                cpu("default"),
                bed("default"),
                mib("default"),
                tls("default"),
                met(tls("default") <= DEFAULT_PARALLEL)
            );
            println!(
                "| {b} | slowest cluster alone, `--context {} check` | {:.0} | {:.0} | {:.0} | {:.1} | {} | – |",
                self.ids[0],
                ms("slowest"),
                cpu("slowest"),
                bed("slowest"),
                mib("slowest"),
                tls("slowest")
            );
        }
        let per = &counts.per_cluster;
        println!(
            "| after | downstream requests per cluster, fleet run | {}–{} (single check: {}) | – | – | – | – | = single: {} |",
            per.iter().min().copied().unwrap_or_default(),
            per.iter().max().copied().unwrap_or_default(),
            counts.single_requests,
            met(per.iter().all(|&c| c == counts.single_requests))
        );
        println!(
            "| after | requests to `local`, fleet run | {} (single check: {}) | – | – | – | – | – |",
            counts.fleet_local, counts.single_local
        );
        println!();
        for line in &counts.verdicts {
            println!("warm-up fleet run, {line}");
        }
        let exits: Vec<String> = self
            .results
            .iter()
            .map(|((b, k), runs)| {
                let codes: Vec<i32> = runs.iter().map(|r| r.sample.exit).collect();
                format!("{b} {k} {codes:?}")
            })
            .collect();
        println!("exit codes: {}", exits.join(", "));
    }

    pub fn print(&self, disconnected: &[Disconnected]) {
        println!();
        println!(
            "| build | `check --rancher-clusters --parallel {}`, 5 agents gone (answers after 20–40 s) | wall ms | peak RSS MiB | TLS handshakes |",
            self.ids.len()
        );
        println!("|---|---|---:|---:|---:|");
        for d in disconnected {
            println!(
                "| {} | {} | {:.0} | {:.1} | {} |",
                d.build,
                d.summary,
                d.run.sample.wall.as_secs_f64() * 1000.0,
                d.run.sample.max_rss_kib as f64 / 1024.0,
                d.run.handshakes
            );
        }
    }
}

/// How many entries of the kept report are errors, and the first error's words.
fn unreachable_summary(env: &Env) -> String {
    let text = std::fs::read_to_string(measure::stdout_path(env)).unwrap_or_default();
    let Ok(report) = serde_json::from_str::<serde_json::Value>(&text) else {
        return "no JSON report".into();
    };
    let entries = report["entries"].as_array().cloned().unwrap_or_default();
    let errors: Vec<&serde_json::Value> =
        entries.iter().filter(|e| !e["error"].is_null()).collect();
    format!(
        "{} of {} unreachable; e.g. {}: {}",
        errors.len(),
        entries.len(),
        errors
            .first()
            .map(|e| e["context"].to_string())
            .unwrap_or_default(),
        errors
            .first()
            .and_then(|e| e["error"].as_str())
            .unwrap_or("–")
    )
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

fn text_has(value: &serde_json::Value, needle: &str) -> bool {
    value.to_string().contains(needle)
}
