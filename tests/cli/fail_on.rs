//! `--fail-on` wherever findings are counted, and `-o wide` only where it adds columns: the
//! exit code agrees with what the report says.

use crate::support::harness::{k3sdoctor, repo_path};

fn on_dump(args: &[&str]) -> crate::support::harness::Run {
    k3sdoctor(
        [
            "--from-file",
            repo_path("tests/fixtures/split-cluster").to_str().unwrap(),
        ]
        .into_iter()
        .chain(args.iter().copied()),
    )
}

#[test]
fn snapshots_list_fails_on_the_errors_it_counts() {
    on_dump(&["snapshots", "list"])
        .run()
        .code(1)
        .stderr_has("2 errors, 2 warnings\n");
    on_dump(&["snapshots", "list", "--fail-on", "warning"])
        .run()
        .code(1);
    on_dump(&["snapshots", "list", "-o", "json"]).run().code(1);
}

#[test]
fn fail_on_never_is_accepted_everywhere_and_says_the_count_does_not_matter() {
    for args in [
        &["snapshots", "list", "--fail-on", "never"][..],
        &["snapshots", "diff", "--fail-on", "never"][..],
        &["leases", "--fail-on", "never"][..],
        &["check", "--fail-on", "never"][..],
    ] {
        let out = on_dump(args).run();
        out.code(0);
        // A table command's verdict line is on stderr off a terminal; check's report is not
        // a table and stays on stdout.
        let verdict = if args[0] == "check" {
            &out.stdout
        } else {
            &out.stderr
        };
        assert!(
            verdict.contains("; not counted in the exit code (--fail-on never)\n"),
            "{args:?}: {verdict}"
        );
    }
}

#[test]
fn snapshots_diff_keeps_exiting_1_on_differences_and_takes_a_threshold() {
    on_dump(&["snapshots", "diff"]).run().code(1);
    on_dump(&["snapshots", "diff", "--fail-on", "error"])
        .run()
        .code(1);
    let out = on_dump(&["snapshots", "diff", "--fail-on", "bogus"]).run();
    out.code(2);
}

#[test]
fn wide_is_refused_where_it_would_add_nothing() {
    // Where it depends on other flags (one cluster, `follow` without `--fix`): refused at run time.
    for args in [&["check"][..], &["leases", "follow"][..]] {
        let out = on_dump(&[&["-o", "wide"][..], args].concat()).run();
        out.code(2)
            .one_line_error()
            .stderr_has("has no wide columns");
        assert!(out.stdout.is_empty(), "{args:?}: {}", out.stdout);
    }
    // Where the command never prints it: a usage error, before or after the subcommand.
    for args in [&["snapshots", "diff"][..], &["snapshots", "backfill"][..]] {
        for line in [
            [&["-o", "wide"][..], args].concat(),
            [args, &["-o", "wide"][..]].concat(),
        ] {
            let out = on_dump(&line).run();
            out.code(2)
                .one_line_error()
                .stderr_has("invalid value 'wide'")
                .stderr_has("possible values: table, json, yaml");
            assert!(out.stdout.is_empty(), "{line:?}: {}", out.stdout);
        }
    }
    for args in [&["completions", "bash"][..], &["man"][..]] {
        k3sdoctor([&["-o", "wide"][..], args].concat())
            .run()
            .code(2)
            .one_line_error()
            .stderr_has("unexpected argument '--output'");
    }
}

#[test]
fn wide_adds_columns_where_it_is_accepted() {
    for (args, column) in [
        (&["leases"][..], "MATCHED BY"),
        (&["snapshots", "list"][..], "KEY"),
    ] {
        let narrow = on_dump(args).run();
        assert!(!narrow.stdout.contains(column), "{args:?}");
        on_dump(&[args, &["-o", "wide"][..]].concat())
            .run()
            .code(1)
            .stdout_has(column);
    }
}
