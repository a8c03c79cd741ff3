//! What a dump costs in memory follows what k3sdoctor keeps, not what the file holds: 27 MB of
//! tiny objects it does not use (`{"a":{}}` three million times) as a plain JSON dump, inside
//! a `.tgz` support bundle and as `--rancher-from-file`, each beside real objects that still
//! give their verdict. Built as one `serde_json::Value`, that list held 2,157 MiB (4,813 MiB
//! inside the bundle, where its items were copied once more).
//!
//! The peak is the child's own `ru_maxrss` from `wait4`. Linux folds the high-water RSS of the
//! address space a process execs from into its `ru_maxrss`, and `std::process::Command`
//! execs from the parent's (vfork/posix_spawn), so a child of this test process would report
//! at least whatever this process and its other tests ever held. The child is started instead
//! by a fresh, small process: this test binary run again with only [`peak_launcher`].

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::bundles::NOW;
use crate::support::bundles::{self, TROUBLESHOOT_TOP};
use crate::support::harness::{k3sdoctor, repo_path};

/// The ceiling: the same input took 2 to 5 GiB before its unused objects were dropped as read.
const LIMIT_KIB: i64 = 512 * 1024;
/// Three million objects of nine bytes each, with their commas: 27 MB.
const TINY: usize = 3_000_000;
/// Where the launcher finds its request.
const REQUEST_ENV: &str = "K3SDOCTOR_TEST_PEAK_REQUEST";

/// `[{"a":{}},…]`: the objects as a bare JSON array.
fn tiny_array() -> String {
    let mut text = String::with_capacity(TINY * 9 + 2);
    text.push('[');
    for n in 0..TINY {
        if n > 0 {
            text.push(',');
        }
        text.push_str(r#"{"a":{}}"#);
    }
    text.push(']');
    text
}

/// The same objects as kubectl prints a List: `items` before `kind`.
fn tiny_list() -> String {
    format!(
        r#"{{"apiVersion":"v1","items":{},"kind":"List","metadata":{{"resourceVersion":""}}}}"#,
        tiny_array()
    )
}

struct Peak {
    kib: i64,
    code: i32,
    stdout: String,
    stderr: String,
}

impl Peak {
    fn under_limit(&self, what: &str) -> &Self {
        eprintln!("{what}: peak RSS {} MiB", self.kib / 1024);
        assert!(
            self.kib < LIMIT_KIB,
            "{what}: peak RSS {} MiB, over {} MiB; stderr: {}",
            self.kib / 1024,
            LIMIT_KIB / 1024,
            self.stderr
        );
        self
    }
}

/// Runs k3sdoctor with `args` in `dir` and measures its peak RSS, through the launcher.
fn peak(dir: &Path, args: &[&str]) -> Peak {
    let request = dir.join("request.json");
    let body = json!({"args": args, "dir": dir});
    std::fs::write(&request, body.to_string()).unwrap();
    let launched = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "dump_memory::peak_launcher",
            "--test-threads",
            "1",
            "--quiet",
        ])
        .env(REQUEST_ENV, &request)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        launched.status.success(),
        "the launcher failed: {}{}",
        String::from_utf8_lossy(&launched.stdout),
        String::from_utf8_lossy(&launched.stderr)
    );
    let answer: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("answer.json")).unwrap()).unwrap();
    Peak {
        kib: answer["kib"].as_i64().unwrap(),
        code: answer["code"].as_i64().unwrap() as i32,
        stdout: std::fs::read_to_string(dir.join("stdout")).unwrap(),
        stderr: std::fs::read_to_string(dir.join("stderr")).unwrap(),
    }
}

