//! The clap command built from the derive and laid out per subcommand.

use super::help::global_options_once;
use super::{Cli, flag_layout};

/// The command line as clap sees it, for parsing, completions and man pages alike: the
/// derived one, built, and laid out per command (`flag_layout`): each subcommand's `--help`,
/// man page and completions offer only the global flags it takes, and `-o` only the formats
/// it prints.
pub fn command() -> clap::Command {
    command_as("k3sdoctor")
}

/// [`command`] with usage lines under `name` (`kubectl k3s-doctor`, `kubectl-k3s_doctor`).
pub fn command_as(name: &str) -> clap::Command {
    laid_out_as(name, flag_layout::Untaken::Hidden)
}

/// [`command_as`] with the flags a command does not take left out rather than hidden, for
/// clap_complete's static scripts (which would list hidden flags).
pub fn command_for_scripts(name: &str) -> clap::Command {
    laid_out_as(name, flag_layout::Untaken::Omitted)
}

/// [`command_as`] as the parser shows its help: each subcommand's help leaves out the
/// global options and points to `options` ([`global_options_once`]).
pub(super) fn command_for_help_as(name: &str) -> clap::Command {
    laid_out(name, flag_layout::Untaken::Hidden, true)
}

fn laid_out_as(name: &str, untaken: flag_layout::Untaken) -> clap::Command {
    laid_out(name, untaken, false)
}

fn laid_out(name: &str, untaken: flag_layout::Untaken, globals_once: bool) -> clap::Command {
    use clap::CommandFactory;
    let mut command = Cli::command()
        .name(name.to_string())
        .bin_name(name.to_string());
    command = flag_layout::apply(command, untaken);
    if globals_once {
        // Before build: an argument changed after it would lose its place in the parser.
        command = global_options_once(command, name);
    }
    command.build();
    // `mut_subcommand` moves what it changes to the end, so every subcommand goes through it
    // in its declared order, and keeps its place in `--help` too.
    let names: Vec<String> = command
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for (order, name) in names.iter().enumerate() {
        command = command.mut_subcommand(name, |sub| sub.display_order(order));
    }
    command
}
