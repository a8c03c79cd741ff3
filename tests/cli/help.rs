//! `--help`: a subcommand's own options first, the global ones under their own heading; no
//! cluster flags where they mean nothing; examples under the top-level help too.

use crate::support::harness::k3sdoctor;

/// (subcommand, one of its own flags)
const OWN_FLAGS: [(&[&str], &str); 6] = [
    (&["leases"], "--fail-on"),
    (&["leases", "follow"], "--to <NODE|HOSTNAME>"),
    (&["check"], "--fail-on"),
    (&["snapshots", "list"], "--fail-on"),
    (&["snapshots", "diff"], "--fail-on"),
    (&["snapshots", "backfill"], "--backup <FILE>"),
];

#[test]
fn a_subcommands_own_options_come_before_the_global_ones() {
    for (args, own) in OWN_FLAGS {
        let out = k3sdoctor(args.iter().chain(&["--help"])).run();
        out.code(0);
        let help = &out.stdout;
        let at = |needle: &str| {
            help.find(needle)
                .unwrap_or_else(|| panic!("{args:?} --help lacks {needle:?}:\n{help}"))
        };
        assert!(at("Options:") < at(own), "{args:?}:\n{help}");
        assert!(at(own) < at("Output options:"), "{args:?}:\n{help}");
        assert!(
            at("Output options:") < at("--output <OUTPUT>"),
            "{args:?}:\n{help}"
        );
        // The global options are shown once, by `k3sdoctor options`.
        for global in [
            "Global options:",
            "--kubeconfig <FILE>",
            "--from-file <PATH>",
            "--request-timeout <DURATION>",
        ] {
            assert!(
                !help.contains(global),
                "{args:?} --help repeats {global}:\n{help}"
            );
        }
        assert!(
            help.trim_end().ends_with(
                "Use `k3sdoctor options` for the global options (they apply to every command that reads a cluster or\nprints a report)."
            ) || help.split_whitespace().collect::<Vec<_>>().join(" ").ends_with(
                "Use `k3sdoctor options` for the global options (they apply to every command that reads a cluster or prints a report)."
            ),
            "{args:?}:\n{help}"
        );
        let short = k3sdoctor(args.iter().chain(&["-h"])).run();
        assert!(!short.stdout.contains("--kubeconfig"), "{}", short.stdout);
        assert!(
            short.stdout.contains("k3sdoctor options"),
            "{}",
            short.stdout
        );
    }
    let options = k3sdoctor(["options"]).run();
    options.code(0);
    for flag in [
        "--kubeconfig <FILE>",
        "--from-file <PATH>",
        "--context <NAME>",
        "--color",
    ] {
        assert_eq!(
            options.stdout.matches(flag).count(),
            1,
            "{flag}:\n{}",
            options.stdout
        );
    }
}

#[test]
fn completions_and_man_do_not_offer_cluster_flags() {
    for args in [&["completions"][..], &["man"][..]] {
        let out = k3sdoctor(args.iter().chain(&["--help"])).run();
        out.code(0);
        for flag in [
            "--kubeconfig",
            "--context",
            "--from-file",
            "--output",
            "--distro",
        ] {
            assert!(
                !out.stdout.contains(flag),
                "{args:?} offers {flag}:\n{}",
                out.stdout
            );
        }
    }
    // Refused on either side: they read no cluster (tests/cli/flags_per_command.rs).
    k3sdoctor(["--kubeconfig", "/nonexistent", "completions", "bash"])
        .run()
        .code(2);
}

#[test]
fn the_top_level_help_ends_with_examples_and_exit_codes() {
    let out = k3sdoctor(["--help"]).run();
    out.code(0);
    let (_, tail) = out
        .stdout
        .split_once("\nExamples:\n")
        .unwrap_or_else(|| panic!("no examples:\n{}", out.stdout));
    let (examples, codes) = tail.split_once("\nExit codes:\n").unwrap();
    let commands = examples
        .lines()
        .filter(|l| l.trim_start().starts_with("k3sdoctor "))
        .count();
    assert!((3..=5).contains(&commands), "{examples}");
    assert!(codes.contains("4  a repair was attempted"), "{codes}");
}
