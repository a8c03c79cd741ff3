//! Pasted `kubectl get configmaps` tables: DATA says how many entries the
//! snapshot ConfigMap holds, never which. Judged as a count beside the snapshots, as known
//! empty when DATA is 0 or a whole listing lacks it, and never as a claim about one key.

use std::path::Path;

use crate::support::harness::{Output, k3sdoctor, repo_path};

fn fixture(name: &str) -> String {
    repo_path("tests/fixtures").join(name).display().to_string()
}

fn run(args: &[&str], files: &[&str]) -> Output {
    let mut run = k3sdoctor(args);
    for file in files {
        run = run.args(&["--from-file", file]);
    }
    run.run()
}

/// Every finding, children too.
fn findings(report: &serde_json::Value) -> Vec<&serde_json::Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| std::iter::once(f).chain(f["children"].as_array().into_iter().flatten()))
        .collect()
}

fn with_code<'a>(report: &'a serde_json::Value, code: &str) -> Vec<&'a serde_json::Value> {
    findings(report)
        .into_iter()
        .filter(|f| f["code"] == code)
        .collect()
}

fn message(f: &serde_json::Value) -> &str {
    f["message"].as_str().unwrap()
}

fn table(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

const SNAPSHOTS: &str = "pasted/etcdsnapshotfiles-split.txt";

/// k3s-io/k3s#10046 as pasted into an issue: the three tables in one file, DATA 0.
#[test]
fn three_tables_in_one_paste_show_the_split_and_every_snapshot_without_an_entry() {
    let out = run(
        &["check", "-o", "json"],
        &[
            &fixture("pasted/split-issue.txt"),
            &fixture("split-cluster/nodes.yaml"),
        ],
    );
    out.code(1)
        .stderr_has("as a pasted `kubectl get leases` table: 5 lock(s)")
        .stderr_has("as a pasted `kubectl get etcdsnapshotfiles` table: 24 snapshot(s)")
        .stderr_has("as a pasted `kubectl get configmaps` table: 9 row(s), every ConfigMap in kube-system: k3s-etcd-snapshot-extra-metadata with 1 entry, k3s-etcd-snapshots with 0 entries");
    let report: serde_json::Value = out.json();
    assert!(
        with_code(&report, "lease-split")
            .iter()
            .any(|f| f["severity"] == "error"),
        "{}",
        report["findings"]
    );
    let missing = with_code(&report, "snapshot-missing-from-configmap");
    assert_eq!(missing.len(), 1, "{missing:?}");
    let text = message(missing[0]);
    // DATA 0 makes every name certain: no entry at all.
    assert!(
        text.starts_with("24 snapshots that k3s lists should be in k3s-etcd-snapshots (")
            && text.contains("shows it holds 0 entries) but are not")
            && text.contains("k3s-io/k3s#10046"),
        "{text}"
    );
    assert_eq!(missing[0]["severity"], "error");
    assert!(
        with_code(&report, "snapshot-orphaned-in-configmap").is_empty(),
        "no entries, no orphans"
    );
}

#[test]
fn a_count_short_of_the_snapshots_is_at_least_the_difference_never_a_list_of_keys() {
    let out = run(
        &["check", "-o", "json"],
        &[
            &fixture(SNAPSHOTS),
            &fixture("pasted/configmaps-kube-system.txt"),
        ],
    );
    let report: serde_json::Value = out.json();
    let missing = with_code(&report, "snapshot-missing-from-configmap");
    assert_eq!(missing.len(), 1, "{missing:?}");
    let text = message(missing[0]);
    assert!(
        text.contains("k3s-etcd-snapshots holds 8 entries (")
            && text.contains(
                "24 ETCDSnapshotFiles should have one (counting each as having the metadata"
            )
            && text.contains("which a table row does not show), so at least 16 have none")
            && text.contains("Which ones a count cannot show")
            && text.contains("1 MiB"),
        "{text}"
    );
    assert!(
        missing[0].get("objectRefs").is_none() && !text.contains("local-etcd-snapshot-"),
        "a count names no snapshot: {}",
        missing[0]
    );
    let gap = with_code(&report, "dump-incomplete")
        .into_iter()
        .find(|f| message(f).contains("`kubectl get configmaps` table"))
        .expect("what the count cannot show is a finding");
    assert!(
        message(gap).contains("exists with 8 entries")
            && message(gap).contains(
                "which keys, their values and sizes, and whether entries are stale or orphaned"
            ),
        "{gap}"
    );
}

#[test]
fn snapshots_diff_on_a_count_exits_1_with_the_shortfall_and_lists_no_row() {
    let files = [
        fixture(SNAPSHOTS),
        fixture("pasted/configmaps-kube-system.txt"),
    ];
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    let out = run(&["snapshots", "diff", "-o", "json"], &files);
    out.code(1);
    let report: serde_json::Value = out.json();
    assert_eq!(
        report["entryCount"].as_object().map(|c| (
            &c["entries"],
            &c["shouldHaveEntry"],
            &c["withoutEntryAtLeast"]
        )),
        Some((&8.into(), &24.into(), &16.into())),
        "{}",
        report
    );
    assert!(
        report["snapshots"].as_array().unwrap().is_empty(),
        "no row is a known difference: {}",
        report["snapshots"]
    );
    let text = run(&["snapshots", "diff"], &files);
    text.code(1)
        .stderr_has("8 entries (a count from")
        .stderr_has("at least 16 of 24 ETCDSnapshotFiles that should have an entry have none");
}

#[test]
fn a_count_that_covers_the_snapshots_shows_nothing_missing_and_says_what_it_cannot() {
    let dir = tempfile::tempdir().unwrap();
    let cm = table(
        dir.path(),
        "cm.txt",
        "$ kubectl get configmap -A\nNAMESPACE     NAME                 DATA   AGE\nkube-system   k3s-etcd-snapshots   30     41d\n",
    );
    let out = run(&["check", "-o", "json"], &[&fixture(SNAPSHOTS), &cm]);
    let report: serde_json::Value = out.json();
    assert!(with_code(&report, "snapshot-missing-from-configmap").is_empty());
    assert!(
        findings(&report).iter().any(|f| message(f)
            .contains("the count shows none missing, but an orphaned entry can stand in")),
        "{}",
        report["findings"]
    );
}

#[test]
fn without_snapshots_the_count_cannot_be_judged() {
    for command in [
        &["snapshots", "diff", "-o", "json"][..],
        &["check", "-o", "json"],
    ] {
        let out = run(command, &[&fixture("pasted/configmaps-kube-system.txt")]);
        out.code(0);
        let report: serde_json::Value = out.json();
        assert!(
            findings(&report).iter().any(|f| message(f)
                .contains("without ETCDSnapshotFiles whether 8 entries is right cannot be judged")),
            "{command:?}: {}",
            report["findings"]
        );
        assert!(with_code(&report, "snapshot-missing-from-configmap").is_empty());
    }
}

#[test]
fn absent_from_a_listing_it_does_not_exist_but_a_get_of_another_name_says_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let listing = table(
        dir.path(),
        "listing.txt",
        "$ kubectl get cm -n kube-system\nNAME DATA AGE\ncoredns 2 41d\nkube-root-ca.crt 1 41d\n",
    );
    let report: serde_json::Value =
        run(&["check", "-o", "json"], &[&fixture(SNAPSHOTS), &listing]).json();
    let missing = with_code(&report, "snapshot-missing-from-configmap");
    assert!(
        missing.len() == 1
            && message(missing[0]).contains(
                "lists every ConfigMap in kube-system and not k3s-etcd-snapshots: it does not exist"
            ),
        "{missing:?}"
    );
    let named = table(
        dir.path(),
        "named.txt",
        "$ kubectl get configmap k3s-etcd-snapshot-extra-metadata -n kube-system\nNAME DATA AGE\nk3s-etcd-snapshot-extra-metadata 1 41d\n",
    );
    let report: serde_json::Value =
        run(&["check", "-o", "json"], &[&fixture(SNAPSHOTS), &named]).json();
    assert!(
        with_code(&report, "snapshot-missing-from-configmap").is_empty(),
        "{}",
        report["findings"]
    );
    assert!(
        findings(&report)
            .iter()
            .any(|f| message(f).contains("not k3s-etcd-snapshots: whether it exists is not shown")),
        "{}",
        report["findings"]
    );
}

