//! Performance benchmark: `cargo bench --bench perf`.
//!
//! Starts the in-repo fake Kubernetes API server on 127.0.0.1, seeds it with a 3-server k3s
//! v1.29.4+k3s1 cluster, 5,000 ETCDSnapshotFiles and a `k3s-etcd-snapshots` ConfigMap filled to
//! just under 1 MiB, then runs the release `k3sdoctor` binary (`snapshots diff`, `check`,
//! `leases`) and kubectl fetching the same data (`kubectl` on PATH, or `$KUBECTL`; Debian's
//! `kubernetes-client` package), 5 times each, and prints one markdown table of medians: wall
//! time, the child's peak RSS (`wait4`), the requests the fake received, ratios against kubectl
//! and the targets. It measures and reports; it never fails on a number.
//!
//! Not run by `cargo test` (a bench target, and `tests/bench/perf.rs` is not an integration test
//! file); `cargo test --benches` runs it without `--bench`, and then it only prints how to run it.
//! Every loop is bounded, every child is killed after 120 s, and everything is on 127.0.0.1.
//!
//! The fake serves HTTPS (`FakeApi::start_tls`): kubectl's client-go sends no credentials to an
//! `http://` server, so against the plain-HTTP fake every kubectl request is anonymous (403).

#[path = "../support/mod.rs"]
// Cargo compiles benches with `--cfg test` but, without the harness, drops their `#[test]`
// functions, which leaves the `use super::*` of the support files' unit-test modules unused.
#[allow(unused_imports)]
mod support;

mod measure;
mod seed;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use measure::{Env, Invocation, Launcher, Sample, Stdout};
use support::fake_api::{FakeApi, RequestRecord, Role};
use support::objects::NOW;

/// ETCDSnapshotFiles in the measured cluster.
const FILES: usize = 5_000;
/// A second, smaller cluster, only to show that the non-list requests stay constant.
const SMALL_FILES: usize = 600;
/// Measured runs per command (after one unmeasured warm-up run); medians are reported.
const REPEATS: usize = 5;
/// The list page size both k3sdoctor and kubectl (`--chunk-size`) use.
const PAGE_SIZE: usize = 500;
const RSS_LIMIT_MIB: f64 = 64.0;
const INSTALL_KUBECTL: &str = "apt-get install -y kubernetes-client";

/// One row of the table: one or more invocations measured together (wall times add up, peak
/// memory is the largest, requests add up).
struct Subject {
    label: String,
    steps: Vec<Invocation>,
    /// Exit codes that mean the command worked.
    ok_exits: &'static [i32],
}

impl Subject {
    fn new(label: &str, steps: Vec<Invocation>, ok_exits: &'static [i32]) -> Subject {
        Subject {
            label: label.to_string(),
            steps,
            ok_exits,
        }
    }
}

/// One measurement of a subject.
struct Outcome {
    sample: Sample,
    exits: Vec<i32>,
    requests: Vec<RequestRecord>,
}

fn measure(
    launcher: &mut Launcher,
    subject: &Subject,
    env: &Env,
    fake: &FakeApi,
    stdout: Stdout,
) -> Outcome {
    fake.clear_requests();
    let mut total = Sample {
        wall: Duration::ZERO,
        max_rss_kib: 0,
        cpu: Duration::ZERO,
        exit: 0,
    };
    let mut exits = Vec::new();
    for step in &subject.steps {
        let s = launcher.run(step, env, stdout);
        total.wall += s.wall;
        total.cpu += s.cpu;
        total.max_rss_kib = total.max_rss_kib.max(s.max_rss_kib);
        exits.push(s.exit);
    }
    Outcome {
        sample: total,
        exits,
        requests: fake.requests(),
    }
}

impl Outcome {
    fn ok(&self, subject: &Subject) -> bool {
        self.exits.iter().all(|e| subject.ok_exits.contains(e))
    }
}

/// Requests split into list pages (GETs of a seeded collection) and the rest.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct RequestSplit {
    pages: usize,
    other: usize,
    /// `ceil(objects / 500)` summed over the collections that were listed.
    expected_pages: usize,
}

fn split_requests(requests: &[RequestRecord], collections: &BTreeMap<&str, usize>) -> RequestSplit {
    let lists: Vec<&RequestRecord> = requests
        .iter()
        .filter(|r| r.method == "GET" && collections.contains_key(r.path.as_str()))
        .collect();
    let listed: BTreeSet<&str> = lists.iter().map(|r| r.path.as_str()).collect();
    let expected_pages = listed
        .iter()
        .map(|path| collections[path].div_ceil(PAGE_SIZE).max(1))
        .sum();
    RequestSplit {
        pages: lists.len(),
        other: requests.len() - lists.len(),
        expected_pages,
    }
}

