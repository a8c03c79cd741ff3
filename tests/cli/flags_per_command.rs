//! Each command lists only the global flags it takes, and a flag it does not take is a usage
//! error (exit 2, one line) before or after the subcommand; kubectl's flags still go on
//! either side of the subcommand where they are taken.

use crate::support::fake_api::Role;
use crate::support::harness::{k3sdoctor, repo_path};
use crate::support::objects::fresh_cluster;

/// (command, a flag it refuses with a value it would take, the flag as `--help` lists it)
const REFUSED: [(&[&str], &[&str], &str); 12] = [
    (&["serve"], &["--from-file", "x.yaml"], "--from-file"),
    (&["serve"], &["--now", "2024-05-31T12:00:00Z"], "--now"),
    (&["serve"], &["-o", "table"], "--output"),
    (&["serve"], &["--no-headers"], "--no-headers"),
    (
        &["completions", "bash"],
        &["--kubeconfig", "x"],
        "--kubeconfig",
    ),
    (&["completions", "bash"], &["-o", "table"], "--output"),
    (&["man"], &["--context", "x"], "--context"),
    (&["man"], &["--from-file", "x"], "--from-file"),
    (&["rbac"], &["--distro", "k3s"], "--distro"),
    (&["rbac"], &["--no-headers"], "--no-headers"),
    (&["rbac"], &["--request-timeout", "1s"], "--request-timeout"),
    (
        &["completions", "fish"],
        &["--now", "2024-05-31T12:00:00Z"],
        "--now",
    ),
];

#[test]
fn a_flag_a_command_does_not_take_is_absent_from_its_help_and_a_usage_error() {
    for (command, flag, listed) in REFUSED {
        let help = k3sdoctor(command.iter().chain(&["--help"])).run();
        help.code(0);
        assert!(
            !help.stdout.contains(&format!("{listed} "))
                && !help.stdout.contains(&format!("{listed}\n")),
            "{command:?} --help lists {listed}:\n{}",
            help.stdout
        );
        let before = [flag, command].concat();
        let after = [command, flag].concat();
        for line in [before, after] {
            let out = k3sdoctor(&line).run();
            out.code(2)
                .one_line_error()
                .stderr_has("unexpected argument");
            assert!(out.stdout.is_empty(), "{line:?}: {}", out.stdout);
        }
    }
}

#[test]
fn output_offers_and_takes_only_the_formats_the_command_prints() {
    for (command, formats) in [
        (&["check"][..], "table, wide, json, yaml, jsonl"),
        (&["leases"][..], "table, wide, json, yaml, jsonl"),
        (&["leases", "follow"][..], "table, wide, json, yaml"),
        (&["snapshots", "list"][..], "table, wide, json, yaml"),
        (&["snapshots", "diff"][..], "table, json, yaml"),
        (&["snapshots", "backfill"][..], "table, json, yaml"),
        (
            &["snapshots", "restore", "--from-backup", "x"][..],
            "table, json, yaml",
        ),
    ] {
        let help = k3sdoctor(command.iter().chain(&["--help"])).run();
        help.code(0);
        assert_eq!(listed_formats(&help.stdout), formats, "{command:?}");
        let out = k3sdoctor(command.iter().chain(&["-o", "bogus"])).run();
        out.code(2)
            .one_line_error()
            .stderr_has(&format!("possible values: {formats}"));
    }
    // What a command used to refuse when run is now refused by the parser, on either side.
    for (command, format) in [
        (&["snapshots", "diff"][..], "wide"),
        (&["snapshots", "backfill"][..], "wide"),
        (&["snapshots", "restore", "--from-backup", "x"][..], "wide"),
        (&["snapshots", "list"][..], "jsonl"),
        (&["leases", "follow"][..], "jsonl"),
    ] {
        for line in [
            [&["-o", format][..], command].concat(),
            [command, &["-o", format][..]].concat(),
        ] {
            let out = k3sdoctor(&line).run();
            out.code(2)
                .one_line_error()
                .stderr_has(&format!("invalid value '{format}'"));
            assert!(out.stdout.is_empty(), "{line:?}");
        }
    }
    // A format the command does not print, given before the subcommand.
    let dump = repo_path("tests/fixtures/split-cluster");
    let out = k3sdoctor([
        "--from-file",
        dump.to_str().unwrap(),
        "-o",
        "jsonl",
        "snapshots",
        "diff",
    ])
    .run();
    out.code(2)
        .one_line_error()
        .stderr_has("invalid value 'jsonl'")
        .stderr_has("possible values: table, json, yaml");
}

#[test]
fn kubectl_flags_work_before_and_after_the_subcommand() {
    let fake = fresh_cluster(&["server-1", "server-2"]);
    let before = k3sdoctor(["--context", "fake", "leases", "-o", "json"])
        .cluster(&fake, Role::Admin)
        .run();
    before.code(0);
    let after = k3sdoctor(["leases", "--context", "fake", "-o", "json"])
        .cluster(&fake, Role::Admin)
        .run();
    after.code(0);
    let holder = |out: &str| {
        let report: serde_json::Value = serde_json::from_str(out).unwrap();
        report.to_string().contains("server-1")
    };
    assert!(holder(&before.stdout) && holder(&after.stdout));
    // A context the kubeconfig lacks is looked up, not ignored, in both places.
    for line in [
        &["--context", "nope", "leases"][..],
        &["leases", "--context", "nope"][..],
    ] {
        k3sdoctor(line)
            .cluster(&fake, Role::Admin)
            .run()
            .code(3)
            .stderr_has("nope");
    }
}

/// The `-o` values a long `--help` lists, comma-separated: `[possible values: …]`, or one
/// per line (`- table`, `- jsonl: One JSON …`) when one of them has a description.
fn listed_formats(help: &str) -> String {
    let section = help
        .split("-o, --output <OUTPUT>")
        .nth(1)
        .unwrap_or_default();
    if let Some(inline) = section
        .split("\n\n")
        .next()
        .and_then(|s| s.split("[possible values: ").nth(1))
    {
        return inline.split(']').next().unwrap_or_default().to_string();
    }
    let section = section.split("[default:").next().unwrap_or_default();
    section
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(|v| v.split(':').next().unwrap_or(v))
        .collect::<Vec<_>>()
        .join(", ")
}
