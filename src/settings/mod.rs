//! Settings resolved once from the parsed command line, the way ripgrep's `HiArgs` is built
//! from its `LowArgs`: raw flags go in, the values the commands act on come out, and every
//! conflict between flags is refused here, before anything is read. Below the command entry
//! points nothing sees clap's types.

mod command_options;
mod conflicts;
mod connection_flags;
mod source;

pub(crate) use command_options::{
    BackfillOptions, CheckOptions, DumpOptions, FollowOptions, LeasesOptions, RestoreOptions,
    ServeOptions, SnapshotDiffOptions, SnapshotListOptions, SuppressOptions,
};
pub(crate) use connection_flags::ConnectionFlags;
pub(crate) use source::{Judging, Source};

use crate::cli::{Cli, ColorChoice, Command, FleetArgs, GlobalArgs, SnapshotsAction};
use crate::exit::Failure;
use crate::input::connect::ConnectOptions;
use crate::input::limits::BundleLimits;
use crate::input::rancher::RancherChoice;
use crate::render::OutputFormat;

/// Everything a run needs to know from its command line, conflicts settled.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// Where the cluster state comes from: a live API server or files.
    pub source: Source,
    /// Several contexts of the kubeconfig (`check` and `leases` only), else one cluster.
    pub fleet: Option<FleetSelection>,
    pub output: OutputChoices,
    pub judging: Judging,
    /// The connection flags as given, repeated in every command the run suggests.
    pub connection: ConnectionFlags,
    /// Where Rancher's management cluster is read from (`check`); auto-detected live.
    pub rancher: RancherChoice,
}

/// Which contexts a fleet run reads, and how. A fleet is always read live (`conflicts`
/// refuses it with `--from-file` and with one cluster's connection flags), so it carries the
/// two connection settings it uses itself.
#[derive(Debug, Clone)]
pub(crate) struct FleetSelection {
    /// `--kubeconfig`, else the files kubectl would read.
    pub kubeconfig: Option<std::path::PathBuf>,
    /// `--request-timeout` for each request to each cluster.
    pub request_timeout: Option<std::time::Duration>,
    pub all_contexts: bool,
    pub pattern: Option<regex::Regex>,
    /// `--context` given more than once (once, with `rancher_clusters`: the Rancher context).
    pub names: Vec<String>,
    /// `--rancher-clusters [REGEX]`: the clusters Rancher manages instead of contexts.
    pub rancher_clusters: Option<regex::Regex>,
    pub parallel: usize,
    /// `--cluster-timeout`: how long a cluster behind Rancher may take to answer first.
    pub cluster_timeout: Option<std::time::Duration>,
    pub ignore_unreachable: bool,
}

/// How the run prints.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OutputChoices {
    pub format: OutputFormat,
    pub verbose: u8,
    pub quiet: bool,
    pub no_headers: bool,
    pub color: ColorChoice,
}

impl OutputChoices {
    /// Output has no conflicts to settle, and is known before anything else: the error of a
    /// refused command line is printed as these choices say.
    pub(crate) fn of(global: &GlobalArgs) -> OutputChoices {
        OutputChoices {
            format: global.output,
            verbose: global.verbose,
            quiet: global.quiet,
            no_headers: global.no_headers,
            color: global.color,
        }
    }
}

impl Settings {
    /// The settings of `cli`, or the refusal of its first conflicting pair of flags (exit 2).
    pub(crate) fn resolve(cli: &Cli, bin_name: &str) -> Result<Settings, Failure> {
        conflicts::refuse(cli, bin_name)?;
        let global = &cli.global;
        Ok(Settings {
            source: source_of(global),
            fleet: fleet_of(cli),
            output: OutputChoices::of(global),
            judging: Judging {
                now: global.now,
                distro: source::explicit_distro(global.distro),
            },
            connection: ConnectionFlags::of(cli),
            rancher: rancher_of(cli),
        })
    }

    /// The connection options of a command that only reads live (`serve`, `leases --watch`):
    /// the parser or `conflicts` refuse `--from-file` for them, so this refusal is the last
    /// word rather than a silent fall back to the default kubeconfig.
    pub(crate) fn live(&self, what: &str) -> Result<&ConnectOptions, Failure> {
        match &self.source {
            Source::Live(options) => Ok(options),
            Source::Files { .. } => Err(conflicts::needs_live(what)),
        }
    }
}

fn source_of(global: &GlobalArgs) -> Source {
    if !global.from_file.is_empty() {
        return Source::Files {
            paths: global.from_file.clone(),
            limits: BundleLimits {
                max_bytes: global.max_bundle_size,
                max_entries: global.max_bundle_entries,
            },
        };
    }
    Source::Live(ConnectOptions {
        kubeconfig: global.kubeconfig.clone(),
        context: global.single_context().map(str::to_string),
        overrides: global.connection_overrides(),
        request_timeout: global.request_timeout.0,
    })
}

fn fleet_of(cli: &Cli) -> Option<FleetSelection> {
    // serve takes only --rancher-clusters of the fleet flags; an unreadable cluster is a
    // metric there, never the end of the process.
    let serve_fleet;
    let fleet: &FleetArgs = match &cli.command {
        Command::Check(args) => &args.fleet,
        Command::Leases(args) if args.action.is_none() && !args.watch => &args.fleet,
        Command::Serve(args) => {
            serve_fleet = FleetArgs {
                rancher_clusters: args.rancher_clusters.clone(),
                ignore_unreachable: true,
                ..FleetArgs::default()
            };
            &serve_fleet
        }
        _ => return None,
    };
    fleet.selects_fleet(&cli.global).then(|| FleetSelection {
        kubeconfig: cli.global.kubeconfig.clone(),
        request_timeout: cli.global.request_timeout.0,
        all_contexts: fleet.all_contexts,
        pattern: fleet.contexts.clone(),
        names: cli.global.context.clone(),
        rancher_clusters: fleet.rancher_clusters.clone(),
        parallel: usize::from(fleet.parallel.unwrap_or(FleetArgs::DEFAULT_PARALLEL)),
        cluster_timeout: fleet.cluster_timeout(),
        ignore_unreachable: fleet.ignore_unreachable,
    })
}

fn rancher_of(cli: &Cli) -> RancherChoice {
    let flags = match &cli.command {
        Command::Check(args) => args.rancher.clone(),
        Command::Snapshots(args) => match args.action() {
            SnapshotsAction::List(list) => list.rancher,
            SnapshotsAction::Diff(diff) => diff.rancher,
            _ => return RancherChoice::default(),
        },
        _ => return RancherChoice::default(),
    };
    RancherChoice {
        context: flags.rancher_context,
        files: flags.rancher_from_file,
        cluster: flags.rancher_cluster,
    }
}
