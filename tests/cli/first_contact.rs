//! Kubectl's output habits (rows alone on stdout off a
//! terminal, one-token ages), `snapshots` listing by default with NODE, the hints and notes a
//! newcomer missed, and `version`.

use crate::support::fleet::{FleetContext, write_fleet_kubeconfig};
use crate::support::harness::{k3sdoctor, repo_path};

const DUMP: &str = "tests/fixtures/split-cluster";

fn on_dump(args: &[&str]) -> crate::support::harness::Output {
    let dump = repo_path(DUMP).display().to_string();
    k3sdoctor([&["--from-file", dump.as_str()][..], args].concat()).run()
}

/// Item 5: `leases | cat` and `leases --no-headers`: stdout has the rows (and the header
/// without --no-headers), nothing else; the summary, findings and verdict are on stderr; the
/// exit code is the verdict's.
#[test]
fn off_a_terminal_stdout_carries_only_the_rows() {
    let piped = on_dump(&["leases"]);
    piped.code(1);
    assert_eq!(
        piped
            .stdout
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect::<Vec<Vec<&str>>>(),
        [
            vec!["LOCK", "HOLDER", "NODE", "STATE", "RENEWED", "STATUS"],
            vec!["k3s", "prod-k3s-1", "prod-k3s-1", "held", "1s", "Ready"],
            vec![
                "k3s-etcd",
                "prod-k3s-2",
                "prod-k3s-2",
                "held",
                "0s",
                "Ready"
            ],
        ],
        "{}",
        piped.stdout
    );
    piped
        .stderr_has("K3s cluster: 3 servers")
        .stderr_has("ERROR   lease-split")
        .stderr_has("1 error, 0 warnings");
    let bare = on_dump(&["leases", "--no-headers"]);
    bare.code(1);
    assert_eq!(bare.stdout.lines().count(), 2, "{}", bare.stdout);
    assert!(bare.stdout.starts_with("k3s "), "{}", bare.stdout);
    bare.stderr_has("ERROR   lease-split");

    for args in [&["snapshots", "list"][..], &["snapshots", "diff"]] {
        let out = on_dump(args);
        out.code(1);
        assert!(!out.stdout.contains("ERROR"), "{args:?}: {}", out.stdout);
        assert!(
            !out.stdout.contains("ConfigMap kube-system/"),
            "{args:?}: {}",
            out.stdout
        );
        assert!(
            !out.stdout.lines().any(str::is_empty),
            "{args:?}: {}",
            out.stdout
        );
        out.stderr_has("snapshot-missing-from-configmap")
            .stderr_has("ConfigMap kube-system/k3s-etcd-snapshots: 8 entries");
    }
    // JSON is unchanged: the whole document on stdout, nothing on stderr.
    let json = on_dump(&["leases", "-o", "json"]);
    json.code(1);
    assert!(json.stderr.is_empty(), "{}", json.stderr);
}

/// Item 6: bare `snapshots` lists (with list's own flags), `ls` is `list`, NODE by default.
#[test]
fn snapshots_alone_lists_with_a_node_column() {
    let list = on_dump(&["snapshots", "list"]);
    list.code(1);
    let header: Vec<&str> = list
        .stdout
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        ["FILE", "NODE", "STATE", "AGE", "SIZE", "CONFIGMAP"]
    );
    assert!(
        list.stdout
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()[..3]
                == ["etcd-snapshot-prod-k3s-2-1717156801", "prod-k3s-2", "ready"]),
        "{}",
        list.stdout
    );
    for alias in [&["snapshots"][..], &["snapshots", "ls"]] {
        let out = on_dump(alias);
        out.code(1);
        assert_eq!(out.stdout, list.stdout, "{alias:?}");
    }
    let one_node = on_dump(&["snapshots", "ls", "--node", "prod-k3s-3", "--no-headers"]);
    assert!(
        one_node
            .stdout
            .lines()
            .all(|l| l.split_whitespace().nth(1) == Some("prod-k3s-3")),
        "{}",
        one_node.stdout
    );
    // A subcommand still takes over.
    on_dump(&["snapshots", "diff"])
        .code(1)
        .stdout_has("missing  local-");
}

