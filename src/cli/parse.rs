//! Parsing the command line, with help laid out for the terminal and usage errors kept whole.

use super::command_tree::command_for_help_as;
use super::usage_error::command_path;
use super::{Cli, UsageError, flag_layout, help};

/// Parses the command line, with help and usage under `name`; exits on usage errors (2) and
/// for `--help`/`--version` (0) as clap does.
pub fn parse_as(name: &str) -> Result<Cli, UsageError> {
    parse_args_as(name, std::env::args_os().collect())
}

/// [`parse_as`] for the given words (the program's name first).
pub fn parse_args_as(name: &str, args: Vec<std::ffi::OsString>) -> Result<Cli, UsageError> {
    use clap::FromArgMatches;
    // Help is laid out for the terminal once, here, and clap then finds nothing to re-wrap.
    let width = help::help_width();
    let mut command = with_exit_codes(command_for_help_as(name), width).term_width(width);
    if name != "k3sdoctor" {
        command = with_program_in_examples(command, name);
    }
    let command_path = command_path(&command, &args);
    // `--version -v` prints what `version` does; clap stops at --version before -v is read.
    let verbose = args.iter().skip(1).any(|a| {
        let a = a.to_string_lossy();
        a == "--verbose"
            || (a.starts_with('-')
                && !a.starts_with("--")
                && a[1..].chars().all(|c| c == 'v')
                && a.len() > 1)
    });
    command
        .clone()
        .try_get_matches_from(args)
        .and_then(|matches| {
            flag_layout::refuse_untaken_flags(&command, &matches)?;
            Cli::from_arg_matches(&matches)
        })
        .map_err(|error| UsageError {
            error,
            command_path,
            verbose,
        })
}

/// The top-level `--help` ends with the exit codes, after the examples, wrapped to `width`.
fn with_exit_codes(command: clap::Command, width: usize) -> clap::Command {
    let examples = command
        .get_after_long_help()
        .map(|h| h.to_string())
        .unwrap_or_default();
    let text = format!("{examples}\n\n{}", help::exit_codes_text(width));
    command.after_long_help(text)
}

/// The examples under every `--help` are written for `k3sdoctor`; show them as the user runs it.
fn with_program_in_examples(mut command: clap::Command, name: &str) -> clap::Command {
    if let Some(help) = command.get_after_long_help() {
        let text = help.to_string().replace("k3sdoctor ", &format!("{name} "));
        command = command.after_long_help(text);
    }
    let subcommands: Vec<String> = command
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for sub in subcommands {
        command = command.mut_subcommand(sub, |s| with_program_in_examples(s, name));
    }
    command
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::cli::command;
    use crate::render::OutputFormat;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        parse_args_as("k3sdoctor", args.iter().map(Into::into).collect()).map_err(|e| e.error)
    }

    #[test]
    fn a_global_flag_is_refused_where_the_command_does_not_take_it() {
        use clap::error::ErrorKind;
        let cli = parse(&["k3sdoctor", "completions", "bash", "-q"]).unwrap();
        assert!(cli.global.quiet);
        for args in [
            &["k3sdoctor", "--kubeconfig", "x", "completions", "bash"][..],
            &["k3sdoctor", "man", "--from-file", "x"],
            &["k3sdoctor", "--from-file", "x", "serve"],
            &["k3sdoctor", "serve", "--now", "2024-01-01T00:00:00Z"],
            &["k3sdoctor", "-o", "json", "serve"],
            &["k3sdoctor", "serve", "--no-headers"],
            &["k3sdoctor", "rbac", "--context", "x"],
        ] {
            let e = parse(args).map(|_| ()).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::UnknownArgument, "{args:?}: {e}");
        }
        for args in [
            &["k3sdoctor", "-o", "wide", "snapshots", "diff"][..],
            &["k3sdoctor", "snapshots", "diff", "-o", "wide"],
            &["k3sdoctor", "-o", "jsonl", "leases", "follow"],
            &["k3sdoctor", "snapshots", "list", "-o", "jsonl"],
        ] {
            let e = parse(args).map(|_| ()).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidValue, "{args:?}: {e}");
        }
        let cmd = command();
        for name in ["completions", "man", "rbac", "serve"] {
            let visible: Vec<&str> = cmd
                .find_subcommand(name)
                .unwrap()
                .get_arguments()
                .filter(|a| !a.is_hide_set())
                .map(|a| a.get_id().as_str())
                .collect();
            for id in ["from_file", "now", "output", "no_headers"] {
                assert!(!visible.contains(&id), "{name}: {visible:?}");
            }
            assert!(
                visible.contains(&"help") && visible.contains(&"color"),
                "{visible:?}"
            );
        }
        let serve = cmd.find_subcommand("serve").unwrap();
        assert!(
            serve
                .get_arguments()
                .any(|a| a.get_id() == "kubeconfig" && !a.is_hide_set())
        );
    }

    #[test]
    fn kubectl_flags_go_before_or_after_the_subcommand_where_taken() {
        for args in [
            &["k3sdoctor", "--context", "x", "leases"][..],
            &["k3sdoctor", "leases", "--context", "x"],
            &["k3sdoctor", "snapshots", "--context", "x", "diff"],
            &["k3sdoctor", "snapshots", "--context", "x"],
            &["k3sdoctor", "snapshots", "--context", "x", "ls"],
            &["k3sdoctor", "--context", "x", "serve"],
        ] {
            let cli = parse(args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
            assert_eq!(cli.global.context, ["x"], "{args:?}");
        }
        let cli = parse(&["k3sdoctor", "-o", "jsonl", "check", "--all-contexts"]).unwrap();
        assert_eq!(cli.global.output, OutputFormat::Jsonl);
        let cli = parse(&[
            "k3sdoctor",
            "--from-file",
            "d",
            "snapshots",
            "list",
            "-o",
            "wide",
        ])
        .unwrap();
        assert_eq!(cli.global.output, OutputFormat::Wide);
        assert_eq!(cli.global.from_file, [PathBuf::from("d")]);
    }
}
