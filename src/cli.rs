//! Command-line definitions (clap derive) and nothing else. This file holds the top-level parser
//! and its subcommands; each subcommand's flags, the global flags, and the parsing live in `cli/`,
//! one concept a file, and are re-exported here so the rest of the crate names them `cli::X`.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

mod bundle_size;
mod check_args;
mod command_tree;
pub mod complete;
mod dump_args;
mod flag_layout;
mod fleet_args;
mod global_args;
pub mod global_options;
mod help;
mod leases_args;
mod parse;
mod program_name;
mod rancher_args;
mod serve_args;
mod snapshots_args;
mod suppress_args;
mod usage_error;
mod value_enums;
mod value_parsers;

pub use check_args::CheckArgs;
pub use command_tree::{command, command_as, command_for_scripts};
pub use dump_args::DumpArgs;
pub use fleet_args::FleetArgs;
pub use global_args::{ColorChoice, DistroChoice, GlobalArgs, RequestTimeout};
use help::*;
pub use help::{EXIT_CODE_NOTES, EXIT_CODES, help_width};
pub use leases_args::{FollowArgs, LeasesAction, LeasesArgs};
pub use parse::{parse_args_as, parse_as};
pub use program_name::{completion_request, display_name, is_kubectl_completer, script_name};
pub use rancher_args::RancherArgs;
pub use serve_args::ServeArgs;
pub use snapshots_args::{
    BackfillArgs, RestoreArgs, SnapshotDiffArgs, SnapshotListArgs, SnapshotStorage,
    SnapshotsAction, SnapshotsArgs,
};
pub use suppress_args::SuppressArgs;
pub use usage_error::{UsageError, one_line_usage_error};
pub use value_parsers::parse_request_timeout;

#[derive(Debug, Parser)]
#[command(
    name = "k3sdoctor",
    version,
    about = "Find and safely repair k3s/RKE2 leader-lock splits and etcd snapshot ConfigMap drift",
    long_about = "k3sdoctor reads a k3s or RKE2 cluster (or a dump of one) and reports who holds the \
                  k3s/k3s-etcd (rke2/rke2-etcd) leader locks, whether they are fresh, whether they are split \
                  across servers, and whether that split breaks etcd snapshot bookkeeping on this version \
                  (k3s-io/k3s#10046). Nothing is written without --fix, except by `serve --heal on`, which \
                  an operator turns on to heal a lasting split unattended (docs/heal.md).",
    after_long_help = TOP_EXAMPLES,
    propagate_version = true,
    // Longer lines are hard to read; the same cap as `help::help_width`.
    max_term_width = 100
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// What `k3sdoctor rbac` prints the roles for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RbacUse {
    ReadOnly,
    Repair,
    Serve,
    Heal,
    /// Rancher's management cluster, for check's comparison of Rancher's snapshot records.
    Rancher,
    /// Opt-in: list secrets in kube-system, for the node password and serving certificate checks.
    SecretsMetadata,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Who holds each k3s/RKE2 leader lock, is it fresh, is there a split, does it matter here.
    #[command(after_long_help = LEASES_EXAMPLES)]
    Leases(LeasesArgs),
    /// Every check at once: leases, snapshots, etcd membership; findings linked to their cause.
    #[command(after_long_help = CHECK_EXAMPLES)]
    Check(CheckArgs),
    /// ETCDSnapshotFiles against the <prog>-etcd-snapshots ConfigMap, by k3s's own rules.
    #[command(after_long_help = SNAPSHOTS_EXAMPLES)]
    Snapshots(SnapshotsArgs),
    /// Write everything check reads into a folder or a .tar.gz, for --from-file later or elsewhere.
    #[command(long_about = DUMP_ABOUT, after_long_help = DUMP_EXAMPLES)]
    Dump(DumpArgs),
    /// Keep watching and export the verdicts for Prometheus: /metrics, /healthz, /readyz, /report.
    #[command(long_about = SERVE_ABOUT, after_long_help = SERVE_EXAMPLES)]
    Serve(ServeArgs),
    /// Print a shell completion script.
    #[command(after_long_help = COMPLETIONS_EXAMPLES)]
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the RBAC roles a use needs, as YAML for kubectl apply -f -.
    #[command(after_long_help = RBAC_EXAMPLES)]
    Rbac {
        /// read-only: check, leases, snapshots list|diff and every command without --fix; repair: what --fix adds; serve: what serve needs; heal: what serve --heal adds; secrets-metadata: the opt-in Secret checks of check.
        #[arg(value_enum, default_value_t = RbacUse::ReadOnly)]
        r#use: RbacUse,
    },
    /// Print the man page, or write all man pages into a directory.
    #[command(after_long_help = MAN_EXAMPLES)]
    Man {
        /// Write k3sdoctor.1 and one page per subcommand into this directory.
        #[arg(long, value_name = "DIR")]
        out_dir: Option<PathBuf>,
    },
    /// Print the global options, which every command's help leaves out (as `kubectl options`).
    #[command(after_long_help = OPTIONS_EXAMPLES)]
    Options,
    /// Print the version, the git commit it was built from, build date, rustc, target and features.
    #[command(after_long_help = VERSION_EXAMPLES)]
    Version,
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::render::OutputFormat;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
        command().debug_assert();
    }

    #[test]
    fn every_subcommand_help_ends_with_examples() {
        fn walk(cmd: &clap::Command, path: &str) {
            for sub in cmd.get_subcommands() {
                let name = format!("{path} {}", sub.get_name());
                let help = sub
                    .get_after_long_help()
                    .map(|h| h.to_string())
                    .unwrap_or_default();
                let examples = help
                    .lines()
                    .filter(|l| l.trim_start().starts_with("k3sdoctor "))
                    .count();
                assert!(
                    help.contains("Examples:") && (2..=4).contains(&examples),
                    "{name}: {examples} examples"
                );
                walk(sub, &name);
            }
        }
        walk(&Cli::command(), "k3sdoctor");
    }

    #[test]
    fn global_flags_go_before_or_after_the_subcommand() {
        let a = Cli::try_parse_from(["k3sdoctor", "-o", "json", "leases"]).unwrap();
        let b = Cli::try_parse_from(["k3sdoctor", "leases", "-o", "json"]).unwrap();
        assert_eq!(a.global.output, OutputFormat::Json);
        assert_eq!(b.global.output, OutputFormat::Json);
    }

    #[test]
    fn the_request_timeout_defaults_to_what_the_help_says() {
        let cli = Cli::try_parse_from(["k3sdoctor", "leases"]).unwrap();
        assert_eq!(
            cli.global.request_timeout,
            RequestTimeout(Some(Duration::from_secs(30)))
        );
    }
}