/// Not a test: the small process [`peak`] starts to run k3sdoctor and read its `wait4` usage.
#[test]
#[ignore = "run by the peak-memory tests as their launcher"]
fn peak_launcher() {
    // Run by hand with `--ignored`, it has nothing to do.
    let Some(request) = std::env::var_os(REQUEST_ENV) else {
        return;
    };
    let request: Value = serde_json::from_str(&std::fs::read_to_string(request).unwrap()).unwrap();
    let dir = PathBuf::from(request["dir"].as_str().unwrap());
    let args: Vec<&str> = request["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let child = Command::new(env!("CARGO_BIN_EXE_k3sdoctor"))
        .args(&args)
        .env_clear()
        .env("HOME", &dir)
        .env(
            "K3SDOCTOR_TEST_SERVER_KUBECONFIGS",
            dir.join("no-server-kubeconfig"),
        )
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(dir.join("stdout")).unwrap())
        .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: all-zero is a valid `rusage`.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child, not reaped yet; both out-pointers are valid.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid, "wait4: {}", std::io::Error::last_os_error());
    // Reaped above: the handle must not wait again.
    drop(child);
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -libc::WTERMSIG(status)
    };
    let answer = json!({"kib": usage.ru_maxrss, "code": code});
    std::fs::write(dir.join("answer.json"), answer.to_string()).unwrap();
}

fn fixture() -> String {
    repo_path(bundles::FIXTURE).display().to_string()
}