/// Item 7: a glob where --context takes a name points to --contexts REGEX.
#[test]
fn a_glob_context_points_to_contexts() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = write_fleet_kubeconfig(
        dir.path(),
        "fleet.yaml",
        &[
            FleetContext {
                name: "viewer-eu",
                server: "https://127.0.0.1:1",
                token: "t",
                ca_pem: None,
            },
            FleetContext {
                name: "viewer-us",
                server: "https://127.0.0.1:1",
                token: "t",
                ca_pem: None,
            },
        ],
    );
    for args in [
        &["--context", "viewer*", "leases"][..],
        &["--context", "viewer*", "--context", "viewer-eu", "check"],
    ] {
        let out = k3sdoctor(args).kubeconfig(&kubeconfig).run();
        out.code(3).one_line_error().stderr_has(
            "--context takes one exact name; to read every context that matches a pattern, use \
             --contexts '^viewer' (a regular expression; it would read viewer-eu, viewer-us)",
        );
    }
}

/// Item 7: the top-level help no longer claims what serve --heal on contradicts.
#[test]
fn the_help_says_when_something_is_written() {
    let help = k3sdoctor(["--help"]).run();
    help.code(0);
    let text = help.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        !text.contains("Nothing is ever written without --fix"),
        "{text}"
    );
    assert!(
        text.contains("Nothing is written without --fix, except by `serve --heal on`"),
        "{text}"
    );
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Version {
    api_version: String,
    kind: String,
    version: String,
    git_commit: String,
    git_tree_state: String,
    build_date: String,
    build_date_source: String,
    rustc_version: String,
    target: String,
    features: Vec<String>,
}

/// Item 14: `version`, `--version -v` and `version -o json` say what the binary was built
/// from; the date is never the build's clock.
#[test]
fn version_names_commit_date_rustc_target_and_features() {
    let json = k3sdoctor(["version", "-o", "json"]).run();
    json.code(0);
    let v: Version = json.json();
    assert_eq!(
        (v.api_version.as_str(), v.kind.as_str()),
        ("k3sdoctor.io/v1", "Version")
    );
    assert_eq!(v.version, env!("CARGO_PKG_VERSION"));
    assert!(v.rustc_version.starts_with("rustc "), "{}", v.rustc_version);
    assert!(v.target.contains('-'), "{}", v.target);
    assert!(v.features.iter().all(|f| !f.is_empty()));
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(repo_path("."))
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "HEAD"]) {
        // Built from this checkout: its commit (a later commit rebuilds through build.rs).
        Some(head) => {
            assert_eq!(v.git_commit, head);
            assert!(["clean", "dirty"].contains(&v.git_tree_state.as_str()));
        }
        None => assert_eq!(
            (v.git_commit.as_str(), v.git_tree_state.as_str()),
            ("unknown", "unknown")
        ),
    }
    // Reproducible: SOURCE_DATE_EPOCH or the commit's own time, never the clock.
    match v.build_date_source.as_str() {
        "commit time" => {
            let epoch: i64 = git(&["log", "-1", "--format=%ct"])
                .unwrap()
                .parse()
                .unwrap();
            let expected = jiff::Timestamp::from_second(epoch).unwrap();
            assert_eq!(
                v.build_date,
                expected.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
            );
        }
        "SOURCE_DATE_EPOCH" => assert!(v.build_date.ends_with('Z'), "{}", v.build_date),
        other => assert_eq!((other, v.build_date.as_str()), ("unknown", "unknown")),
    }

    let table = k3sdoctor(["version"]).run();
    table.code(0);
    let long = k3sdoctor(["--version", "-v"]).run();
    long.code(0);
    assert_eq!(long.stdout, table.stdout);
    for label in ["commit:", "build date:", "rustc:", "target:", "features:"] {
        table.stdout_has(label);
    }
    table.stdout_has(&v.git_commit).stdout_has(&v.rustc_version);
    let short = k3sdoctor(["--version"]).run();
    short.code(0);
    assert_eq!(
        short.stdout,
        format!("k3sdoctor {}\n", env!("CARGO_PKG_VERSION"))
    );
}
