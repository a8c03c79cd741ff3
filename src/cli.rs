//! Command-line definitions (clap derive) and nothing else.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use jiff::Timestamp;

use crate::diagnose::finding::FailOn;
use crate::render::OutputFormat;

mod help;
pub use help::EXIT_CODES;
use help::*;

#[derive(Debug, Parser)]
#[command(
    name = "k3sdoctor",
    version,
    about = "Find and safely repair k3s/RKE2 leader-lock splits and etcd snapshot ConfigMap drift",
    long_about = "k3sdoctor reads a k3s or RKE2 cluster (or a dump of one) and reports who holds the \
                  k3s/k3s-etcd (rke2/rke2-etcd) leader locks, whether they are fresh, whether they are split \
                  across servers, and whether that split breaks etcd snapshot bookkeeping on this version \
                  (k3s-io/k3s#10046). Nothing is ever written without --fix.",
    after_long_help = EXIT_CODES,
    propagate_version = true
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Flags accepted before or after the subcommand, spelled as kubectl spells them.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster).
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context to use.
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,

    /// How long to wait for one API request (e.g. 30s, 1m; 0 = no limit).
    #[arg(long, global = true, value_name = "DURATION", default_value = "0", value_parser = parse_request_timeout)]
    pub request_timeout: RequestTimeout,

    /// Output format.
    #[arg(short = 'o', long = "output", global = true, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,

    /// Which product runs the cluster (auto: from the lock names, then the node versions).
    #[arg(long, global = true, value_enum, default_value_t = DistroChoice::Auto)]
    pub distro: DistroChoice,

    /// Read objects from a file or directory of `kubectl get -o yaml|json` output instead of a cluster. Repeatable.
    #[arg(long = "from-file", global = true, value_name = "PATH")]
    pub from_file: Vec<PathBuf>,

    /// The time to judge freshness against, RFC 3339 (default: the local clock; for a dump, its newest timestamp).
    #[arg(long, global = true, value_name = "TIME", value_parser = parse_now)]
    pub now: Option<Timestamp>,

    /// More detail on stderr: -v request trace and error causes, -vv more.
    #[arg(short, long, global = true, action = clap::ArgAction::Count, conflicts_with = "quiet")]
    pub verbose: u8,

    /// Print nothing for table output; rely on the exit code.
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// When to use colours (NO_COLOR is honoured with auto).
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DistroChoice {
    Auto,
    K3s,
    Rke2,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// `--request-timeout`; `None` means no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestTimeout(pub Option<Duration>);

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
    /// Print a shell completion script.
    #[command(after_long_help = COMPLETIONS_EXAMPLES)]
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page, or write all man pages into a directory.
    #[command(after_long_help = MAN_EXAMPLES)]
    Man {
        /// Write k3sdoctor.1 and one page per subcommand into this directory.
        #[arg(long, value_name = "DIR")]
        out_dir: Option<PathBuf>,
    },
}

#[derive(Debug, Clone, Args)]
pub struct LeasesArgs {
    #[command(subcommand)]
    pub action: Option<LeasesAction>,

    /// Exit 1 when a finding of at least this severity remains.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
}

#[derive(Debug, Clone, Subcommand)]
pub enum LeasesAction {
    /// Move a k3s lock onto the server that should hold it (default: k3s onto the k3s-etcd holder) and verify the takeover.
    #[command(after_long_help = FOLLOW_EXAMPLES)]
    Follow(FollowArgs),
}

#[derive(Debug, Clone, Args)]
pub struct FollowArgs {
    /// Write the change (after a server-side dry run and confirmation); without it only the plan is shown.
    #[arg(long)]
    pub fix: bool,

    /// The node (name or hostname) that should hold the lock (default: the holder of the other k3s lock).
    #[arg(long, value_name = "NODE|HOSTNAME")]
    pub to: Option<String>,

    /// The lock to move: <prog> (default) or <prog>-etcd.
    #[arg(long, value_name = "NAME")]
    pub lease: Option<String>,

