//! Support bundles as `--from-file` input, built in each test from the
//! split-cluster fixture: each collector's layout reads to the same verdicts as the dump of the
//! same objects and says what it cannot show (`layouts`); containers, caps, truncation and
//! nesting (`containers`).

mod containers;
mod hostile;
mod layouts;

use serde_json::Value;

use crate::support::bundles::{self, FIXTURE};
use crate::support::harness::{Output, k3sdoctor, repo_path};

/// The fixture's "now": just after its newest renewal.
pub(crate) const NOW: &str = "2024-05-31T12:10:41Z";

pub(crate) fn write(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    path.display().to_string()
}

/// The split cluster as troubleshoot's gzip tar, written to `dir/name`.
pub(crate) fn troubleshoot_tgz(dir: &tempfile::TempDir, name: &str) -> String {
    write(
        dir,
        name,
        &bundles::gzip(&bundles::troubleshoot(&bundles::split_cluster()).tar()),
    )
}

pub(crate) fn run(args: &[&str], from: &str) -> Output {
    k3sdoctor(args.iter().copied())
        .args(&["--from-file", from])
        .run()
}

/// The report without what says where it was read from.
pub(crate) fn verdict(out: &Output) -> Value {
    let mut report: Value = out.json();
    report.as_object_mut().unwrap().remove("readFrom");
    report
}

pub(crate) fn dump_verdict(command: &[&str]) -> (i32, Value) {
    let args = [command, &["-o", "json", "--now", NOW]].concat();
    let out = run(&args, &repo_path(FIXTURE).display().to_string());
    (out.code, verdict(&out))
}

#[track_caller]
pub(crate) fn assert_same_as_dump(command: &[&str], bundle: &str) -> Output {
    let (code, expected) = dump_verdict(command);
    let args = [command, &["-o", "json", "--now", NOW]].concat();
    let out = run(&args, bundle);
    assert_eq!(out.code, code, "{}", out.stderr);
    assert_eq!(
        verdict(&out),
        expected,
        "{command:?} on {bundle} differs from the dump"
    );
    out
}