#[test]
fn beside_the_configmap_object_the_table_is_not_used() {
    let out = run(
        &["check", "-o", "json"],
        &[
            &fixture("pasted/split-issue.txt"),
            &fixture("split-cluster/kube-system-configmaps.yaml"),
        ],
    );
    let report: serde_json::Value = out.json();
    let missing = with_code(&report, "snapshot-missing-from-configmap");
    assert!(
        missing.len() == 1
            && message(missing[0])
                .starts_with("16 snapshots that k3s lists should be in k3s-etcd-snapshots but"),
        "the object's 8 entries are judged by key: {missing:?}"
    );
}

#[test]
fn a_backfill_is_planned_from_a_known_empty_configmap_and_refused_from_a_count() {
    let out = run(
        &["snapshots", "backfill", "-o", "json"],
        &[&fixture("pasted/split-issue.txt")],
    );
    out.code(1);
    let plan: serde_json::Value = out.json();
    assert_eq!(plan["outcome"], "planned", "{plan}");
    let out = run(
        &["snapshots", "backfill"],
        &[
            &fixture(SNAPSHOTS),
            &fixture("pasted/configmaps-kube-system.txt"),
        ],
    );
    out.one_line_error()
        .stderr_has("shows only its entry count (8), not its entries")
        .stderr_has("kubectl -n kube-system get configmap k3s-etcd-snapshots -o yaml");
}

#[test]
fn hostile_tables_are_bounded_and_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let mut rows = String::from("$ kubectl get cm -n kube-system\nNAME DATA AGE\n");
    for i in 0..1_000_000 {
        rows.push_str(&format!("cm-{i} {i} 1d\n"));
    }
    rows.push_str("k3s-etcd-snapshots 3 1d\n");
    let many = table(dir.path(), "many.txt", &rows);
    let out = run(
        &["snapshots", "diff", "-o", "json"],
        &[&fixture(SNAPSHOTS), &many],
    );
    out.code(1).stderr_has("1000001 row(s)");
    let report: serde_json::Value = out.json();
    assert_eq!(report["entryCount"]["entries"], 3);
    // A count no ConfigMap can hold, and control characters: the row is not read, and a
    // listing with an unread row no longer shows what is absent.
    let hostile = table(
        dir.path(),
        "hostile.txt",
        "NAME DATA AGE\nextension-apiserver-authentication 6 1d\nk3s-etcd-snapshots 184467440737095516160 1d\n\u{1b}[2J\u{7} 1 1d\n",
    );
    let out = run(&["check", "-o", "json"], &[&fixture(SNAPSHOTS), &hostile]);
    out.stderr_has("1 row(s) not read");
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    let report: serde_json::Value = out.json();
    assert!(with_code(&report, "snapshot-missing-from-configmap").is_empty());
}

#[test]
fn a_header_less_configmap_fragment_is_refused_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let fragment = table(dir.path(), "fragment.txt", "k3s-etcd-snapshots   0   41d\n");
    run(&["check"], &[&fragment]).code(3).one_line_error();
}
