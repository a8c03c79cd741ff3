//! Command-line definitions (clap derive) and nothing else.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use jiff::Timestamp;

use crate::diagnose::finding::FailOn;
use crate::render::OutputFormat;

pub mod bundle_size;
pub mod complete;
pub mod flag_layout;
pub mod global_options;
mod help;
mod usage_error;
mod value_parsers;

use help::*;
pub use help::{EXIT_CODE_NOTES, EXIT_CODES, help_width};
use usage_error::command_path;
pub use usage_error::{UsageError, one_line_usage_error};
pub use value_parsers::parse_request_timeout;
use value_parsers::{parse_listen, parse_namespace, parse_now, parse_regex, parse_wait};

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

/// Flags accepted before or after the subcommand, spelled as kubectl spells them. `--help`
/// lists them after the subcommand's own options, under their own heading.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster).
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context to use; repeat it to read several clusters at once (check, leases).
    #[arg(long, global = true, value_name = "NAME", action = clap::ArgAction::Append)]
    pub context: Vec<String>,

    /// The address and port of the API server, in place of the kubeconfig's.
    #[arg(long, global = true, value_name = "URL")]
    pub server: Option<String>,

    /// The kubeconfig cluster to use, in place of the context's.
    #[arg(long, global = true, value_name = "NAME")]
    pub cluster: Option<String>,

    /// The kubeconfig user to use, in place of the context's.
    #[arg(long, global = true, value_name = "NAME")]
    pub user: Option<String>,

    /// Bearer token for the API server, in place of the user's credentials.
    #[arg(long, global = true, value_name = "TOKEN")]
    pub token: Option<String>,

    /// A CA certificate file (PEM) to verify the API server with.
    #[arg(
        long,
        global = true,
        value_name = "FILE",
        conflicts_with = "insecure_skip_tls_verify"
    )]
    pub certificate_authority: Option<PathBuf>,

    /// Do not verify the API server's certificate (insecure).
    #[arg(long, global = true)]
    pub insecure_skip_tls_verify: bool,

    /// The user to impersonate (needs the `impersonate` verb).
    #[arg(long = "as", global = true, value_name = "USER")]
    pub impersonate: Option<String>,

    /// A group to impersonate; repeatable; needs --as.
    #[arg(long = "as-group", global = true, value_name = "GROUP", requires = "impersonate", action = clap::ArgAction::Append)]
    pub impersonate_group: Vec<String>,

    /// The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so
    /// only kube-system is accepted (kubectl's -n, for muscle memory).
    #[arg(short = 'n', long, global = true, value_name = "NAMESPACE", value_parser = parse_namespace)]
    pub namespace: Option<String>,

    /// How long to wait for one API request (e.g. 10s, 1m; 0 = no limit).
    #[arg(long, global = true, value_name = "DURATION", default_value = "30s", value_parser = parse_request_timeout)]
    pub request_timeout: RequestTimeout,

    /// Output format.
    #[arg(short = 'o', long = "output", global = true, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,

    /// Which product runs the cluster (auto: from the lock names, then the node versions).
    #[arg(long, global = true, value_enum, default_value_t = DistroChoice::Auto)]
    pub distro: DistroChoice,

    /// Read objects from `kubectl get -o yaml|json` output or a support bundle (archive or folder) instead of a cluster (`-`: standard input). Repeatable.
    #[arg(long = "from-file", global = true, value_name = "PATH")]
    pub from_file: Vec<PathBuf>,

    /// Stop reading a support bundle past this many decompressed bytes (e.g. 4GiB).
    #[arg(long, global = true, value_name = "SIZE", default_value = "2GiB", value_parser = bundle_size::parse)]
    pub max_bundle_size: u64,

    /// Stop reading a support bundle past this many entries (in archives, and files and folders under a folder).
    #[arg(long, global = true, value_name = "N", default_value_t = crate::input::bundle::limits::DEFAULT_MAX_ENTRIES, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_bundle_entries: u64,

    /// The time to judge freshness against, RFC 3339 (default: the local clock; for a bundle, when it was collected; for a dump, its newest timestamp).
    #[arg(long, global = true, value_name = "TIME", value_parser = parse_now)]
    pub now: Option<Timestamp>,

    /// More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings.
    #[arg(short, long, global = true, action = clap::ArgAction::Count, conflicts_with = "quiet")]
    pub verbose: u8,

    /// Print nothing for table output; rely on the exit code.
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// Print only the rows of tables, as kubectl's --no-headers: no header line, and the summary, findings and verdict on stderr (as whenever stdout is not a terminal); the exit code still carries the verdict.
    #[arg(long, global = true)]
    pub no_headers: bool,

    /// When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it).
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

