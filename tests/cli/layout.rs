//! Human output at a terminal's width: tables and findings fit, words stay whole, the first
//! line of a finding is one line; a pipe gets the 80-column layout without colour.

use crate::support::harness::{Run, k3sdoctor, repo_path};
use crate::support::objects::{
    NOW, agent, extra_metadata, lease, server, snapshot_configmap, snapshot_cr, write_dump,
};

const DUMP: &str = "tests/fixtures/split-cluster";

/// The default views the issue names, plus `snapshots list`, whose table must fit too.
const COMMANDS: [&[&str]; 4] = [
    &["leases"],
    &["snapshots", "diff"],
    &["snapshots", "list"],
    &["check"],
];

/// Runs `args` on the bundled dump on a pseudo-terminal (util-linux `script`) `columns` wide
/// and returns what the terminal showed, colour codes removed.
fn on_a_terminal(args: &[&str], columns: usize) -> String {
    let home = tempfile::tempdir().unwrap();
    let command = format!(
        "stty cols {columns} rows 50; {} --from-file {} {}",
        env!("CARGO_BIN_EXE_k3sdoctor"),
        repo_path(DUMP).display(),
        args.join(" ")
    );
    let mut child = std::process::Command::new("script")
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .env_clear()
        .env("HOME", home.path())
        .env("TERM", "xterm")
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("util-linux script");
    // stdin stays open until the command is done, so the terminal never sees an early EOF.
    let stdin = child.stdin.take().unwrap();
    let mut screen = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut screen).unwrap();
    let status = child.wait().unwrap();
    drop(stdin);
    assert_eq!(status.code(), Some(1), "{args:?}: {screen}");
    assert!(
        screen.contains("\x1b["),
        "a terminal gets colour by default: {screen}"
    );
    strip_ansi(&screen.replace("\r\n", "\n"))
}

fn strip_ansi(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            // CSI: ESC [ parameters final-byte
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn on_dump(args: &[&str]) -> Run {
    let dump = repo_path(DUMP).display().to_string();
    k3sdoctor([&["--from-file", dump.as_str()][..], args].concat())
}

fn words(text: &str) -> Vec<&str> {
    text.split_whitespace().collect()
}

/// Whether `args` print a table, whose rows alone go to stdout off a terminal;
/// `check` for one cluster prints a report and keeps it on stdout.
fn is_table(args: &[&str]) -> bool {
    args != ["check"]
}

/// The prose of a run on a pipe: stderr for a table command, stdout for `check`.
fn piped_prose<'a>(args: &[&str], out: &'a crate::support::harness::Output) -> &'a str {
    if is_table(args) {
        &out.stderr
    } else {
        &out.stdout
    }
}

/// `snapshots list` rows: k3s's snapshot names and node names are words that cannot wrap, so
/// with its NODE column the table stays wider than 80 columns, as a table
/// whose words cannot fit does (docs/output.md).
fn is_unwrappable_row(args: &[&str], line: &str) -> bool {
    args == ["snapshots", "list"] && line.trim_start().contains("   ")
}

fn sorted_words(text: &str) -> Vec<&str> {
    let mut words = words(text);
    words.sort_unstable();
    words
}

#[track_caller]
fn assert_fits(text: &str, columns: usize, what: &str) {
    for line in text.lines() {
        assert!(
            line.chars().count() <= columns,
            "{what}: a line exceeds {columns} columns:\n{line}\n---\n{text}"
        );
    }
}

/// Every (code, object) pair of a report's findings, children included.
fn findings(json: &serde_json::Value, into: &mut Vec<(String, String)>) {
    match json {
        serde_json::Value::Object(map) => {
            if let (Some(code), Some(object)) = (map.get("code"), map.get("object")) {
                into.push((
                    code.as_str().unwrap().to_string(),
                    object.as_str().unwrap().to_string(),
                ));
            }
            map.values().for_each(|v| findings(v, into));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| findings(v, into)),
        _ => {}
    }
}

#[test]
fn on_a_terminal_output_fits_its_width_without_splitting_words() {
    for args in COMMANDS {
        // So wide that nothing wraps: the words every narrower rendering must keep whole.
        let unwrapped = on_a_terminal(args, 1000);
        let json: serde_json::Value = on_dump(args).arg("-o").arg("json").run().json();
        let mut expected = Vec::new();
        findings(&json, &mut expected);
        assert!(!expected.is_empty(), "{args:?}");
        for columns in [80, 120] {
            let screen = on_a_terminal(args, columns);
            let what = format!("{args:?} at {columns} columns");
            let fitting: String = screen
                .lines()
                .filter(|l| !is_unwrappable_row(args, l))
                .map(|l| format!("{l}\n"))
                .collect();
            assert_fits(&fitting, columns, &what);
            assert_eq!(
                words(&screen),
                words(&unwrapped),
                "{what}: words differ\n{screen}"
            );
            for (code, object) in &expected {
                let first_line = format!("{code}  {}", object.replacen(" kube-system/", " ", 1));
                assert!(
                    screen.lines().any(|l| l.contains(&first_line)),
                    "{what}: the finding's first line is split: {first_line}\n{screen}"
                );
            }
        }
    }
}

