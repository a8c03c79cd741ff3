//! Unit tests of the completion walk.

use super::*;

fn values_for(words: &[&str]) -> (Vec<String>, u8) {
    let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
    let c = complete(&crate::cli::command(), &words);
    (
        c.candidates.into_iter().map(|(v, _)| v).collect(),
        c.directive,
    )
}

#[test]
fn subcommands_at_each_level() {
    let (top, directive) = values_for(&[""]);
    for sub in ["leases", "check", "snapshots", "completions", "man"] {
        assert!(top.contains(&sub.to_string()), "{top:?}");
    }
    assert_eq!(directive, DIRECTIVE_NO_FILES);
    assert_eq!(values_for(&["sn"]).0, ["snapshots"]);
    assert_eq!(values_for(&["snapshots", "d"]).0, ["diff"]);
    assert_eq!(values_for(&["leases", "f"]).0, ["follow"]);
}

#[test]
fn flags_values_and_globals_after_the_subcommand() {
    assert_eq!(
        values_for(&["check", "--fail-on", ""]).0,
        ["error", "warning", "never"]
    );
    assert_eq!(
        values_for(&["check", "--fail-on=w"]).0,
        ["--fail-on=warning"]
    );
    assert_eq!(values_for(&["snapshots", "list", "-o", "w"]).0, ["wide"]);
    assert_eq!(values_for(&["-o", "json", "le"]).0, ["leases"]);
    assert!(
        values_for(&["snapshots", "diff", "--"])
            .0
            .contains(&"--fail-on".to_string())
    );
    assert_eq!(
        values_for(&["leases", "follow", "--no-"]).0,
        ["--no-wait", "--no-headers"]
    );
    assert_eq!(
        values_for(&["completions", ""]).0,
        ["bash", "elvish", "fish", "powershell", "zsh"]
    );
}

#[test]
fn paths_are_left_to_the_shell() {
    assert_eq!(values_for(&["--kubeconfig", ""]), (vec![], DIRECTIVE_FILES));
    assert_eq!(
        values_for(&["check", "--from-file", "x"]),
        (vec![], DIRECTIVE_FILES)
    );
    assert_eq!(values_for(&["--context", ""]), (vec![], DIRECTIVE_NO_FILES));
}

/// Answers from a table, and remembers what it was asked with.
struct Recorded(std::cell::RefCell<Vec<(Dynamic, TypedFlags)>>);

impl ClusterValues for Recorded {
    fn values(&self, kind: Dynamic, typed: &TypedFlags) -> Vec<(String, String)> {
        self.0.borrow_mut().push((kind, typed.clone()));
        let names: &[&str] = match kind {
            Dynamic::Contexts => &["prod", "prod-eu", "lab"],
            Dynamic::ServerNodes => &["ip-10-0-0-11", "server-1"],
            Dynamic::LockNames => &["k3s", "k3s-etcd"],
        };
        names
            .iter()
            .map(|n| (n.to_string(), String::new()))
            .collect()
    }
}

fn dynamic(words: &[&str]) -> (Vec<String>, Vec<(Dynamic, TypedFlags)>) {
    let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
    let cluster = Recorded(Default::default());
    let c = complete_with(&crate::cli::command(), &words, &cluster);
    assert_eq!(c.directive, DIRECTIVE_NO_FILES);
    let values = c.candidates.into_iter().map(|(v, _)| v).collect();
    (values, cluster.0.into_inner())
}

#[test]
fn contexts_nodes_and_locks_come_from_the_cluster_with_the_flags_typed_before() {
    let (values, asked) = dynamic(&["--kubeconfig", "/k", "leases", "--context", "pr"]);
    assert_eq!(values, ["prod", "prod-eu"]);
    assert_eq!(asked[0].0, Dynamic::Contexts);
    assert_eq!(asked[0].1.last("kubeconfig"), Some("/k"));

    let (values, asked) = dynamic(&[
        "--context=prod",
        "leases",
        "follow",
        "-n",
        "kube-system",
        "--distro",
        "k3s",
        "--to",
        "",
    ]);
    assert_eq!(values, ["ip-10-0-0-11", "server-1"]);
    let typed = &asked[0].1;
    assert_eq!(asked[0].0, Dynamic::ServerNodes);
    assert_eq!(typed.last("context"), Some("prod"));
    assert_eq!(typed.last("distro"), Some("k3s"));
    assert_eq!(typed.last("namespace"), Some("kube-system"));

    assert_eq!(
        dynamic(&["leases", "follow", "--lease=k3s-"]).0,
        ["--lease=k3s-etcd"]
    );
    let (_, asked) = dynamic(&[
        "--insecure-skip-tls-verify",
        "--context",
        "a",
        "--context",
        "",
    ]);
    assert!(asked[0].1.has("insecure_skip_tls_verify"));
    assert_eq!(asked[0].1.all("context"), ["a"]);
    // Not asked where the cluster has nothing to say.
    assert!(dynamic(&["check", "--fail-on", ""]).1.is_empty());
}

#[test]
fn check_offers_only_the_formats_it_prints() {
    assert_eq!(
        values_for(&["check", "-o", ""]).0,
        ["table", "wide", "json", "yaml", "jsonl"]
    );
    assert_eq!(
        values_for(&["snapshots", "diff", "-o", ""]).0,
        ["table", "json", "yaml"]
    );
    assert_eq!(
        values_for(&["leases", "follow", "--output=j"]).0,
        ["--output=json"]
    );
    // serve takes no -o, and does not offer it.
    assert!(
        !values_for(&["serve", "--"])
            .0
            .contains(&"--output".to_string())
    );
    assert!(
        !values_for(&["serve", "--"])
            .0
            .contains(&"--from-file".to_string())
    );
}

#[test]
fn the_wire_format_is_cobras() {
    let c = Completion {
        candidates: vec![
            ("check".into(), "Every check".into()),
            ("man".into(), String::new()),
        ],
        directive: 4,
    };
    assert_eq!(c.to_protocol(), "check\tEvery check\nman\n:4\n");
}