    /// Do not ask for confirmation (needed without a terminal).
    #[arg(short, long)]
    pub yes: bool,

    /// Do not wait for the target to take the lock over.
    #[arg(long)]
    pub no_wait: bool,

    /// How long to wait for the takeover.
    #[arg(long, value_name = "DURATION", default_value = "120s", value_parser = parse_wait)]
    pub timeout: Duration,

    /// Skip the target, etcd-quorum and split checks (never the permission check).
    #[arg(long)]
    pub force: bool,

    /// After a verified write, exit 1 when a finding of at least this severity remains.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
}

#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// Exit 1 when a finding of at least this severity remains.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
}

#[derive(Debug, Clone, Args)]
pub struct SnapshotsArgs {
    #[command(subcommand)]
    pub action: SnapshotsAction,
}

#[derive(Debug, Clone, Subcommand)]
pub enum SnapshotsAction {
    /// One row per snapshot: node, storage, size, and the state of its ConfigMap entry.
    #[command(after_long_help = SNAPSHOTS_LIST_EXAMPLES)]
    List,
    /// What is missing, orphaned or stale in the ConfigMap, and why; exits 1 on differences.
    #[command(after_long_help = SNAPSHOTS_DIFF_EXAMPLES)]
    Diff,
    /// Write the missing and stale entries exactly as k3s would (with --fix).
    #[command(after_long_help = SNAPSHOTS_BACKFILL_EXAMPLES)]
    Backfill(BackfillArgs),
    /// Put back the ConfigMap data a backfill backup holds, exactly (with --fix).
    #[command(after_long_help = SNAPSHOTS_RESTORE_EXAMPLES)]
    Restore(RestoreArgs),
}

#[derive(Debug, Clone, Args)]
pub struct RestoreArgs {
    /// The backup file `snapshots backfill --fix` saved (it prints its path).
    #[arg(long, value_name = "FILE", required = true)]
    pub from_backup: PathBuf,

    /// Write the change (after a backup of the current ConfigMap, a server-side dry run and confirmation); without it only the plan is shown.
    #[arg(long)]
    pub fix: bool,

    /// Do not ask for confirmation (needed without a terminal).
    #[arg(short, long)]
    pub yes: bool,

    /// Where to save the current ConfigMap before restoring (default: ./<configmap>.<resourceVersion>.backup.json).
    #[arg(long, value_name = "FILE")]
    pub backup: Option<PathBuf>,

    /// After a verified write, exit 1 when a finding of at least this severity remains.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
}

#[derive(Debug, Clone, Args)]
pub struct BackfillArgs {
    /// Write the change (after a backup, a server-side dry run and confirmation); without it only the plan is shown.
    #[arg(long)]
    pub fix: bool,

    /// Also remove entries that have no ETCDSnapshotFile behind them.
    #[arg(long)]
    pub prune: bool,

    /// Do not ask for confirmation (needed without a terminal).
    #[arg(short, long)]
    pub yes: bool,

    /// Where to save the ConfigMap before changing it (default: ./<configmap>.<resourceVersion>.backup.json); undo with `snapshots restore --from-backup FILE --fix`.
    #[arg(long, value_name = "FILE")]
    pub backup: Option<PathBuf>,

    /// After a verified write, exit 1 when a finding of at least this severity remains.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
}

/// The name to show in help and messages: `kubectl-k3s_doctor` on PATH makes the tool a
/// kubectl plugin, invoked as `kubectl k3s-doctor`.
pub fn display_name(argv0: Option<&std::ffi::OsStr>) -> String {
    let base = argv0
        .and_then(|a| std::path::Path::new(a).file_name())
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = base.strip_suffix(".exe").unwrap_or(&base);
    match base.strip_prefix("kubectl-") {
        Some(plugin) if !plugin.is_empty() => format!("kubectl {}", plugin.replace('_', "-")),
        _ => "k3sdoctor".to_string(),
    }
}