impl GlobalArgs {
    /// kubectl's connection flags, for `cluster::connect`.
    pub fn connection_overrides(&self) -> crate::input::connect::connection_overrides::Overrides {
        crate::input::connect::connection_overrides::Overrides {
            server: self.server.clone(),
            cluster: self.cluster.clone(),
            user: self.user.clone(),
            token: self.token.clone(),
            certificate_authority: self.certificate_authority.clone(),
            insecure_skip_tls_verify: self.insecure_skip_tls_verify,
            impersonate: self.impersonate.clone(),
            impersonate_groups: self.impersonate_group.clone(),
        }
    }

    /// The `--context` of a single-cluster run; `None` when not given or given several times.
    pub fn single_context(&self) -> Option<&str> {
        match self.context.as_slice() {
            [one] => Some(one),
            _ => None,
        }
    }
}

/// Selecting several clusters (`check` and `leases`): every context, a pattern, or
/// `--context` repeated; each is read with its own client, concurrently.
#[derive(Debug, Clone, Default, Args)]
pub struct FleetArgs {
    /// Read every context of the kubeconfig (the KUBECONFIG files merged as kubectl merges them).
    #[arg(long, conflicts_with = "contexts")]
    pub all_contexts: bool,

    /// Read the contexts whose name matches this regular expression (anywhere in the name; anchor it with ^ and $).
    #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
    pub contexts: Option<regex::Regex>,

    /// Read at most this many clusters at once [default: 16].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub parallel: Option<u16>,

    /// A cluster that cannot be read is a warning row instead of exit 3.
    #[arg(long)]
    pub ignore_unreachable: bool,
}

impl FleetArgs {
    pub const DEFAULT_PARALLEL: u16 = 16;

