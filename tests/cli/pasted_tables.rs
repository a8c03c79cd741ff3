//! kubectl tables operators paste instead of a dump: read as the partial
//! evidence they are, alone or beside a dump, saying what they cannot show; a header-less
//! fragment is refused as before.

use crate::support::harness::{Output, k3sdoctor, repo_path};

fn fixture(name: &str) -> String {
    repo_path("tests/fixtures").join(name).display().to_string()
}

fn check(files: &[&str]) -> Output {
    let mut run = k3sdoctor(["check", "-o", "json"]);
    for file in files {
        run = run.args(&["--from-file", &fixture(file)]);
    }
    run.run()
}

fn codes(report: &serde_json::Value) -> Vec<(String, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_pasted_lease_table_alone_shows_the_split_and_says_freshness_was_not_checked() {
    let out = check(&["pasted/leases-split.txt"]);
    out.stderr_has("as a pasted `kubectl get leases` table: 5 lock(s) in kube-system");
    let report: serde_json::Value = out.json();
    let codes = codes(&report);
    assert!(
        codes.contains(&("lease-split".into(), "warning".into())),
        "{codes:?}"
    );
    let holders_only = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| {
            f["message"]
                .as_str()
                .unwrap()
                .contains("names each lock's holder only")
        })
        .expect("the table's limit is a finding");
    assert_eq!(holders_only["code"], "dump-incomplete");
    assert!(
        !codes.iter().any(|(c, _)| c == "lease-expired"),
        "no renew time is no verdict on freshness: {codes:?}"
    );
}

#[test]
fn beside_the_nodes_the_split_is_judged_for_the_version() {
    let out = check(&["pasted/leases-split.txt", "split-cluster/nodes.yaml"]);
    out.code(1);
    let report: serde_json::Value = out.json();
    let codes = codes(&report);
    assert!(
        codes.contains(&("lease-split".into(), "error".into())),
        "v1.29.4 is affected: {codes:?}"
    );
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["message"]
                .as_str()
                .unwrap()
                .contains("names each lock's holder only")),
        "freshness is still not judged"
    );
}

#[test]
fn beside_a_dump_of_the_same_leases_the_objects_win() {
    // Every lock of the table is also in the dump (leases-split.txt adds k3s-cloud-controller,
    // whose freshness only the table would tell).
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("leases.txt");
    std::fs::write(
        &table,
        "NAME       HOLDER       AGE\nk3s        prod-k3s-1   41d\nk3s-etcd   prod-k3s-2   41d\n",
    )
    .unwrap();
    let out = k3sdoctor(["check", "-o", "json"])
        .args(&["--from-file", &table.display().to_string()])
        .args(&[
            "--from-file",
            &fixture("split-cluster/kube-system-leases.yaml"),
        ])
        .args(&["--from-file", &fixture("split-cluster/nodes.yaml")])
        .run();
    out.stderr_has("kept resourceVersion 4236 from");
    let report: serde_json::Value = out.json();
    assert!(
        !report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["message"]
                .as_str()
                .unwrap()
                .contains("names each lock's holder only")),
        "every lock was read with its renew time: {}",
        report["findings"]
    );
}

#[test]
fn an_all_namespaces_table_with_shifted_columns_keeps_whole_holders() {
    let out = k3sdoctor([
        "leases",
        "-o",
        "json",
        "--from-file",
        &fixture("pasted/leases-all-namespaces-wide.txt"),
    ])
    .run();
    out.stderr_has("3 lock(s) in kube-system");
    let report: serde_json::Value = out.json();
    let text = report.to_string();
    assert!(text.contains("\"ip-10-0-0-xxx-redacted\""), "{text}");
    assert!(
        !text.contains("41d"),
        "the age is no part of a holder: {text}"
    );
}

#[test]
fn a_header_less_fragment_is_refused_as_before() {
    for args in [&["check"][..], &["leases"], &["snapshots", "diff"]] {
        let out = k3sdoctor(args)
            .args(&["--from-file", &fixture("pasted/leases-fragment.txt")])
            .run();
        out.code(3).one_line_error().stderr_has("kubectl ");
    }
}

/// The findings whose message mentions `text`.
fn finding_with<'a>(report: &'a serde_json::Value, text: &str) -> Option<&'a serde_json::Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["message"].as_str().unwrap().contains(text))
}

/// Checks a table cannot judge: it shows no finalizers, metadata, S3 settings or times.
const NOT_FROM_A_TABLE: [&str; 3] = [
    "snapshot-controller-idle",
    "snapshot-stale-in-configmap",
    "snapshot-name-digest-mismatch",
];

