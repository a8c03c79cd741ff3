//! Which of the flags accepted before the subcommand each command takes.
//!
//! kubectl's flags are global in clap's sense (`k3sdoctor --context x leases` and
//! `k3sdoctor leases --context x` both parse), and clap's `global` puts every one of them on
//! every subcommand. Most of them mean something to some commands only: `serve` reads no dump
//! and prints no report, `snapshots diff` has no wide columns, `completions` reads no cluster.
//! So the built command tree is laid out per command here: a flag a command does not take is
//! hidden from its `--help`, man page and completions, `-o` offers only the formats the
//! command prints, and [`refuse_untaken_flags`] makes such a flag a usage error (exit 2) in
//! either position.

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Arg, ArgMatches, Command, ValueEnum};

use crate::render::OutputFormat;

/// The flags that say which cluster to read and how (kubectl's connection flags).
pub(super) const CONNECTION: [&str; 13] = [
    "kubeconfig",
    "context",
    "server",
    "cluster",
    "user",
    "token",
    "certificate_authority",
    "insecure_skip_tls_verify",
    "impersonate",
    "impersonate_group",
    "namespace",
    "request_timeout",
    "distro",
];

/// Reading a dump instead of a cluster, and judging it at a given time.
pub(super) const DUMP: [&str; 4] = ["from_file", "max_bundle_size", "max_bundle_entries", "now"];

/// The report's format and its tables' header line.
pub(super) const REPORT: [&str; 2] = ["output", "no_headers"];

/// What one command takes of the global flags; `-v`, `-q` and `--color` every command takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Layout {
    pub connection: bool,
    pub dump: bool,
    /// The `-o` formats it prints; empty: it prints no report (and takes no `--no-headers`).
    pub outputs: &'static [OutputFormat],
}

use OutputFormat::{Json, Jsonl, Table, Wide, Yaml};

/// `check` and `leases` stream one line per cluster of a fleet.
const FLEET_OUTPUTS: &[OutputFormat] = &[Table, Wide, Json, Yaml, Jsonl];
/// A table with wide columns.
const WIDE_OUTPUTS: &[OutputFormat] = &[Table, Wide, Json, Yaml];
/// A report without a table to widen.
const PLAIN_OUTPUTS: &[OutputFormat] = &[Table, Json, Yaml];

/// A command that reads a cluster or a dump and prints a report in `outputs`.
const fn reads_cluster_or_dump(outputs: &'static [OutputFormat]) -> Layout {
    Layout {
        connection: true,
        dump: true,
        outputs,
    }
}

/// The layout of the command `path` names (the words after the program), `None` for one
/// that takes every global flag (the program itself, and a command not listed here).
pub(super) fn layout(path: &[&str]) -> Option<Layout> {
    Some(match path {
        [] => return None,
        // `-o wide` is refused at run time where it depends on another flag: a single-cluster
        // `check`, `leases follow` without `--fix`.
        ["leases"] | ["check"] => reads_cluster_or_dump(FLEET_OUTPUTS),
        ["leases", "follow"] | ["snapshots"] | ["snapshots", "list"] => {
            reads_cluster_or_dump(WIDE_OUTPUTS)
        }
        // Named, not `_`: a new subcommand must choose its formats (every_command_is_laid_out).
        ["snapshots", "diff" | "backfill" | "restore"] => reads_cluster_or_dump(PLAIN_OUTPUTS),
        // It watches a live cluster (a dump never changes), judges on the API server's clock,
        // and serves its report over HTTP (`/report`) instead of printing one.
        ["serve"] => Layout {
            connection: true,
            dump: false,
            outputs: &[],
        },
        // It reads a live cluster into files (a dump is already one) and prints no report.
        ["dump"] => Layout {
            connection: true,
            dump: false,
            outputs: &[],
        },
        // It reads nothing and prints a document about the binary: no table to widen.
        ["version"] => Layout {
            connection: false,
            dump: false,
            outputs: PLAIN_OUTPUTS,
        },
        // They read no cluster and print no report.
        ["completions"] | ["man"] | ["rbac"] | ["options"] => Layout {
            connection: false,
            dump: false,
            outputs: &[],
        },
        // A command not laid out yet takes every global flag, as clap gives it.
        _ => return None,
    })
}

