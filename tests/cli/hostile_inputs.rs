//! Input files nobody vetted: dumps, kubeconfigs and backups that
//! are devices, FIFOs, link cycles, too large or nested too deep end with one line and exit 3,
//! and never block, loop or grow.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::Duration;

use crate::support::harness::{Output, k3sdoctor, repo_path};

/// Long enough for a slow machine, short enough that a hang fails the test instead of the
/// suite: the runs below finish in milliseconds.
const LIMIT: Duration = Duration::from_secs(60);

fn finishes(run: crate::support::harness::Run) -> Output {
    run.spawn()
        .exit_within(LIMIT)
        .expect("k3sdoctor blocked on an input file")
}

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success());
}

fn fixture() -> String {
    repo_path("tests/fixtures/split-cluster")
        .display()
        .to_string()
}

#[test]
fn devices_and_fifos_given_as_inputs_are_one_line_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("dump.yaml");
    mkfifo(&fifo);
    let fifo = fifo.display().to_string();
    for (args, says) in [
        (
            vec!["--from-file", "/dev/zero", "check"],
            "dump /dev/zero is a character device, not a file or directory",
        ),
        (
            vec!["--from-file", fifo.as_str(), "leases"],
            "is a FIFO, not a file or directory",
        ),
        (
            vec!["--kubeconfig", "/dev/zero", "leases"],
            "kubeconfig /dev/zero is not a regular file (it is a character device); pass the kubeconfig file itself",
        ),
        (
            vec!["--kubeconfig", fifo.as_str(), "check"],
            "is not a regular file (it is a FIFO)",
        ),
    ] {
        finishes(k3sdoctor(&args))
            .code(3)
            .one_line_error()
            .stderr_has(says);
    }
    let fixture = fixture();
    finishes(k3sdoctor([
        "--from-file",
        &fixture,
        "snapshots",
        "restore",
        "--from-backup",
        "/dev/zero",
    ]))
    .code(3)
    .one_line_error()
    .stderr_has("cannot read backup /dev/zero: is not a regular file (it is a character device)");
}

#[test]
fn a_bundle_with_zero_links_fifos_and_cycles_reads_what_is_real() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("bundle");
    std::fs::create_dir(&bundle).unwrap();
    for entry in std::fs::read_dir(repo_path("tests/fixtures/split-cluster")).unwrap() {
        let entry = entry.unwrap().path();
        std::fs::copy(&entry, bundle.join(entry.file_name().unwrap())).unwrap();
    }
    symlink("/dev/zero", bundle.join("zero.yaml")).unwrap();
    mkfifo(&bundle.join("pipe.yaml"));
    let nested = bundle.join("a").join("b");
    std::fs::create_dir_all(&nested).unwrap();
    symlink(&bundle, nested.join("top")).unwrap();
    symlink("..", nested.join("up")).unwrap();
    symlink("../..", bundle.join("a").join("out")).unwrap();

    let out = finishes(k3sdoctor([
        "--from-file",
        &bundle.display().to_string(),
        "leases",
    ]));
    let plain = finishes(k3sdoctor(["--from-file", &fixture(), "leases"]));
    assert_eq!(out.code, plain.code, "{}", out.stderr);
    assert_eq!(out.stdout, plain.stdout);
    out.stderr_has("zero.yaml in the dump: a symbolic link to /dev/zero, outside")
        .stderr_has("pipe.yaml in the dump: it is a FIFO")
        .stderr_has("(links are followed only inside the folder given)");
}

#[test]
fn a_dump_file_past_the_cap_is_refused_without_reading_it() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.yaml");
    // Sparse: 300 MiB that take no disk space and are never read.
    let file = std::fs::File::create(&big).unwrap();
    file.set_len(300 << 20).unwrap();
    finishes(k3sdoctor([
        "--from-file",
        &big.display().to_string(),
        "check",
    ]))
    .code(3)
    .one_line_error()
    .stderr_has("is larger than 268435456 bytes (314572800 bytes); split it");
}

/// Item 13: a mebibyte of nesting ends at once with the parse error naming the line.
#[test]
fn a_mebibyte_of_nested_flow_collections_fails_fast() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        (
            "deep.yaml",
            format!("kind: List\nitems: {}", "[".repeat(1 << 20)),
        ),
        (
            "maps.yaml",
            format!("kind: List\nitems:\n- {}", "{a: ".repeat(1 << 18)),
        ),
        (
            "deep.json",
            format!("{}{}", "[".repeat(1 << 20), "]".repeat(1 << 20)),
        ),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let started = std::time::Instant::now();
        let out = finishes(k3sdoctor([
            "--from-file",
            &path.display().to_string(),
            "check",
        ]));
        eprintln!("{name}: exit {} after {:?}", out.code, started.elapsed());
        out.code(3)
            .one_line_error()
            .stderr_has(&format!("cannot parse dump file {}", path.display()));
        if name.ends_with(".yaml") {
            out.stderr_has("nest more than 64 deep at line");
        }
    }
}
