//! Fleets: `check` and `leases` over several contexts of one kubeconfig in one run.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;
use serde_json::Value;

use crate::support::fake_api::{FakeApi, Role};
use crate::support::fleet::{FleetContext, closed_port_url, write_fleet_kubeconfig};
use crate::support::harness::{Run, k3sdoctor, on_terminal};
use crate::support::objects::{NOW, lease, server};

const AFFECTED: &str = "v1.29.4+k3s1";
const FIXED: &str = "v1.29.6+k3s1";

/// The documented `FleetReport` shape, as a consumer would read it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FleetReport {
    api_version: String,
    kind: String,
    summary: FleetSummary,
    entries: Vec<FleetEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FleetSummary {
    clusters: usize,
    checked: usize,
    unreadable: usize,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FleetEntry {
    context: String,
    server: String,
    outcome: String,
    error: Option<String>,
    refused_request: Option<String>,
    report: Option<Value>,
}

fn cluster(version: &str, core: &str, etcd: &str) -> FakeApi {
    FakeApi::with_objects(vec![
        server("s1", version),
        server("s2", version),
        server("s3", version),
        lease("k3s", core, 1),
        lease("k3s-etcd", etcd, 1),
    ])
}

/// Four clusters: healthy, split, unreachable (a closed port) and forbidden (a token
/// without read rights). The fakes live as long as the returned value.
struct Fleet {
    _servers: Vec<FakeApi>,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
}

fn fleet() -> Fleet {
    let healthy = cluster(FIXED, "s1", "s1");
    let split = cluster(AFFECTED, "s1", "s2");
    let forbidden = cluster(FIXED, "s1", "s1");
    let down = closed_port_url();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = write_fleet_kubeconfig(
        dir.path(),
        "fleet.yaml",
        &[
            FleetContext {
                name: "prod-healthy",
                server: &healthy.url(),
                token: Role::ReadOnly.token(),
                ca_pem: None,
            },
            FleetContext {
                name: "prod-split",
                server: &split.url(),
                token: Role::ReadOnly.token(),
                ca_pem: None,
            },
            FleetContext {
                name: "edge-down",
                server: &down,
                token: Role::ReadOnly.token(),
                ca_pem: None,
            },
            FleetContext {
                name: "lab-forbidden",
                server: &forbidden.url(),
                token: Role::Nobody.token(),
                ca_pem: None,
            },
        ],
    );
    Fleet {
        _servers: vec![healthy, split, forbidden],
        dir,
        kubeconfig,
    }
}

fn run(fleet: &Fleet, args: &[&str]) -> Run {
    k3sdoctor(args)
        .args(&["--now", NOW, "--request-timeout", "10s"])
        .kubeconfig(&fleet.kubeconfig)
}

fn by_context(report: &FleetReport) -> BTreeMap<&str, &FleetEntry> {
    report
        .entries
        .iter()
        .map(|e| (e.context.as_str(), e))
        .collect()
}

#[test]
fn healthy_split_unreachable_and_forbidden_in_one_run() {
    let fleet = fleet();
    let out = run(&fleet, &["check", "--all-contexts", "-o", "json"]).run();
    out.code(3);
    let report: FleetReport = out.json();
    assert_eq!(
        (report.api_version.as_str(), report.kind.as_str()),
        ("k3sdoctor.io/v1", "FleetReport")
    );
    assert_eq!(
        (
            report.summary.clusters,
            report.summary.checked,
            report.summary.unreadable
        ),
        (4, 2, 2)
    );
    let entries = by_context(&report);
    let outcome = |c: &str| entries[c].outcome.as_str();
    assert_eq!(outcome("prod-healthy"), "checked");
    assert_eq!(outcome("prod-split"), "checked");
    assert_eq!(outcome("edge-down"), "unreachable");
    assert_eq!(outcome("lab-forbidden"), "forbidden");
    let split = entries["prod-split"].report.as_ref().unwrap();
    assert_eq!(split["kind"], "CheckReport");
    assert_eq!(split["findings"][0]["code"], "lease-split");
    assert!(entries["lab-forbidden"].refused_request.is_some());
    assert!(entries["edge-down"].server.starts_with("http://127.0.0.1:"));
    assert!(
        entries["edge-down"]
            .error
            .as_ref()
            .unwrap()
            .contains("connection refused")
    );
    // Worst first: the two unreadable clusters, then the split, then the healthy one.
    let order: Vec<&str> = report.entries.iter().map(|e| e.context.as_str()).collect();
    assert_eq!(
        order,
        ["edge-down", "lab-forbidden", "prod-split", "prod-healthy"]
    );
    // Each failure on stderr names its context.
    out.stderr_has("k3sdoctor: error: context edge-down: cannot ")
        .stderr_has("k3sdoctor: error: context lab-forbidden: cannot ");
}

#[test]
fn the_table_is_worst_first_and_fits_80_columns() {
    let fleet = fleet();
    let out = run(&fleet, &["check", "--all-contexts"]).run();
    out.code(3);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(lines[0].starts_with("CONTEXT "), "{}", out.stdout);
    assert!(lines[1].starts_with("edge-down ") && lines[1].ends_with("unreachable"));
    assert!(lines[2].starts_with("lab-forbidden ") && lines[2].contains(" 403 "));
    assert!(lines[3].starts_with("prod-split ") && lines[3].contains(" split "));
    assert!(lines[4].starts_with("prod-healthy ") && lines[4].ends_with("ok"));
    for line in &lines[..5] {
        assert!(line.chars().count() <= 80, "{line}");
    }
    // The rows alone on stdout (not a terminal); the findings and verdict on stderr.
    assert_eq!(lines.len(), 5, "{}", out.stdout);
    out.stderr_has("── prod-split (")
        .stderr_has("fix: k3sdoctor --kubeconfig ")
        .stderr_has("--context prod-split leases follow --fix")
        .stderr_has("4 clusters: 1 with errors, 1 healthy, 2 not read");
    // Not a terminal: no progress bar.
    assert!(!out.stderr.contains("clusters read"), "{}", out.stderr);
}

#[test]
fn the_exit_rule_unreadable_then_findings_then_healthy() {
    let fleet = fleet();
    let code = |args: &[&str]| run(&fleet, args).run().code;
    assert_eq!(code(&["check", "--contexts", "healthy$", "-o", "json"]), 0);
    assert_eq!(code(&["check", "--contexts", "^prod-", "-o", "json"]), 1);
    assert_eq!(
        code(&[
            "check",
            "--contexts",
            "^prod-",
            "--fail-on",
            "never",
            "-o",
            "json"
        ]),
        0
    );
    assert_eq!(
        code(&[
            "check",
            "--all-contexts",
            "--fail-on",
            "never",
            "-o",
            "json"
        ]),
        3
    );
    // Ignored, unreadable clusters are warnings: the split still fails the run.
    assert_eq!(
        code(&[
            "check",
            "--all-contexts",
            "--ignore-unreachable",
            "-o",
            "json"
        ]),
        1
    );
    let out = run(
        &fleet,
        &[
            "check",
            "--context",
            "prod-healthy",
            "--context",
            "edge-down",
            "--ignore-unreachable",
        ],
    )
    .run();
    out.code(0)
        .stderr_has("k3sdoctor: warning: context edge-down: cannot ")
        .stderr_has("1 not read (--ignore-unreachable)");
}

#[test]
fn contexts_match_a_regex_and_repeated_context_flags_add_up() {
    let fleet = fleet();
    let contexts = |args: &[&str]| -> Vec<String> {
        let report: FleetReport = run(&fleet, args).run().json();
        let mut names: Vec<String> = report.entries.into_iter().map(|e| e.context).collect();
        names.sort();
        names
    };
    assert_eq!(
        contexts(&["check", "--contexts", "^prod-", "-o", "json"]),
        ["prod-healthy", "prod-split"]
    );
    assert_eq!(
        contexts(&[
            "leases",
            "--context",
            "lab-forbidden",
            "--context",
            "prod-split",
            "-o",
            "json"
        ]),
        ["lab-forbidden", "prod-split"]
    );
    run(&fleet, &["check", "--contexts", "^dev-"])
        .run()
        .code(3)
        .one_line_error()
        .stderr_has("matches no context in kubeconfig")
        .stderr_has("prod-healthy, prod-split, edge-down, lab-forbidden");
    run(&fleet, &["check", "--contexts", "(unclosed"])
        .run()
        .code(2)
        .stderr_has("is not a regular expression");
}

#[test]
fn leases_reads_a_fleet_too() {
    let fleet = fleet();
    let out = run(&fleet, &["leases", "--contexts", "^prod-", "-o", "json"]).run();
    out.code(1);
    let report: FleetReport = out.json();
    let entries = by_context(&report);
    assert_eq!(
        entries["prod-split"].report.as_ref().unwrap()["kind"],
        "LeaseReport"
    );
    // `leases` reads no snapshots, so the drift column says so.
    let out = run(&fleet, &["leases", "--contexts", "^prod-"]).run();
    out.code(1);
    let split_row: Vec<&str> = out
        .stdout
        .lines()
        .find(|l| l.starts_with("prod-split "))
        .unwrap_or_else(|| panic!("no prod-split row:\n{}", out.stdout))
        .split_whitespace()
        .collect();
    assert_eq!(
        split_row,
        ["prod-split", AFFECTED, "split", "-", "3/3", "error"]
    );
}

#[test]
fn jsonl_streams_one_entry_per_cluster_in_any_order() {
    let fleet = fleet();
    let out = run(
        &fleet,
        &["check", "--all-contexts", "-o", "jsonl", "--parallel", "2"],
    )
    .run();
    out.code(3);
    let mut seen: Vec<(String, String)> = out
        .stdout
        .lines()
        .map(|line| {
            let entry: FleetEntry = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("not a fleet entry ({e}): {line}"));
            (entry.context, entry.outcome)
        })
        .collect();
    // Each line names its schema, as a JSON document does: jq reads them one by one.
    let kinds = std::process::Command::new("jq")
        .args(["-r", r#""\(.apiVersion) \(.kind)""#])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut jq| {
            use std::io::Write as _;
            jq.stdin.take().unwrap().write_all(out.stdout.as_bytes())?;
            jq.wait_with_output()
        });
    match kinds {
        Ok(kinds) => assert_eq!(
            String::from_utf8_lossy(&kinds.stdout),
            "k3sdoctor.io/v1 FleetEntry\n".repeat(4)
        ),
        Err(_) => eprintln!("skipped the jq half: jq is not installed"),
    }
    // Lines come as clusters finish; only the set is the contract.
    seen.sort();
    assert_eq!(
        seen,
        [
            ("edge-down".to_string(), "unreachable".to_string()),
            ("lab-forbidden".into(), "forbidden".into()),
            ("prod-healthy".into(), "checked".into()),
            ("prod-split".into(), "checked".into()),
        ]
    );
    run(&fleet, &["check", "-o", "jsonl"])
        .run()
        .code(2)
        .one_line_error()
        .stderr_has("-o jsonl applies to several clusters");
    run(&fleet, &["snapshots", "list", "-o", "jsonl"])
        .run()
        .code(2)
        .one_line_error();
}