impl Layout {
    /// Whether the command takes the global flag `id`.
    pub(super) fn takes(&self, id: &str) -> bool {
        if CONNECTION.contains(&id) {
            self.connection
        } else if DUMP.contains(&id) {
            self.dump
        } else if REPORT.contains(&id) {
            !self.outputs.is_empty()
        } else {
            true
        }
    }

    fn global_ids() -> impl Iterator<Item = &'static str> {
        CONNECTION.into_iter().chain(DUMP).chain(REPORT)
    }
}

/// `-o` for a command that prints `formats`: the same values (and help) as
/// [`OutputFormat`], only fewer.
fn output_parser(formats: &'static [OutputFormat]) -> impl TypedValueParser<Value = OutputFormat> {
    PossibleValuesParser::new(formats.iter().filter_map(|f| f.to_possible_value())).try_map(
        move |name: String| {
            formats
                .iter()
                .copied()
                .find(|f| {
                    f.to_possible_value()
                        .is_some_and(|v| v.matches(&name, false))
                })
                .ok_or_else(|| format!("unknown output format {name}"))
        },
    )
}

/// What becomes of a global flag a command does not take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Untaken {
    /// Hidden, still parsed, so [`refuse_untaken_flags`] can name it (for parsing, help and
    /// man pages).
    Hidden,
    /// Left out, and no flag global any more: for clap_complete's static scripts, which list
    /// hidden flags too.
    Omitted,
}

/// Lays out every subcommand of `command`, before it is built (see the module's comment):
/// each gets its own copy of every global flag, hidden or narrowed as its layout says, which
/// clap's build then leaves as it is (it copies a global flag only where it is missing).
pub(super) fn apply(mut command: Command, untaken: Untaken) -> Command {
    let globals: Vec<Arg> = command
        .get_arguments()
        .filter(|a| a.is_global_set())
        .cloned()
        .map(|a| match untaken {
            Untaken::Hidden => a,
            Untaken::Omitted => a.global(false),
        })
        .collect();
    if untaken == Untaken::Omitted {
        for global in &globals {
            command = command.mut_arg(global.get_id(), |a| a.global(false));
        }
    }
    apply_below(command, &[], &globals, untaken)
}

fn apply_below(mut command: Command, path: &[&str], globals: &[Arg], untaken: Untaken) -> Command {
    let names: Vec<String> = command
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for name in &names {
        let mut sub_path: Vec<&str> = path.to_vec();
        sub_path.push(name);
        command = command.mut_subcommand(name, |mut sub| {
            let layout = layout(&sub_path);
            for global in globals {
                let id = global.get_id().as_str();
                let mut arg = global.clone();
                match layout {
                    Some(layout) if !layout.takes(id) => match untaken {
                        Untaken::Hidden => arg = arg.hide(true),
                        Untaken::Omitted => continue,
                    },
                    Some(layout) if id == "output" => {
                        arg = arg.value_parser(output_parser(layout.outputs));
                    }
                    _ => {}
                }
                sub = sub.arg(arg);
            }
            apply_below(sub, &sub_path, globals, untaken)
        });
    }
    command
}

/// A global flag given for a command that does not take it, before or after the
/// subcommand; or an `-o` it does not print, given before it (after it, clap refuses it
/// itself). The error is clap's, for `exit 2` and the one-line usage message.
pub(super) fn refuse_untaken_flags(
    command: &Command,
    matches: &ArgMatches,
) -> Result<(), clap::Error> {
    let mut leaf = command;
    let mut path: Vec<&str> = Vec::new();
    let mut at = matches;
    while let Some((name, sub_matches)) = at.subcommand() {
        match leaf.find_subcommand(name) {
            Some(sub) => leaf = sub,
            None => break,
        }
        path.push(leaf.get_name());
        at = sub_matches;
    }
    let Some(layout) = layout(&path) else {
        return Ok(());
    };
    let given = |id: &str| {
        matches.try_contains_id(id).is_ok_and(|present| present)
            && matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
    };
    let mut leaf = leaf.clone();
    for id in Layout::global_ids().filter(|id| given(id)) {
        let spelled = spelling(command, id);
        if !layout.takes(id) {
            let message = format!(
                "unexpected argument '{spelled}': `{}` does not take it ({})",
                leaf.get_bin_name().unwrap_or(leaf.get_name()),
                why_not(&path, id)
            );
            return Err(leaf.error(clap::error::ErrorKind::UnknownArgument, message));
        }
        if id == "output"
            && let Ok(Some(format)) = matches.try_get_one::<OutputFormat>(id)
            && !layout.outputs.contains(format)
        {
            let name = format
                .to_possible_value()
                .map(|v| v.get_name().to_string())
                .unwrap_or_default();
            let possible: Vec<String> = layout
                .outputs
                .iter()
                .filter_map(|f| f.to_possible_value())
                .map(|v| v.get_name().to_string())
                .collect();
            let message = format!(
                "invalid value '{name}' for '{spelled}' of `{}`\n  [possible values: {}]",
                leaf.get_bin_name().unwrap_or(leaf.get_name()),
                possible.join(", ")
            );
            return Err(leaf.error(clap::error::ErrorKind::InvalidValue, message));
        }
    }
    Ok(())
}