#[test]
fn a_pasted_snapshot_table_alone_shows_the_empty_record_and_says_what_was_not_checked() {
    let out = check(&["pasted/etcdsnapshotfiles-split.txt"]);
    out.stderr_has("as a pasted `kubectl get etcdsnapshotfiles` table: 24 snapshot(s)");
    let report: serde_json::Value = out.json();
    let codes = codes(&report);
    let empty = finding_with(&report, "s3-etcd-snapshot-prod-k3s-1-1717160000-41242b")
        .expect("the empty S3 record is judged from its row");
    assert_eq!(empty["code"], "snapshot-record-empty");
    let gap = finding_with(&report, "is a pasted table of snapshots")
        .expect("the table's limits are a finding");
    assert_eq!(gap["code"], "dump-incomplete");
    for code in NOT_FROM_A_TABLE {
        assert!(gap["message"].as_str().unwrap().contains(code), "{gap}");
        assert!(!codes.iter().any(|(c, _)| c == code), "{code}: {codes:?}");
    }
}

#[test]
fn beside_the_configmap_a_snapshot_table_names_the_snapshots_without_an_entry() {
    let out = check(&[
        "pasted/etcdsnapshotfiles-split.txt",
        "split-cluster/kube-system-configmaps.yaml",
        "split-cluster/kube-system-leases.yaml",
        "split-cluster/nodes.yaml",
    ]);
    out.code(1);
    let report: serde_json::Value = out.json();
    let codes = codes(&report);
    let missing = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| std::iter::once(f).chain(f["children"].as_array().into_iter().flatten()))
        .find(|f| f["code"] == "snapshot-missing-from-configmap")
        .unwrap_or_else(|| panic!("{}", report["findings"]));
    assert!(
        missing["message"]
            .as_str()
            .unwrap()
            .starts_with("16 snapshots that k3s lists"),
        "{missing}"
    );
    // The S3 row is keyed `s3-…` as k3s keys it, so its entry is found, not orphaned.
    assert!(
        !codes
            .iter()
            .any(|(c, _)| c == "snapshot-orphaned-in-configmap"),
        "{codes:?}"
    );
    for code in NOT_FROM_A_TABLE {
        assert!(!codes.iter().any(|(c, _)| c == code), "{code}: {codes:?}");
    }
}