#[test]
fn kubeconfig_files_in_kubeconfig_are_merged_like_kubectl() {
    let fleet = fleet();
    let other = cluster(FIXED, "s1", "s1");
    let second = write_fleet_kubeconfig(
        fleet.dir.path(),
        "second.yaml",
        &[FleetContext {
            name: "second-file",
            server: &other.url(),
            token: Role::ReadOnly.token(),
            ca_pem: None,
        }],
    );
    let joined = std::env::join_paths([&fleet.kubeconfig, &second]).unwrap();
    let out = k3sdoctor([
        "check",
        "--contexts",
        "healthy|second",
        "-o",
        "json",
        "--now",
        NOW,
    ])
    .env("KUBECONFIG", joined.to_str().unwrap())
    .run();
    out.code(0);
    let report: FleetReport = out.json();
    assert_eq!(report.summary.checked, 2, "{:?}", report.entries);
}

#[test]
fn fix_with_several_contexts_is_refused_with_the_per_cluster_command() {
    let fleet = fleet();
    run(
        &fleet,
        &[
            "leases",
            "follow",
            "--fix",
            "--yes",
            "--context",
            "prod-split",
            "--context",
            "prod-healthy",
        ],
    )
    .run()
    .code(2)
    .one_line_error()
    .stderr_has("--fix repairs one cluster at a time")
    .stderr_has("k3sdoctor --context prod-split leases follow --fix");
    run(
        &fleet,
        &[
            "snapshots",
            "backfill",
            "--fix",
            "--context",
            "a",
            "--context",
            "b",
        ],
    )
    .run()
    .code(2)
    .stderr_has("k3sdoctor --context a snapshots backfill --fix");
    run(&fleet, &["leases", "--all-contexts", "follow"])
        .run()
        .code(2)
        .stderr_has("reads one cluster");
    run(
        &fleet,
        &["check", "--all-contexts", "--from-file", "x.yaml"],
    )
    .run()
    .code(2)
    .one_line_error();
    run(&fleet, &["leases", "--watch", "--all-contexts"])
        .run()
        .code(2)
        .one_line_error()
        .stderr_has("--watch follows one cluster");
}