    /// Whether this run reads a fleet rather than one cluster.
    pub fn selects_fleet(&self, global: &GlobalArgs) -> bool {
        self.all_contexts || self.contexts.is_some() || global.context.len() > 1
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DistroChoice {
    Auto,
    K3s,
    Rke2,
}

/// What `k3sdoctor rbac` prints the roles for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RbacUse {
    ReadOnly,
    Repair,
    Serve,
    Heal,
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
        /// read-only: check, leases, snapshots list|diff and every command without --fix; repair: what --fix adds; serve: what serve needs; heal: what serve --heal adds.
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

#[derive(Debug, Clone, Args)]
pub struct LeasesArgs {
    #[command(subcommand)]
    pub action: Option<LeasesAction>,

    #[command(flatten)]
    pub fleet: FleetArgs,

    /// Print the table, then one line per change (holder, state, transitions) until interrupted; with -o json|yaml, one LeaseChange document per change.
    #[arg(short, long)]
    pub watch: bool,

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

    /// How long to wait for the takeover (default: the lock record's lease duration plus its
    /// renew deadline, 75s for wrangler's 45s/30s, at least 30s and at most 10m)
    #[arg(long, value_name = "DURATION", value_parser = parse_wait)]
    pub timeout: Option<Duration>,

    /// Skip the target, etcd-quorum and split checks (never the permission check).
    #[arg(long)]
    pub force: bool,

    /// After a verified write, exit 1 when a finding of at least this severity remains.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// The address and port to serve the endpoints on (`:9810`: every interface, as in Go).
    #[arg(long, value_name = "ADDR:PORT", default_value = "0.0.0.0:9810", value_parser = parse_listen)]
    pub listen: std::net::SocketAddr,

    /// How to write the log on stderr: text, or one JSON object per line.
    #[arg(long, value_enum, default_value_t = crate::monitor::log::LogFormat::Text)]
    pub log_format: crate::monitor::log::LogFormat,

    #[command(flatten)]
    pub suppress: SuppressArgs,

    /// Who may read /metrics and /report: kubernetes (a bearer token the API server accepts, of an account allowed to get the path: a TokenReview and a SubjectAccessReview, cached briefly) or none (anyone who reaches the port). /healthz and /readyz are always open. docs/monitoring.md.
    #[arg(long, value_enum, value_name = "MODE", env = "K3SDOCTOR_METRICS_AUTH", default_value_t = crate::monitor::access::MetricsAuth::Kubernetes)]
    pub metrics_auth: crate::monitor::access::MetricsAuth,

    /// Repair a split unattended: off, dry-run (gates, plan and one WouldMoveLock Event per split, no write) or on (the move leases follow --fix makes, after --heal-after, when every gate holds). docs/heal.md.
    #[arg(long, value_enum, value_name = "MODE", default_value_t = crate::heal::heal_policy::HealMode::Off)]
    pub heal: crate::heal::heal_policy::HealMode,

    /// How long a split must last (on the API server's clock, across at least three evaluations) before it is healed.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = value_parsers::parse_period)]
    pub heal_after: std::time::Duration,

    /// At most one heal per this period; a split back within it is reported, not healed, and the period doubles (up to 24h; reset after a day without a split).
    #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = value_parsers::parse_period)]
    pub heal_cooldown: std::time::Duration,
}

/// Findings the operator has accepted: `check`, its fleets and `serve` report them as
/// ignored and never count them.
#[derive(Debug, Clone, Default, Args)]
pub struct SuppressArgs {
    /// Report findings with this code (on OBJECT only, e.g. node/server-1) as ignored: listed, never counted in the exit code or alerts. Repeatable.
    #[arg(long = "ignore", value_name = "CODE[=OBJECT]", value_parser = crate::diagnose::suppression::Suppression::parse)]
    pub ignore: Vec<crate::diagnose::suppression::Suppression>,

    /// A YAML file with an `ignore:` list of CODE[=OBJECT] (default, when it exists: $XDG_CONFIG_HOME/k3sdoctor/config.yaml, else ~/.config/k3sdoctor/config.yaml).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// Exit 1 when a finding of at least this severity remains.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,

    #[command(flatten)]
    pub suppress: SuppressArgs,

    #[command(flatten)]
    pub fleet: FleetArgs,
}

/// `snapshots` alone lists, as `k3s etcd-snapshot ls` does (issue 29, item 6). The list's
/// filters stay on `list` (`snapshots ls --node x`): taken by `snapshots` too, they would
/// clash with the global flags clap accepts between `snapshots` and its subcommand.
#[derive(Debug, Clone, Args)]
pub struct SnapshotsArgs {
    #[command(subcommand)]
    pub action: Option<SnapshotsAction>,
}

impl SnapshotsArgs {
    /// The action to run: bare `snapshots` is `snapshots list` with its defaults.
    pub fn action(&self) -> SnapshotsAction {
        self.action
            .clone()
            .unwrap_or(SnapshotsAction::List(SnapshotListArgs {
                fail_on: FailOn::Error,
                node: None,
                storage: None,
                failed: false,
            }))
    }
}

#[derive(Debug, Clone, Subcommand)]
pub enum SnapshotsAction {
    /// One row per snapshot: node, state, age, size, and the state of its ConfigMap entry (the default).
    #[command(visible_alias = "ls", after_long_help = SNAPSHOTS_LIST_EXAMPLES)]
    List(SnapshotListArgs),
    /// What is missing, orphaned or stale in the ConfigMap, and why; exits 1 on differences.
    #[command(after_long_help = SNAPSHOTS_DIFF_EXAMPLES)]
    Diff(SnapshotDiffArgs),
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

    /// Restore a backup that cannot be confirmed as this very ConfigMap's (it was recreated since, or the backup or the role cannot show the cluster's identity); another cluster's backup is refused even so.
    #[arg(long)]
    pub force: bool,

    /// After a verified write, exit 1 when a finding of at least this severity remains.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
}

#[derive(Debug, Clone, Args)]
pub struct SnapshotListArgs {
    /// Exit 1 when a finding of at least this severity remains.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,

    /// Only snapshots taken (or uploaded) by this node.
    #[arg(long, value_name = "NODE")]
    pub node: Option<String>,

    /// Only snapshots stored locally on their node, or in S3.
    #[arg(long, value_enum, value_name = "STORAGE")]
    pub storage: Option<SnapshotStorage>,

    /// Only failed snapshots (readyToUse false with an error).
    #[arg(long)]
    pub failed: bool,
}

/// Where a snapshot is stored, for `snapshots list --storage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SnapshotStorage {
    Local,
    S3,
}

impl SnapshotStorage {
    pub fn as_str(self) -> &'static str {
        match self {
            SnapshotStorage::Local => "local",
            SnapshotStorage::S3 => "s3",
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct SnapshotDiffArgs {
    /// Exit 1 when a finding of at least this severity remains (default: on any difference, like kubectl diff, or any error).
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOn>,
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
fn command_for_help_as(name: &str) -> clap::Command {
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

/// The executable a completion script completes: `kubectl-k3s_doctor` for the plugin (a
/// shell completes one word, and `kubectl k3s-doctor` is completed by kubectl itself).
pub fn script_name(display_name: &str) -> String {
    match display_name.strip_prefix("kubectl ") {
        Some(plugin) => format!("kubectl-{}", plugin.replace('-', "_")),
        None => display_name.to_string(),
    }
}

/// Whether we run as kubectl's completion helper for the plugin, `kubectl_complete-<plugin>`.
pub fn is_kubectl_completer(argv0: Option<&std::ffi::OsStr>) -> bool {
    argv0
        .and_then(|a| std::path::Path::new(a).file_name())
        .map(|f| f.to_string_lossy())
        .is_some_and(|f| {
            f.strip_suffix(".exe")
                .unwrap_or(&f)
                .strip_prefix("kubectl_complete-")
                .is_some_and(|plugin| !plugin.is_empty())
        })
}

/// The words to complete when this run is a completion request, not a command: kubectl's
/// plugin completion runs `kubectl_complete-k3s_doctor WORD...`, and the bash, zsh and fish
/// scripts run `k3sdoctor __complete WORD...` (Cobra's hidden command, by the same name).
pub fn completion_request(args: &[std::ffi::OsString]) -> Option<Vec<String>> {
    let words = |skip: usize| {
        args.iter()
            .skip(skip)
            .map(|w| w.to_string_lossy().into_owned())
            .collect()
    };
    if is_kubectl_completer(args.first().map(|a| a.as_os_str())) {
        return Some(words(1));
    }
    (args.get(1).is_some_and(|w| w == "__complete")).then(|| words(2))
}

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
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
        command().debug_assert();
    }

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
        assert_eq!(script_name("kubectl k3s-doctor"), "kubectl-k3s_doctor");
        assert_eq!(script_name("k3sdoctor"), "k3sdoctor");
        assert!(is_kubectl_completer(Some(OsStr::new(
            "/usr/bin/kubectl_complete-k3s_doctor"
        ))));
        assert!(!is_kubectl_completer(Some(OsStr::new(
            "kubectl-k3s_doctor"
        ))));
        assert!(!is_kubectl_completer(Some(OsStr::new("kubectl_complete-"))));
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