/// Why the command `path` does not take the global flag `id`.
fn why_not(path: &[&str], id: &str) -> &'static str {
    match (path, DUMP.contains(&id)) {
        (["serve"], true) => {
            "serve watches a live cluster and judges it on the API server's clock; run check on a dump"
        }
        (["serve"], false) => {
            "serve prints no report: GET /report has the CheckReport, --log-format json gives JSON logs"
        }
        (["dump"], true) => "dump reads a live cluster, and a dump is already one: run check on it",
        (["dump"], false) => "dump writes files and prints no report: check -o json prints one",
        _ => "it reads no cluster and prints no report",
    }
}

/// `--output`, `--from-file`: the flag as the user knows it.
fn spelling(command: &Command, id: &str) -> String {
    command
        .get_arguments()
        .find(|a| a.get_id() == id)
        .and_then(|a| a.get_long())
        .map(|l| format!("--{l}"))
        .unwrap_or_else(|| id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_global_flag_is_in_a_group_the_layout_knows() {
        let cmd = crate::cli::command();
        let globals: Vec<&str> = cmd
            .get_arguments()
            .filter(|a| a.is_global_set())
            .map(|a| a.get_id().as_str())
            .collect();
        for id in &globals {
            let grouped = Layout::global_ids().any(|g| g == *id);
            let everywhere = ["verbose", "quiet", "color"].contains(id);
            assert!(grouped || everywhere, "{id} is in no group");
        }
    }

    /// A new command keeps every global flag until it is laid out here: this says so.
    #[test]
    fn every_command_is_laid_out() {
        fn walk(cmd: &Command, path: &mut Vec<String>) {
            for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
                path.push(sub.get_name().to_string());
                let words: Vec<&str> = path.iter().map(String::as_str).collect();
                assert!(layout(&words).is_some(), "{words:?} is not laid out");
                walk(sub, path);
                path.pop();
            }
        }
        walk(&crate::cli::command(), &mut Vec::new());
    }

    #[test]
    fn the_formats_each_command_prints() {
        let names = |path: &[&str]| -> Vec<&str> {
            layout(path)
                .unwrap()
                .outputs
                .iter()
                .map(|f| match f {
                    Table => "table",
                    Wide => "wide",
                    Json => "json",
                    Yaml => "yaml",
                    Jsonl => "jsonl",
                })
                .collect()
        };
        assert_eq!(
            names(&["check"]),
            ["table", "wide", "json", "yaml", "jsonl"]
        );
        assert_eq!(names(&["leases"]), names(&["check"]));
        assert_eq!(
            names(&["leases", "follow"]),
            ["table", "wide", "json", "yaml"]
        );
        assert_eq!(
            names(&["snapshots", "list"]),
            ["table", "wide", "json", "yaml"]
        );
        for sub in ["diff", "backfill", "restore"] {
            assert_eq!(
                names(&["snapshots", sub]),
                ["table", "json", "yaml"],
                "{sub}"
            );
        }
        assert!(names(&["serve"]).is_empty());
        assert!(names(&["completions"]).is_empty());
    }

    #[test]
    fn serve_takes_the_connection_flags_only() {
        let serve = layout(&["serve"]).unwrap();
        assert!(serve.takes("context") && serve.takes("request_timeout"));
        assert!(!serve.takes("from_file") && !serve.takes("now") && !serve.takes("output"));
        assert!(!serve.takes("no_headers"));
        assert!(serve.takes("verbose") && serve.takes("color"));
        let man = layout(&["man"]).unwrap();
        assert!(!man.takes("kubeconfig") && man.takes("quiet"));
    }
}