#[test]
fn a_rejected_token_and_a_tls_mismatch_are_their_own_outcomes() {
    let plain = cluster(FIXED, "s1", "s1");
    let tls_url = plain.url().replace("http://", "https://");
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = write_fleet_kubeconfig(
        dir.path(),
        "fleet.yaml",
        &[
            FleetContext {
                name: "bad-token",
                server: &plain.url(),
                token: "not-a-token",
                ca_pem: None,
            },
            FleetContext {
                name: "https-to-http",
                server: &tls_url,
                token: Role::ReadOnly.token(),
                ca_pem: None,
            },
            FleetContext {
                name: "fine",
                server: &plain.url(),
                token: Role::ReadOnly.token(),
                ca_pem: None,
            },
        ],
    );
    let out = k3sdoctor(["check", "--all-contexts", "--now", NOW])
        .kubeconfig(&kubeconfig)
        .run();
    out.code(3);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(
        lines[1].starts_with("bad-token ") && lines[1].ends_with(" 401"),
        "{}",
        out.stdout
    );
    assert!(
        lines[2].starts_with("https-to-http ") && lines[2].ends_with(" TLS"),
        "{}",
        out.stdout
    );
    let report: FleetReport = k3sdoctor(["check", "--all-contexts", "-o", "json", "--now", NOW])
        .kubeconfig(&kubeconfig)
        .run()
        .json();
    let entries = by_context(&report);
    assert_eq!(entries["bad-token"].outcome, "unauthorized");
    assert_eq!(entries["https-to-http"].outcome, "tls");
    assert_eq!(entries["fine"].outcome, "checked");
}

#[test]
fn on_a_terminal_a_progress_bar_counts_the_clusters() {
    let fleet = fleet();
    let command = format!(
        "{} check --all-contexts --now {NOW} --kubeconfig {}",
        env!("CARGO_BIN_EXE_k3sdoctor"),
        fleet.kubeconfig.display()
    );
    let Some(out) = on_terminal(&command, fleet.dir.path()) else {
        return;
    };
    let screen = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{screen}");
    assert!(screen.contains("/4 clusters read"), "{screen}");
    assert!(screen.contains("prod-split"), "{screen}");
}