fn describe_requests(requests: &[RequestRecord]) -> String {
    requests
        .iter()
        .map(|r| {
            // Continue tokens shortened: they only matter as "a next page".
            let query = match r.query.split_once("continue=") {
                _ if r.query.is_empty() => String::new(),
                Some((before, rest)) => {
                    let (token, after) = rest.split_once('&').unwrap_or((rest, ""));
                    let short: String = token.chars().take(8).collect();
                    let after = if after.is_empty() {
                        String::new()
                    } else {
                        format!("&{after}")
                    };
                    format!("?{before}continue={short}…{after}")
                }
                None => format!("?{}", r.query),
            };
            format!("    {} {}{} -> {}", r.method, r.path, query, r.status)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Medians of the measured runs of one subject.
struct Summary {
    wall_ms: f64,
    rss_mib: f64,
    requests: usize,
    requests_vary: bool,
    split: RequestSplit,
    exits: Vec<i32>,
    walls_ms: Vec<f64>,
}

fn summarise(outcomes: &[Outcome], collections: &BTreeMap<&str, usize>) -> Summary {
    let walls_ms: Vec<f64> = outcomes
        .iter()
        .map(|o| o.sample.wall.as_secs_f64() * 1000.0)
        .collect();
    let mut rss: Vec<f64> = outcomes
        .iter()
        .map(|o| o.sample.max_rss_kib as f64 / 1024.0)
        .collect();
    let counts: Vec<usize> = outcomes.iter().map(|o| o.requests.len()).collect();
    let mut sorted_counts = counts.clone();
    sorted_counts.sort_unstable();
    let requests = sorted_counts[sorted_counts.len() / 2];
    let typical = outcomes
        .iter()
        .find(|o| o.requests.len() == requests)
        .expect("a run with the median request count");
    Summary {
        wall_ms: median(&mut walls_ms.clone()),
        rss_mib: median(&mut rss),
        requests,
        requests_vary: counts.iter().any(|&c| c != requests),
        split: split_requests(&typical.requests, collections),
        exits: typical.exits.clone(),
        walls_ms,
    }
}

fn k3sdoctor(bin: &Path, args: &[&str]) -> Invocation {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--now", NOW]);
    Invocation::new(bin, &all)
}

fn main() {
    if !measure::should_run("perf") {
        return;
    }
    // Before anything big is allocated: see measure.rs.
    let mut launcher = Launcher::start();
    let bin = Path::new(env!("CARGO_BIN_EXE_k3sdoctor"));
    let work = measure::Workspace::new();
    let (home, scratch) = (work.home.clone(), work.scratch.clone());

    // HTTPS: kubectl (client-go) sends no credentials to an http:// server.
    let fake = FakeApi::start_tls();
    let seeded = seed::seed(&fake, FILES);
    let env = Env {
        kubeconfig: fake.write_kubeconfig_trusting(work.path(), Role::Admin),
        home,
        scratch,
    };

    println!("k3sdoctor performance benchmark (cargo bench --bench perf)");
    println!();
    println!("- k3sdoctor: {}", bin.display());
    if !bin.components().any(|c| c.as_os_str() == "release") {
        println!(
            "  warning: not a release build; run `cargo bench --bench perf` for release numbers"
        );
    }
    println!(
        "- cluster: fake API server (HTTPS, admin token) at {} — 3 servers + 1 agent on {}, {} kube-system Leases, \
         {} ETCDSnapshotFiles (with metadata), ConfigMap kube-system/k3s-etcd-snapshots with {} \
         entries ({} of {} bytes of values), k3s-etcd-snapshot-extra-metadata",
        fake.url(),
        seed::VERSION,
        seeded.collections["/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"],
        seeded.snapshot_files,
        seeded.configmap_entries,
        seeded.configmap_bytes,
        seed::CONFIGMAP_LIMIT,
    );

    let kubectl = measure::find_kubectl();
    let kubectl_version = kubectl
        .as_deref()
        .and_then(|k| measure::kubectl_version(&mut launcher, k, &env));
    match (&kubectl, &kubectl_version) {
        (None, _) => println!(
            "- kubectl: not found on PATH (nor $KUBECTL); install it with `{INSTALL_KUBECTL}` \
             (Debian's kubernetes-client, kubectl 1.20) for the comparison. Reporting k3sdoctor only."
        ),
        (Some(k), Some(v)) => println!("- kubectl: {} ({v})", k.display()),
        (Some(k), None) => println!(
            "- kubectl: {} (`kubectl version --client -o json` failed)",
            k.display()
        ),
    }
    if let Some(v) = &kubectl_version
        && !v.starts_with("v1.20.")
    {
        println!("  note: the baseline is Debian's kubernetes-client (kubectl 1.20); this is {v}");
    }
    if let Some(floor) = launcher.floor(&env) {
        println!(
            "- measurement floor (`true` run the same way): {:.1} ms, {:.1} MiB peak RSS",
            floor.wall.as_secs_f64() * 1000.0,
            floor.max_rss_kib as f64 / 1024.0
        );
    }

    let diff = Subject::new(
        "`k3sdoctor snapshots diff`",
        vec![k3sdoctor(bin, &["snapshots", "diff"])],
        &[0, 1],
    );
    let check = Subject::new(
        "`k3sdoctor check`",
        vec![k3sdoctor(bin, &["check"])],
        &[0, 1],
    );
    let leases = Subject::new(
        "`k3sdoctor leases`",
        vec![k3sdoctor(bin, &["leases"])],
        &[0, 1],
    );
    let kubectl_subjects = kubectl.as_deref().map(|k| {
        (
            Subject::new(
                "`kubectl get etcdsnapshotfiles -o json` + `kubectl get cm -n kube-system -o json`",
                vec![
                    Invocation::new(k, &["get", "etcdsnapshotfiles", "-o", "json"]),
                    Invocation::new(k, &["get", "cm", "-n", "kube-system", "-o", "json"]),
                ],
                &[0],
            ),
            Subject::new(
                "`kubectl get leases -n kube-system`",
                vec![Invocation::new(k, &["get", "leases", "-n", "kube-system"])],
                &[0],
            ),
        )
    });

    // Table rows: 0-2 k3sdoctor, 3-4 their kubectl baselines.
    let mut subjects: Vec<&Subject> = vec![&diff, &check, &leases];
    if let Some((pair, kleases)) = &kubectl_subjects {
        subjects.push(pair);
        subjects.push(kleases);
    }

    // Warm-up: one unmeasured run each (fills kubectl's discovery cache in HOME, the page
    // cache, and checks that every command works).
    println!();
    println!("Warm-up (unmeasured):");
    let mut working = vec![true; subjects.len()];
    for (i, subject) in subjects.iter().enumerate() {
        let warm = measure(&mut launcher, subject, &env, &fake, Stdout::Keep);
        let stdout = std::fs::read_to_string(measure::stdout_path(&env)).unwrap_or_default();
        let last = stdout
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        println!(
            "- {}: exit {:?}, {} requests, {} bytes on stdout (last step), last line: {}",
            subject.label,
            warm.exits,
            warm.requests.len(),
            stdout.len(),
            last.chars().take(160).collect::<String>()
        );
        if subject.steps[0].program == bin {
            // The findings' headlines, so the table can be read against what was found.
            for line in stdout.lines().filter(|l| {
                ["ERROR ", "WARNING ", "INFO "]
                    .iter()
                    .any(|p| l.starts_with(p))
            }) {
                println!("  {}", line.chars().take(200).collect::<String>());
            }
        } else {
            println!(
                "  requests (discovery cache cold):\n{}",
                describe_requests(&warm.requests)
            );
        }
        if !warm.ok(subject) {
            working[i] = false;
            let stderr = std::fs::read_to_string(measure::stderr_path(&env)).unwrap_or_default();
            println!(
                "  FAILED: stderr of the last step:\n{}\n  requests and statuses:\n{}",
                stderr.trim_end(),
                describe_requests(&warm.requests)
            );
        }
    }

    // Measured runs, interleaved so that drift hits every command alike.
    let mut outcomes: Vec<Vec<Outcome>> = subjects.iter().map(|_| Vec::new()).collect();
    for _ in 0..REPEATS {
        for (i, subject) in subjects.iter().enumerate() {
            if working[i] {
                outcomes[i].push(measure(
                    &mut launcher,
                    subject,
                    &env,
                    &fake,
                    Stdout::Discard,
                ));
            }
        }
    }
    let summaries: Vec<Option<Summary>> = outcomes
        .iter()
        .map(|o| (!o.is_empty()).then(|| summarise(o, &seeded.collections)))
        .collect();

    // The same k3sdoctor commands against a smaller cluster: the non-list requests must not
    // change with the number of snapshots.
    let small_fake = FakeApi::start_tls();
    let small = seed::seed(&small_fake, SMALL_FILES);
    let small_env = Env {
        kubeconfig: small_fake.write_kubeconfig_trusting(&env.scratch, Role::Admin),
        home: env.home.clone(),
        scratch: env.scratch.clone(),
    };
    let small_splits: Vec<RequestSplit> = [&diff, &check, &leases]
        .iter()
        .map(|s| {
            let o = measure(&mut launcher, s, &small_env, &small_fake, Stdout::Discard);
            split_requests(&o.requests, &small.collections)
        })
        .collect();

    println!();
    println!("Wall times of the {REPEATS} measured runs (ms):");
    for (subject, summary) in subjects.iter().zip(&summaries) {
        if let Some(s) = summary {
            let walls: Vec<String> = s.walls_ms.iter().map(|w| format!("{w:.1}")).collect();
            println!("- {}: {}", subject.label, walls.join(", "));
        }
    }
    if let Some(pair) = outcomes.get(3).and_then(|o| o.last()) {
        println!();
        println!(
            "Requests of the kubectl pair (warm discovery cache):\n{}",
            describe_requests(&pair.requests)
        );
    }
    println!();
    println!(
        "Requests of `k3sdoctor snapshots diff`:\n{}",
        describe_requests(outcomes[0].last().map(|o| &o.requests[..]).unwrap_or(&[]))
    );

    // The table.
    let baseline = |i: usize| -> Option<&Summary> {
        match i {
            0 | 1 => summaries.get(3).and_then(Option::as_ref),
            2 => summaries.get(4).and_then(Option::as_ref),
            _ => None,
        }
    };
    let no_kubectl = if kubectl.is_none() {
        "no kubectl"
    } else {
        "kubectl failed"
    };
    println!();
    println!(
        "| command | wall ms (median of {REPEATS}) | peak RSS MiB | requests | wall vs kubectl | peak RSS vs kubectl | targets |"
    );
    println!("|---|---:|---:|---|---:|---:|---|");
    for (i, subject) in subjects.iter().enumerate() {
        let Some(s) = &summaries[i] else {
            println!(
                "| {} | – | – | – | – | – | did not run: see the warm-up output |",
                subject.label
            );
            continue;
        };
        let exits = if s.exits.iter().all(|&e| e == 0) {
            String::new()
        } else {
            format!(" (exit {})", join(&s.exits))
        };
        let requests = format!(
            "{}{} = {} list pages + {}",
            s.requests,
            if s.requests_vary { " (varied)" } else { "" },
            s.split.pages,
            s.split.other
        );
        let base = baseline(i);
        let ratio = |x: f64, b: Option<f64>| {
            b.map_or_else(|| "–".to_string(), |b| format!("{:.2}×", x / b))
        };
        let wall_ratio = base.map(|b| s.wall_ms / b.wall_ms);
        let mut targets = Vec::new();
        if i < 3 {
            let time_target = match i {
                0 => Some(1.0),
                2 => Some(0.5),
                _ => None,
            };
            if let Some(limit) = time_target {
                targets.push(match wall_ratio {
                    Some(r) => format!("time ≤ {limit:.1}× kubectl: {} ({r:.2}×)", met(r <= limit)),
                    None => format!("time ≤ {limit:.1}× kubectl: not measured ({no_kubectl})"),
                });
            }
            targets.push(format!(
                "peak RSS < {RSS_LIMIT_MIB:.0} MiB: {} ({:.1} MiB)",
                met(s.rss_mib < RSS_LIMIT_MIB),
                s.rss_mib
            ));
            let small = small_splits[i];
            let constant = s.split.other == small.other && !s.requests_vary;
            let pages =
                s.split.pages == s.split.expected_pages && small.pages == small.expected_pages;
            targets.push(format!(
                "requests = list pages + constant: {} ({} pages of {PAGE_SIZE} as expected: {}; \
                 + {} here, + {} with {SMALL_FILES} snapshots)",
                met(constant && pages),
                s.split.expected_pages,
                if pages { "yes" } else { "no" },
                s.split.other,
                small.other
            ));
        } else {
            targets.push("baseline".to_string());
        }
        println!(
            "| {}{} | {:.1} | {:.1} | {} | {} | {} | {} |",
            subject.label,
            exits,
            s.wall_ms,
            s.rss_mib,
            requests,
            ratio(s.wall_ms, base.map(|b| b.wall_ms)),
            ratio(s.rss_mib, base.map(|b| b.rss_mib)),
            targets.join("; ")
        );
    }
    println!();
    println!(
        "Ratios: `snapshots diff` and `check` against the kubectl pair (which fetches the same \
         snapshot data), `leases` against `kubectl get leases -n kube-system`. `check` has no time \
         target. Exit 1 = findings at --fail-on level (not an error)."
    );
}

fn met(ok: bool) -> &'static str {
    if ok { "met" } else { "MISSED" }
}

fn join(exits: &[i32]) -> String {
    exits
        .iter()
        .map(i32::to_string)
        .collect::<Vec<_>>()
        .join("+")
}
