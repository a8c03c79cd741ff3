//! `k3sdoctor ... | head -1`: a reader that leaves early is no error, and the exit code is
//! still the verdict's.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::support::harness::repo_path;

/// Runs on the bundled dump, reads one line of stdout, closes the pipe, and returns the exit
/// code and stderr.
fn read_one_line_then_close(args: &[&str]) -> (i32, String) {
    let home = tempfile::tempdir().unwrap();
    let dump = repo_path("tests/fixtures/split-cluster");
    let mut child = Command::new(env!("CARGO_BIN_EXE_k3sdoctor"))
        .arg("--from-file")
        .arg(&dump)
        .args(args)
        .env_clear()
        .env("HOME", home.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn k3sdoctor");
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(!first.is_empty(), "{args:?} printed nothing");
    // The reader is dropped here: the pipe is closed while the tool may still be writing.
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn closing_stdout_early_keeps_the_verdicts_exit_code() {
    // The race (the tool writing after the reader left) is hit in some runs only: repeat.
    for (args, verdict) in [
        (&["leases"][..], 1),
        (&["check"][..], 1),
        (&["check", "-o", "json"][..], 1),
        (&["leases", "-o", "yaml"][..], 1),
        (&["snapshots", "diff"][..], 1),
        (&["snapshots", "list", "--fail-on", "never"][..], 0),
    ] {
        for _ in 0..4 {
            let (code, stderr) = read_one_line_then_close(args);
            assert_eq!(code, verdict, "{args:?}: exit {code}, stderr:\n{stderr}");
            assert!(!stderr.contains("error"), "{args:?}: {stderr}");
        }
    }
}