#[test]
fn a_pipe_gets_the_80_column_layout_without_colour() {
    for args in COMMANDS {
        let out = on_dump(args).run();
        out.code(1);
        assert!(!out.stdout.contains('\x1b'), "{args:?}: {}", out.stdout);
        assert!(!out.stderr.contains('\x1b'), "{args:?}: {}", out.stderr);
        assert_fits(piped_prose(args, &out), 80, &format!("{args:?} piped"));
        let terminal = on_a_terminal(args, 80);
        if is_table(args) {
            // The same words as an 80-column terminal, the rows on stdout and the rest on
            // stderr; each row one line.
            let both = format!("{}{}", out.stdout, out.stderr);
            assert_eq!(sorted_words(&both), sorted_words(&terminal), "{args:?}");
        } else {
            // Identical to an 80-column terminal, colour aside.
            assert_eq!(out.stdout, terminal, "{args:?}");
        }
    }
}

#[test]
fn the_default_lease_table_gives_the_node_its_own_column() {
    let out = on_dump(&["leases"]).run();
    let header = out.stdout.lines().find(|l| l.starts_with("LOCK")).unwrap();
    assert_eq!(
        words(header),
        ["LOCK", "HOLDER", "NODE", "STATE", "RENEWED", "STATUS"]
    );
    let wide = on_dump(&["leases", "-o", "wide"]).run();
    let header = wide.stdout.lines().find(|l| l.starts_with("LOCK")).unwrap();
    assert!(
        header.contains("NODE   ") && header.contains("ROLES") && header.contains("MATCHED BY"),
        "{header}"
    );
}

#[test]
fn a_five_server_cluster_fits_80_columns_too() {
    let servers = (1..=5).map(|i| format!("prod-k3s-{i}")).collect::<Vec<_>>();
    let mut objects: Vec<_> = servers.iter().map(|s| server(s, "v1.29.4+k3s1")).collect();
    objects.push(agent("prod-k3s-worker-1", "v1.29.4+k3s1"));
    objects.push(lease("k3s", "prod-k3s-1", 1));
    objects.push(lease("k3s-etcd", "prod-k3s-4", 1));
    objects.push(extra_metadata("k3s"));
    objects.push(snapshot_configmap("k3s", &[]));
    for (i, s) in servers.iter().enumerate() {
        for day in 0..4 {
            objects.push(snapshot_cr(
                s,
                1_716_811_200 + day * 43_200 + i as i64,
                true,
            ));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("five-servers.yaml");
    write_dump(&dump, &objects);
    for args in COMMANDS {
        let out = k3sdoctor(
            [
                &["--from-file", dump.to_str().unwrap(), "--now", NOW][..],
                args,
            ]
            .concat(),
        )
        .run();
        out.code(1);
        assert_fits(
            piped_prose(args, &out),
            80,
            &format!("{args:?} on five servers"),
        );
    }
}

#[test]
fn repair_plans_fit_80_columns_too() {
    for args in [
        &["leases", "follow"][..],
        &["snapshots", "backfill", "--prune"],
    ] {
        let out = on_dump(args).run();
        assert!(out.stdout.starts_with("Plan: "), "{args:?}: {}", out.stdout);
        assert_fits(&out.stdout, 80, &format!("{args:?} piped"));
    }
}

#[test]
fn leases_and_check_name_etcd_members_in_the_same_words() {
    for args in [&["leases"][..], &["check"]] {
        let out = on_dump(args).run();
        assert!(
            piped_prose(args, &out).contains("3 servers (3 etcd members), 1 agent;"),
            "{args:?}: {}",
            out.stdout
        );
    }
}

#[test]
fn check_names_the_same_snapshot_files_once() {
    let out = on_dump(&["check"]).run();
    out.code(1);
    // snapshot-missing-from-configmap and snapshot-controller-idle are about the same 15 CRs.
    assert_eq!(
        out.stdout
            .matches("local-etcd-snapshot-prod-k3s-1-1716984000-48513c")
            .count(),
        1,
        "{}",
        out.stdout
    );
    let flat = words(&out.stdout).join(" ");
    assert!(
        flat.contains("the same 15 as snapshot-missing-from-configmap above"),
        "{}",
        out.stdout
    );
    // JSON keeps every name in every finding.
    let json: serde_json::Value = on_dump(&["check"]).arg("-o").arg("json").run().json();
    let mentions = json
        .to_string()
        .matches("local-etcd-snapshot-prod-k3s-1-1716984000-48513c")
        .count();
    assert!(mentions >= 2, "{json}");
}