#[test]
fn snapshots_diff_on_a_pasted_table_lists_the_rows_without_an_entry() {
    let out = k3sdoctor(["snapshots", "diff", "-o", "json"])
        .args(&[
            "--from-file",
            &fixture("pasted/etcdsnapshotfiles-split.txt"),
        ])
        .args(&[
            "--from-file",
            &fixture("split-cluster/kube-system-configmaps.yaml"),
        ])
        .run();
    out.code(1);
    let report: serde_json::Value = out.json();
    let count = |state: &str| {
        report["snapshots"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["state"] == state)
            .count()
    };
    // The differences only: 16 without an entry (the 8 with one are not listed), none stale,
    // although no row holds what an entry holds.
    assert_eq!(
        (count("missing"), count("stale")),
        (16, 0),
        "{}",
        report["snapshots"]
    );
    let empty = report["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["node"] == "s3")
        .expect("the empty S3 record is a row");
    assert_eq!(empty["storage"], "s3", "{empty}");
}

#[test]
fn pasted_etcd_snapshot_ls_output_shows_missing_entries_and_the_empty_record_but_no_orphans() {
    let out = check(&[
        "pasted/etcd-snapshot-ls.txt",
        "split-cluster/kube-system-configmaps.yaml",
        "split-cluster/kube-system-leases.yaml",
        "split-cluster/nodes.yaml",
    ]);
    out.code(1)
        .stderr_has("as pasted `etcd-snapshot ls` output: 5 snapshot(s)");
    let report: serde_json::Value = out.json();
    let codes = codes(&report);
    let empty = finding_with(&report, "s3-etcd-snapshot-prod-k3s-1-1717160000")
        .expect("the empty S3 record is judged from its row");
    assert_eq!(
        (&empty["code"], &empty["severity"]),
        (&"snapshot-record-empty".into(), &"error".into()),
        "the newest S3 snapshot: {empty}"
    );
    let gap = finding_with(&report, "is a pasted table of snapshots").expect("the limits");
    assert!(
        gap["message"].as_str().unwrap().contains("one server sees"),
        "{gap}"
    );
    // The other servers' entries have no row: ls on one server does not show them.
    for code in NOT_FROM_A_TABLE
        .iter()
        .chain(&["snapshot-orphaned-in-configmap"])
    {
        assert!(!codes.iter().any(|(c, _)| c == code), "{code}: {codes:?}");
    }
}

#[test]
fn snapshots_diff_on_pasted_etcd_snapshot_ls_output_lists_the_snapshots_without_an_entry() {
    let out = k3sdoctor(["snapshots", "diff", "-o", "json"])
        .args(&["--from-file", &fixture("pasted/etcd-snapshot-ls.txt")])
        .args(&[
            "--from-file",
            &fixture("split-cluster/kube-system-configmaps.yaml"),
        ])
        .run();
    out.code(1);
    let report: serde_json::Value = out.json();
    let mut missing: Vec<&str> = report["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["state"] == "missing")
        .map(|r| r["key"].as_str().unwrap())
        .collect();
    missing.sort();
    assert_eq!(
        missing,
        [
            "local-etcd-snapshot-prod-k3s-1-1716984000",
            "local-etcd-snapshot-prod-k3s-1-1717027200",
            "s3-etcd-snapshot-prod-k3s-1-1717160000",
        ]
    );
    assert!(
        report["orphaned"].as_array().unwrap().is_empty(),
        "{}",
        report["orphaned"]
    );
}

/// `etcd-snapshot ls` names no node for a local snapshot and no ETCDSnapshotFile: the diff
/// says no empty node, and the empty record's fix finds the objects instead of naming one
/// that does not exist.
#[test]
fn pasted_etcd_snapshot_ls_output_names_no_empty_node_and_no_object_it_cannot_know() {
    let out = k3sdoctor(["snapshots", "diff"])
        .args(&["--from-file", &fixture("pasted/etcd-snapshot-ls.txt")])
        .run();
    out.code(1);
    let text = format!("{}{}", out.stdout, out.stderr);
    assert!(!text.contains("node )"), "{text}");
    assert!(
        !text.contains("kubectl delete etcdsnapshotfile s3-"),
        "{text}"
    );
    assert!(
        text.contains("kubectl get etcdsnapshotfiles -o name"),
        "{text}"
    );
}

/// rancher/rke2#5866's own table, as pasted into the thread: its lock rows lost their AGE and
/// their alignment. The holders are read, so the split between the two servers is what is
/// reported, not two released locks.
#[test]
fn rke2_5866s_pasted_table_gives_the_split_between_its_holders() {
    let out = check(&["pasted/rke2-5866-leases.txt"]);
    let report: serde_json::Value = out.json();
    let codes = codes(&report);
    assert!(codes.iter().any(|(c, _)| c == "lease-split"), "{codes:?}");
    assert!(
        !codes.iter().any(|(c, _)| c == "lease-released"),
        "{codes:?}"
    );
    let split = finding_with(&report, "ip-172-3").expect("the split names the -etcd holder");
    assert_eq!(split["code"], "lease-split");
    assert!(
        split["message"].as_str().unwrap().contains("ip-172-1"),
        "{split:#}"
    );
}

/// `kubectl get nodes` and `kubectl get lease` pasted into one file, in either order: both
/// tables are read, and the nodes' VERSION judges the split (v1.29.4+k3s1 is affected), with
/// none of the member checks a table cannot show.
#[test]
fn a_nodes_table_beside_a_lease_table_gives_the_versions_in_either_order() {
    for file in [
        "pasted/nodes-then-leases.txt",
        "pasted/leases-then-nodes.txt",
    ] {
        let out = check(&[file]);
        out.stderr_has("as a pasted `kubectl get nodes` table: 4 node(s)")
            .stderr_has("as a pasted `kubectl get leases` table: 2 lock(s)");
        let report: serde_json::Value = out.json();
        assert_eq!(out.code, 1, "{file}: {report:#}");
        let codes = codes(&report);
        assert!(
            codes.contains(&("lease-split".into(), "error".into())),
            "{file}: {codes:?}"
        );
        assert!(
            !codes.iter().any(|(c, _)| c.starts_with("member-")),
            "{file}: a table shows no finalizers: {codes:?}"
        );
    }
}

/// A file of tables none of which k3sdoctor reads is refused as an empty input, as before.
#[test]
fn a_file_of_tables_k3sdoctor_does_not_read_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pods.txt");
    std::fs::write(
        &file,
        "$ kubectl get pods -A\nNAMESPACE     NAME          READY   STATUS    RESTARTS   AGE\nkube-system   coredns-abc   1/1     Running   0          3d\n",
    )
    .unwrap();
    k3sdoctor(["check", "--from-file"])
        .arg(file.display().to_string())
        .run()
        .code(3)
        .one_line_error();
}
