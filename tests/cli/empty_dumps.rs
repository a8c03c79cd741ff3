//! A dump that holds none of a command's objects is unreadable input (exit 3, one line naming
//! what it lacks and the kubectl command that adds it), never a healthy verdict.

use crate::support::harness::{Output, k3sdoctor};
use crate::support::objects::{lease, server, write_dump};

fn on_dump(path: &std::path::Path, args: &[&str]) -> Output {
    k3sdoctor(["--from-file", &path.display().to_string()])
        .args(args)
        .run()
}

/// The error line with the dump's path taken out, to compare two dumps' answers.
fn error_without(out: &Output, path: &std::path::Path) -> String {
    out.stderr
        .lines()
        .find(|l| l.contains(": error: "))
        .unwrap_or_default()
        .replace(&path.display().to_string(), "DUMP")
}

const COMMANDS: [(&[&str], &str, &str); 4] = [
    (
        &["leases"],
        "has no Leases and no lock ConfigMaps from kube-system",
        "kubectl -n kube-system get leases,configmaps -o yaml",
    ),
    (
        &["snapshots", "list"],
        "has neither ETCDSnapshotFiles nor ConfigMaps from kube-system",
        "kubectl get etcdsnapshotfiles.k3s.cattle.io -o yaml",
    ),
    (
        &["snapshots", "diff"],
        "has neither ETCDSnapshotFiles nor ConfigMaps from kube-system",
        "kubectl -n kube-system get configmaps -o yaml",
    ),
    (
        &["check"],
        "has none of the objects k3sdoctor checks",
        "kubectl get nodes,etcdsnapshotfiles.k3s.cattle.io -o yaml",
    ),
];

#[test]
fn an_empty_file_and_an_empty_directory_exit_3_alike() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("empty.yaml");
    std::fs::write(&file, "").unwrap();
    let empty_dir = dir.path().join("bundle");
    std::fs::create_dir(&empty_dir).unwrap();
    for (args, lacks, command) in COMMANDS {
        let from_file = on_dump(&file, args);
        from_file
            .code(3)
            .one_line_error()
            .stderr_has(lacks)
            .stderr_has(command);
        let from_dir = on_dump(&empty_dir, args);
        from_dir.code(3).one_line_error();
        assert_eq!(
            error_without(&from_file, &file),
            error_without(&from_dir, &empty_dir),
            "{args:?}"
        );
    }
}

#[test]
fn a_list_of_unrelated_objects_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pods.json");
    std::fs::write(
        &file,
        r#"{"apiVersion":"v1","kind":"List","items":[
            {"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","namespace":"default"}},
            {"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"x","namespace":"default"}}]}"#,
    )
    .unwrap();
    for (args, lacks, _) in COMMANDS {
        on_dump(&file, args)
            .code(3)
            .one_line_error()
            .stderr_has(lacks);
    }
}

#[test]
fn a_partial_dump_keeps_its_dump_incomplete_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("leases.yaml");
    let v = "v1.29.4+k3s1";
    write_dump(
        &file,
        &[
            server("s1", v),
            lease("k3s", "s1", 1),
            lease("k3s-etcd", "s1", 1),
        ],
    );
    on_dump(&file, &["leases"]).code(0);
    let out = on_dump(&file, &["check", "-o", "json"]);
    let report: serde_json::Value = out.json();
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["code"] == "dump-incomplete"),
        "{report:#}"
    );
    assert_ne!(out.code, 3, "{}", out.stderr);
}