#[test]
fn a_plain_json_dump_of_tiny_unused_objects_stays_small() {
    let dir = tempfile::tempdir().unwrap();
    let tiny = dir.path().join("tiny.json");
    std::fs::write(&tiny, tiny_array()).unwrap();
    let tiny = tiny.display().to_string();
    let fixture = fixture();
    let out = peak(
        dir.path(),
        &[
            "--from-file",
            &fixture,
            "--from-file",
            &tiny,
            "leases",
            "--now",
            NOW,
        ],
    );
    out.under_limit("plain dump");
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("lease-split"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("3000000 object(s) in the dump are not used by k3sdoctor and were skipped"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_tgz_bundle_holding_tiny_unused_objects_stays_small() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = bundles::troubleshoot(&bundles::split_cluster()).file(
        &format!("{TROUBLESHOOT_TOP}/cluster-resources/endpoints/default.json"),
        tiny_list(),
    );
    let tgz = dir.path().join("bundle.tgz");
    std::fs::write(&tgz, bundles::gzip(&bundle.tar())).unwrap();
    let tgz = tgz.display().to_string();
    let out = peak(dir.path(), &["--from-file", &tgz, "leases", "--now", NOW]);
    out.under_limit(".tgz bundle");
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("lease-split"), "{}", out.stderr);
}

/// A million tiny objects at the head of the fixture's Lease list, as kubectl writes YAML,
/// and the fixture's other files after it as further documents of the same 8 MB file: built
/// whole, that text held about 1.2 GiB (3.6 GiB for three million).
#[test]
fn a_large_yaml_dump_is_built_a_run_at_a_time_and_reads_as_its_parts() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = repo_path(bundles::FIXTURE);
    let mut documents = Vec::new();
    for file in [
        "kube-system-leases.yaml",
        "nodes.yaml",
        "etcdsnapshotfiles.yaml",
        "kube-system-configmaps.yaml",
    ] {
        documents.push(std::fs::read_to_string(fixture.join(file)).unwrap());
    }
    let tiny = "- a: {}\n".repeat(TINY / 3);
    documents[0] = documents[0].replacen("items:\n", &format!("items:\n{tiny}"), 1);
    let big = dir.path().join("big.yaml");
    std::fs::write(&big, documents.join("---\n")).unwrap();
    let big = big.display().to_string();
    let fixture = fixture.display().to_string();
    let out = peak(dir.path(), &["--from-file", &big, "check", "--now", NOW]);
    out.under_limit("large YAML dump");
    let parts = peak(
        dir.path(),
        &["--from-file", &fixture, "check", "--now", NOW],
    );
    assert_eq!(
        (out.code, &out.stdout),
        (parts.code, &parts.stdout),
        "{}",
        out.stderr
    );
    assert!(out.stdout.contains("lease-split"), "{}", out.stdout);
    assert!(
        out.stderr
            .contains("1000000 object(s) in the dump are not used by k3sdoctor and were skipped"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_rancher_dump_of_tiny_unused_objects_stays_small_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let tiny = dir.path().join("tiny-management.json");
    std::fs::write(&tiny, tiny_list()).unwrap();
    let tiny = tiny.display().to_string();
    let rancher = repo_path("tests/fixtures/rancher/rancher-2.11.yaml")
        .display()
        .to_string();
    let fixture = fixture();
    let alone = [
        "--from-file",
        &fixture,
        "check",
        "--now",
        NOW,
        "-o",
        "json",
        "--rancher-from-file",
        &rancher,
    ];
    let with_tiny = [&alone[..], &["--rancher-from-file", &tiny]].concat();
    let alone = peak(dir.path(), &alone);
    let out = peak(dir.path(), &with_tiny);
    out.under_limit("--rancher-from-file");
    assert_eq!(out.code, alone.code, "{}", out.stderr);
    let findings = |p: &Peak| serde_json::from_str::<Value>(&p.stdout).unwrap()["findings"].clone();
    assert_eq!(findings(&out), findings(&alone));
    assert!(
        alone.stdout.contains("rancher-snapshot-missing"),
        "{}",
        alone.stdout
    );
}

/// One more object of `kind` than k3sdoctor keeps of one kind, as a bare JSON array.
/// 100,001 objects of `kind`, each with the fields `extra` (`"a":1,` or empty) first.
fn past_the_cap(dir: &Path, api_version: &str, kind: &str, extra: &str) -> String {
    let objects: Vec<String> = (0..=100_000)
        .map(|n| {
            format!(
                r#"{{{extra}"apiVersion":"{api_version}","kind":"{kind}","metadata":{{"name":"o{n}","namespace":"default"}}}}"#
            )
        })
        .collect();
    let path = dir.join(format!("{kind}-{}.json", extra.len()));
    std::fs::write(&path, format!("[{}]", objects.join(","))).unwrap();
    path.display().to_string()
}

#[test]
fn more_objects_of_one_kind_than_are_kept_is_one_line_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    let about_nodes = r#""involvedObject":{"kind":"Node","name":"s1"},"#;
    let events = past_the_cap(dir.path(), "v1", "Event", about_nodes);
    k3sdoctor(["--from-file", &fixture(), "--from-file", &events, "leases"])
        .run()
        .code(3)
        .one_line_error()
        .stderr_has(&format!(
            "dump file {events} takes the Event objects past 100000, the most k3sdoctor keeps of one kind"
        ));
    let records = past_the_cap(dir.path(), "rke.cattle.io/v1", "ETCDSnapshot", "");
    k3sdoctor([
        "--from-file",
        &fixture(),
        "check",
        "--rancher-from-file",
        &records,
    ])
    .run()
    .code(3)
    .one_line_error()
    .stderr_has(&format!(
        "--rancher-from-file {records} takes the etcdsnapshots.rke.cattle.io past 100000"
    ));
}

/// `kubectl get events -A` of a large cluster holds far more Events than the cap, nearly all
/// about Pods: only those about Nodes are kept and counted, and the kind still counts as
/// dumped, so the Event checks run.
#[test]
fn events_about_other_objects_count_for_nothing_against_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let about_pods = r#""involvedObject":{"kind":"Pod","name":"web"},"#;
    let events = past_the_cap(dir.path(), "v1", "Event", about_pods);
    let out = k3sdoctor([
        "--from-file",
        &fixture(),
        "--from-file",
        &events,
        "check",
        "-o",
        "json",
    ])
    .run();
    assert!(matches!(out.code, 0 | 1), "{}", out.stderr);
    let report: serde_json::Value = out.json();
    let certificates = crate::support::report_checks::check_run(&report, "certificates");
    assert_eq!(certificates["ran"], true, "{certificates}");
}
