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
            // stderr carries the findings off a terminal; never an error about the pipe.
            assert!(
                !stderr.contains("k3sdoctor: error")
                    && !stderr.to_lowercase().contains("broken pipe"),
                "{args:?}: {stderr}"
            );
        }
    }
}

/// `k3sdoctor check >&-` (stdout closed: Rust's runtime opens /dev/null in its place before
/// `main`, so nothing can take its number) and `k3sdoctor check | true` (a pipe whose reader
/// is gone before the first write): nothing reads the report either way, and the exit code is
/// the verdict's, with no error, live and on a dump.
#[test]
fn a_closed_stdout_or_a_pipe_closed_at_once_keeps_the_verdicts_exit_code() {
    use crate::support::objects::fresh_cluster;
    use std::os::unix::process::CommandExt as _;

    let fake = fresh_cluster(&["s1"]);
    let home = tempfile::tempdir().unwrap();
    let kubeconfig = fake.write_kubeconfig(home.path(), crate::support::fake_api::Role::Admin);
    let dump = repo_path("tests/fixtures/split-cluster");
    let live = ["--kubeconfig", kubeconfig.to_str().unwrap()];
    let on_dump = ["--from-file", dump.to_str().unwrap()];
    for (source, args, verdict) in [
        (&live[..], &["check"][..], 0),
        (&live[..], &["leases", "-o", "json"][..], 0),
        (&live[..], &["snapshots", "list"][..], 0),
        (
            &live[..],
            &["check", "--all-contexts", "-o", "jsonl"][..],
            0,
        ),
        (&on_dump[..], &["check"][..], 1),
        (&on_dump[..], &["leases", "-o", "yaml"][..], 1),
        (&on_dump[..], &["check", "--fail-on", "never"][..], 0),
    ] {
        for closed_how in [">&-", "| true"] {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_k3sdoctor"));
            cmd.args(source)
                .args(args)
                .env_clear()
                .env("HOME", home.path())
                .stdin(Stdio::null())
                .stderr(Stdio::piped());
            let out = if closed_how == ">&-" {
                // SAFETY: close(2) between fork and exec touches no memory of the parent.
                unsafe {
                    cmd.pre_exec(|| {
                        libc::close(1);
                        Ok(())
                    });
                }
                cmd.output().expect("run k3sdoctor")
            } else {
                let mut child = cmd.stdout(Stdio::piped()).spawn().expect("run k3sdoctor");
                drop(child.stdout.take());
                child.wait_with_output().expect("wait for k3sdoctor")
            };
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(verdict),
                "{args:?} {closed_how}: stderr:\n{stderr}"
            );
            assert!(!stderr.contains("error"), "{args:?} {closed_how}: {stderr}");
        }
    }
}
