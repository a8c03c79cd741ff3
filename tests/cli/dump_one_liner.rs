//! docs/dumps.md's copy-paste command captures what every check reads from a dump, the opt-in
//! Secrets aside: each kind a "not in dump" note of `check` asks for is one the command gets.

use serde_json::Value;

use crate::support::harness::{k3sdoctor, repo_path};

/// The `kubectl get` kinds of the one-liner, each as `namespace/kind` (`/kind` unnamespaced,
/// `*/kind` from every namespace).
fn one_liner_kinds() -> Vec<String> {
    let docs = std::fs::read_to_string(repo_path("docs/dumps.md")).unwrap();
    let line = docs
        .lines()
        .find(|l| l.starts_with("{ kubectl get ") && l.ends_with("> k3s-dump.yaml"))
        .expect("docs/dumps.md's one-liner");
    let mut kinds = Vec::new();
    for command in line.split(';').filter(|c| c.contains("kubectl")) {
        let words: Vec<&str> = command.split_whitespace().collect();
        // `-A`: every namespace, `*`.
        let ns = match words.iter().position(|w| *w == "-n") {
            Some(i) => words[i + 1],
            None if words.contains(&"-A") => "*",
            None => "",
        };
        let at = words.iter().position(|w| *w == "get").unwrap();
        for kind in words[at + 1].split(',') {
            kinds.push(format!("{ns}/{kind}"));
        }
    }
    kinds
}

#[test]
fn the_one_liner_gets_every_kind_checks_ask_a_dump_for() {
    let kinds = one_liner_kinds();
    // What the notes of checks that did not run on a dump of Nodes, Leases, ConfigMaps and
    // snapshots ask to add, with packaged-charts' HelmCharts and Jobs (its note names none).
    let report: Value = k3sdoctor([
        "--from-file",
        repo_path("tests/fixtures/split-cluster").to_str().unwrap(),
        "check",
        "-o",
        "json",
    ])
    .run()
    .json();
    let mut asked = vec![
        "kube-system/helmcharts.helm.cattle.io".to_string(),
        "kube-system/jobs".to_string(),
    ];
    for check in report["checks"].as_array().unwrap() {
        let Some(note) = check["note"].as_str() else {
            continue;
        };
        let Some(add) = note
            .split("(add `")
            .nth(1)
            .and_then(|r| r.split('`').next())
        else {
            continue;
        };
        let words: Vec<&str> = add.split_whitespace().collect();
        // Neither `-n` nor `-A`: cluster-scoped kinds (the webhook configurations).
        let ns = match words.iter().position(|w| *w == "-n") {
            Some(i) => words[i + 1],
            None if words.contains(&"-A") => "default",
            None => "",
        };
        let at = words.iter().position(|w| *w == "get").unwrap();
        for kind in words[at + 1].split(',') {
            // Events: k3s records those of Nodes in default, all the checks read.
            asked.push(format!("{ns}/{kind}"));
        }
    }
    asked.retain(|k| k != "kube-system/secrets");
    assert!(asked.len() >= 4, "{asked:?}");
    for kind in asked {
        let everywhere = format!("*/{}", kind.split_once('/').map_or("", |(_, k)| k));
        assert!(
            kinds.contains(&kind) || kinds.contains(&everywhere),
            "docs/dumps.md's one-liner does not get {kind}: {kinds:?}"
        );
    }
}
