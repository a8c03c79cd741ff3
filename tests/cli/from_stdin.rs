//! `--from-file -`: a dump piped in reads as the same dump in a file, and an
//! endless pipe is refused at the dump cap rather than read forever.

use crate::support::harness::{k3sdoctor, repo_path};

#[test]
fn a_piped_dump_reads_like_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut all = String::new();
    for name in [
        "nodes.yaml",
        "kube-system-leases.yaml",
        "kube-system-configmaps.yaml",
        "etcdsnapshotfiles.yaml",
    ] {
        all.push_str("---\n");
        all.push_str(
            &std::fs::read_to_string(repo_path("tests/fixtures/split-cluster").join(name)).unwrap(),
        );
        all.push('\n');
    }
    let file = dir.path().join("dump.yaml");
    std::fs::write(&file, &all).unwrap();
    let from_file = k3sdoctor([
        "check",
        "-o",
        "json",
        "--from-file",
        &file.display().to_string(),
    ])
    .run();
    let from_stdin = k3sdoctor(["check", "-o", "json", "--from-file", "-"])
        .stdin_from(&file)
        .run();
    assert_eq!(from_stdin.code, from_file.code, "{}", from_stdin.stderr);
    let a: serde_json::Value = from_file.json();
    let b: serde_json::Value = from_stdin.json();
    assert_eq!(a["findings"], b["findings"]);
    assert!(
        a["findings"].as_array().is_some_and(|f| !f.is_empty()),
        "the split dump has findings"
    );
}

#[test]
fn stdin_twice_is_a_usage_error_and_an_empty_pipe_an_empty_dump() {
    let out = k3sdoctor(["check", "--from-file", "-", "--from-file", "-"]).run();
    out.code(3).one_line_error();
    out.stderr_has("standard input can be read only once");
    // /dev/null: nothing piped in reads as an empty dump, as a 0-byte file does.
    let empty = tempfile::NamedTempFile::new().unwrap();
    let from_stdin = k3sdoctor(["leases", "--from-file", "-"]).run();
    let from_file = k3sdoctor(["leases", "--from-file", &empty.path().display().to_string()]).run();
    assert_eq!(from_stdin.code, from_file.code, "{}", from_stdin.stderr);
}