/// Parses the command line, with help and usage under `name`; exits on usage errors (2) and
/// for `--help`/`--version` (0) as clap does.
pub fn parse_as(name: &str) -> Cli {
    use clap::{CommandFactory, FromArgMatches};
    let mut command = Cli::command()
        .name(name.to_string())
        .bin_name(name.to_string());
    if name != "k3sdoctor" {
        command = with_program_in_examples(command, name);
    }
    let matches = command.get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
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

/// kubectl's forms: a bare number of seconds, or a duration such as `500ms`, `30s`, `1m30s`, `2h`.
pub fn parse_request_timeout(text: &str) -> Result<RequestTimeout, String> {
    let text = text.trim();
    let invalid = || format!("{text:?} is not a duration; use e.g. 30s, 1m or 0 for no limit");
    let millis: u64 = if let Ok(secs) = text.parse::<u64>() {
        secs.checked_mul(1000).ok_or_else(invalid)?
    } else {
        let mut total: u64 = 0;
        let mut rest = text;
        if rest.is_empty() {
            return Err(invalid());
        }
        while !rest.is_empty() {
            let digits = rest
                .find(|c: char| !c.is_ascii_digit())
                .ok_or_else(invalid)?;
            if digits == 0 {
                return Err(invalid());
            }
            let value: u64 = rest[..digits].parse().map_err(|_| invalid())?;
            rest = &rest[digits..];
            let unit_len = rest
                .find(|c: char| c.is_ascii_digit())
                .unwrap_or(rest.len());
            let factor = match &rest[..unit_len] {
                "ms" => 1,
                "s" => 1000,
                "m" => 60_000,
                "h" => 3_600_000,
                _ => return Err(invalid()),
            };
            rest = &rest[unit_len..];
            total = value
                .checked_mul(factor)
                .and_then(|v| total.checked_add(v))
                .ok_or_else(invalid)?;
        }
        total
    };
    Ok(RequestTimeout(
        (millis > 0).then(|| Duration::from_millis(millis)),
    ))
}

/// `--timeout`: like `--request-timeout`, but it must be a real wait.
fn parse_wait(text: &str) -> Result<Duration, String> {
    parse_request_timeout(text)?.0.ok_or_else(|| {
        format!("{text:?}: the timeout must be longer than 0; use --no-wait not to wait")
    })
}

fn parse_now(text: &str) -> Result<Timestamp, String> {
    text.trim()
        .parse::<Timestamp>()
        .map_err(|e| format!("{text:?} is not an RFC 3339 time such as 2024-05-31T12:10:40Z: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn request_timeouts_like_kubectl() {
        let ms = |t: &str| parse_request_timeout(t).unwrap().0.map(|d| d.as_millis());
        assert_eq!(ms("0"), None);
        assert_eq!(ms("5"), Some(5000));
        assert_eq!(ms("30s"), Some(30_000));
        assert_eq!(ms("1m30s"), Some(90_000));
        assert_eq!(ms("250ms"), Some(250));
        assert_eq!(ms("2h"), Some(7_200_000));
        for bad in ["", "s", "1x", "-1s", "1.5s", "99999999999999999999"] {
            assert!(parse_request_timeout(bad).is_err(), "{bad}");
        }
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
    fn kubectl_plugin_names() {
        use std::ffi::OsStr;
        assert_eq!(
            display_name(Some(OsStr::new("/usr/local/bin/kubectl-k3s_doctor"))),
            "kubectl k3s-doctor"
        );
        assert_eq!(display_name(Some(OsStr::new("k3sdoctor"))), "k3sdoctor");
        assert_eq!(
            display_name(Some(OsStr::new("./target/release/k3sdoctor"))),
            "k3sdoctor"
        );
        assert_eq!(display_name(None), "k3sdoctor");
    }

    #[test]
    fn global_flags_go_before_or_after_the_subcommand() {
        let a = Cli::try_parse_from(["k3sdoctor", "-o", "json", "leases"]).unwrap();
        let b = Cli::try_parse_from(["k3sdoctor", "leases", "-o", "json"]).unwrap();
        assert_eq!(a.global.output, OutputFormat::Json);
        assert_eq!(b.global.output, OutputFormat::Json);
    }
}
