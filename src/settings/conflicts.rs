//! Every pair of flags that cannot go together, refused before anything is read (exit 2), in
//! one place. Flags a command never takes are refused earlier, by the parser
//! (`cli::flag_layout`); these are the conflicts that depend on other flags.

use crate::cli::{Cli, Command, FleetArgs, GlobalArgs, LeasesAction, SnapshotsAction};
use crate::exit::Failure;
use crate::render::OutputFormat;
use crate::render::rerun::shell_quote;

const WIDE_WHERE: &str = "(-o wide adds columns to `leases`, `snapshots list`, `check` over several \
     contexts and the table `leases follow --fix` prints after the move)";

/// The first conflict of `cli`, in the order a person reads them: the output format, then
/// how many clusters, then the flags of the chosen mode.
pub(super) fn refuse(cli: &Cli, bin_name: &str) -> Result<(), Failure> {
    let global = &cli.global;
    if global.output == OutputFormat::Wide
        && let Some((command, when)) = without_wide_columns(&cli.command, global)
    {
        return Err(Failure::Refused(format!(
            "-o wide: `{bin_name} {command}`{when} has no wide columns; use -o table, json or yaml {WIDE_WHERE}"
        )));
    }
    refuse_fleet_where_unsupported(cli, bin_name)?;
    refuse_fix_on_files(cli)?;
    match &cli.command {
        Command::Leases(args) => match &args.action {
            Some(LeasesAction::Follow(_)) if args.watch => Err(Failure::Refused(
                "--watch is for `leases`; `leases follow --fix` waits for the takeover itself"
                    .into(),
            )),
            Some(LeasesAction::Follow(_)) => Ok(()),
            None if args.watch && args.fleet.selects_fleet(global) => {
                Err(Failure::Refused(format!(
                    "--watch follows one cluster; drop --all-contexts/--contexts (or the extra \
                     --context) and run one `{bin_name} --context NAME leases --watch` per cluster"
                )))
            }
            None if args.watch => refuse_watch_flags(global),
            None => refuse_fleet_flags(global, &args.fleet),
        },
        Command::Check(args) => {
            refuse_fleet_flags(global, &args.fleet)?;
            refuse_rancher_flags(global, &args.fleet, &args.rancher)
        }
        Command::Serve(args) => refuse_serve_fleet_flags(global, args),
        // The snapshot commands compare with Rancher as `check` does, one cluster at a time.
        Command::Snapshots(args) => match args.action() {
            SnapshotsAction::List(list) => {
                refuse_rancher_flags(global, &FleetArgs::default(), &list.rancher)
            }
            SnapshotsAction::Diff(diff) => {
                refuse_rancher_flags(global, &FleetArgs::default(), &diff.rancher)
            }
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

/// `serve --rancher-clusters` watches every cluster Rancher manages and repairs none.
fn refuse_serve_fleet_flags(
    global: &GlobalArgs,
    args: &crate::cli::ServeArgs,
) -> Result<(), Failure> {
    let refuse = |line: &str| Err(Failure::Refused(line.to_string()));
    match &args.rancher_clusters {
        None if args.interval.is_some() => refuse(
            "--interval sets the rounds of serve --rancher-clusters; one cluster is watched, not polled",
        ),
        Some(_) if args.heal != crate::heal::heal_policy::HealMode::Off => refuse(
            "--heal repairs the one cluster serve watches; serve --rancher-clusters only \
             reports, so drop --heal (or run one serve --heal per cluster)",
        ),
        Some(_) if global.context.len() > 1 => refuse(
            "serve --rancher-clusters reads the clusters of one Rancher: give --context once, \
             naming a context Rancher generated",
        ),
        _ => Ok(()),
    }
}

/// `--rancher-from-file` is the management side of a dump, `--rancher-context` of a live read.
fn refuse_rancher_flags(
    global: &GlobalArgs,
    fleet: &crate::cli::FleetArgs,
    rancher: &crate::cli::RancherArgs,
) -> Result<(), Failure> {
    let files = !rancher.rancher_from_file.is_empty();
    let refuse = |line: &str| Err(Failure::Refused(line.to_string()));
    if files && global.from_file.is_empty() {
        return refuse(
            "--rancher-from-file is read beside a downstream dump; add --from-file PATH with the downstream cluster's objects, or use --rancher-context NAME to read Rancher live",
        );
    }
    if files && rancher.rancher_context.is_some() {
        return refuse(
            "--rancher-context reads Rancher live and --rancher-from-file from a dump; drop one",
        );
    }
    if rancher.rancher_context.is_some() && !global.from_file.is_empty() {
        return refuse(
            "--rancher-context reads Rancher live beside a live cluster; with --from-file use --rancher-from-file PATH",
        );
    }
    if fleet.selects_fleet(global)
        && (files || rancher.rancher_context.is_some() || rancher.rancher_cluster.is_some())
    {
        return refuse(
            "--rancher-context, --rancher-from-file and --rancher-cluster apply to one cluster; each context of a fleet that is a Rancher proxy URL is compared with Rancher anyway",
        );
    }
    if rancher.rancher_cluster.is_some() && !files && rancher.rancher_context.is_none() {
        return refuse(
            "--rancher-cluster picks a cluster of a Rancher dump or --rancher-context; a proxy URL names its cluster itself",
        );
    }
    Ok(())
}

/// The commands whose `-o wide` depends on other flags, as (command, when): they refuse it
/// rather than accept it and print the same thing. Where it never applies, the parser has no
/// `wide` for that command (`cli::flag_layout`).
fn without_wide_columns(
    command: &Command,
    global: &GlobalArgs,
) -> Option<(&'static str, &'static str)> {
    match command {
        // The lease table after a verified move is the only table `follow` prints.
        Command::Leases(args) => match &args.action {
            Some(LeasesAction::Follow(f)) if !f.fix || f.no_wait => {
                Some(("leases follow", " without --fix or with --no-wait"))
            }
            _ => None,
        },
        Command::Check(args) if !args.fleet.selects_fleet(global) => Some(("check", "")),
        _ => None,
    }
}

/// Repairs write to a live cluster only.
fn refuse_fix_on_files(cli: &Cli) -> Result<(), Failure> {
    let fix = match &cli.command {
        Command::Leases(args) => match &args.action {
            // `leases follow --watch` is refused for itself first.
            Some(LeasesAction::Follow(f)) => f.fix && !args.watch,
            None => false,
        },
        Command::Snapshots(args) => match &args.action() {
            SnapshotsAction::Backfill(b) => b.fix,
            SnapshotsAction::Restore(r) => r.fix,
            SnapshotsAction::List(_) | SnapshotsAction::Diff(_) => false,
        },
        _ => false,
    };
    if fix && !cli.global.from_file.is_empty() {
        return Err(Failure::Refused(
            "--fix needs a live cluster: a dump cannot be repaired, nor can a support bundle; drop --from-file and point --kubeconfig at the cluster"
                .into(),
        ));
    }
    Ok(())
}

/// Only `check` and `leases` read several clusters, and only they stream `-o jsonl`; a
/// repair is refused for several contexts with the per-cluster command to run instead.
fn refuse_fleet_where_unsupported(cli: &Cli, bin_name: &str) -> Result<(), Failure> {
    let g = &cli.global;
    let (command, fix) = match &cli.command {
        Command::Check(_) => return Ok(()),
        Command::Leases(args) => match &args.action {
            None => return Ok(()),
            Some(LeasesAction::Follow(f)) => {
                let fix = f.fix.then_some("--fix");
                refuse_several_contexts("leases follow", fix, g, Some(&args.fleet), bin_name)?;
                refuse_fleet_flags_alone(g, &args.fleet)?;
                ("leases follow", None)
            }
        },
        Command::Snapshots(args) => match &args.action() {
            SnapshotsAction::List(_) => ("snapshots list", None),
            SnapshotsAction::Diff(_) => ("snapshots diff", None),
            SnapshotsAction::Backfill(b) => ("snapshots backfill", b.fix.then_some("--fix")),
            SnapshotsAction::Restore(r) => (
                "snapshots restore",
                r.fix.then_some("--from-backup FILE --fix"),
            ),
        },
        Command::Serve(_) => ("serve", None),
        Command::Dump(_) => ("dump", None),
        // They read no cluster: --context means nothing to them, once or many times. The
        // parser gives `-o jsonl` to check and leases only (`cli::flag_layout`).
        Command::Completions { .. }
        | Command::Man { .. }
        | Command::Rbac { .. }
        | Command::Options
        | Command::Version => return Ok(()),
    };
    refuse_several_contexts(command, fix, g, None, bin_name)
}

/// Repairs and the single-cluster commands read one cluster: several contexts there are
/// refused up front, `--fix` with a line to run per cluster.
fn refuse_several_contexts(
    command: &str,
    fix: Option<&str>,
    global: &GlobalArgs,
    fleet: Option<&FleetArgs>,
    bin_name: &str,
) -> Result<(), Failure> {
    let several =
        global.context.len() > 1 || fleet.is_some_and(|f| f.all_contexts || f.contexts.is_some());
    if !several {
        return Ok(());
    }
    let example = global.context.first().map_or("NAME", String::as_str);
    let example = shell_quote(example);
    Err(Failure::Refused(match fix {
        Some(rest) => format!(
            "--fix repairs one cluster at a time and this run selects several contexts; run it per cluster, \
             e.g. {bin_name} --context {example} {command} {rest}"
        ),
        None => format!(
            "`{bin_name} {command}` reads one cluster; pick one with --context (only check and leases read \
             several contexts)"
        ),
    }))
}

/// `check` and `leases`: the fleet flags need a fleet, and a fleet is read live, each context
/// with its own server and user.
fn refuse_fleet_flags(global: &GlobalArgs, fleet: &FleetArgs) -> Result<(), Failure> {
    refuse_fleet_flags_alone(global, fleet)?;
    if fleet.cluster_timeout.is_some() && fleet.rancher_clusters.is_none() {
        return Err(Failure::Refused(
            "--cluster-timeout bounds the clusters read through Rancher; add --rancher-clusters, \
             or drop it (each context's requests are bounded by --request-timeout)"
                .into(),
        ));
    }
    if !fleet.selects_fleet(global) {
        return Ok(());
    }
    if fleet.rancher_clusters.is_some() && global.context.len() > 1 {
        return Err(Failure::Refused(
            "--rancher-clusters reads the clusters of one Rancher: give --context once, naming a \
             context Rancher generated"
                .into(),
        ));
    }
    if !global.from_file.is_empty() {
        return Err(Failure::Refused(
            "--from-file reads one dump, which is one cluster; drop --all-contexts, --contexts and the extra \
             --context flags, or drop --from-file to read the clusters live"
                .into(),
        ));
    }
    // Each context brings its own server and user; one --server or --token for all of them
    // would read one cluster several times or act as one user everywhere.
    let flags: Vec<_> = super::connection_flags::given(&global.connection_overrides())
        .into_iter()
        .filter(|(flag, _)| *flag != "--as-group")
        .collect();
    if flags.iter().any(|(_, value)| value.is_some()) {
        let names: Vec<&str> = flags.iter().map(|(flag, _)| *flag).collect();
        let (last, rest) = names.split_last().unwrap_or((&"", &[]));
        return Err(Failure::Refused(format!(
            "{} and {last} apply to one cluster; drop them to read several contexts, or read \
             one context with them",
            rest.join(", ")
        )));
    }
    Ok(())
}

/// `--parallel`, `--ignore-unreachable` and `-o jsonl` only mean something for a fleet.
fn refuse_fleet_flags_alone(global: &GlobalArgs, fleet: &FleetArgs) -> Result<(), Failure> {
    if fleet.selects_fleet(global) {
        return Ok(());
    }
    let flag = if global.output == OutputFormat::Jsonl {
        "-o jsonl"
    } else if fleet.parallel.is_some() {
        "--parallel"
    } else if fleet.ignore_unreachable {
        "--ignore-unreachable"
    } else {
        return Ok(());
    };
    Err(Failure::Refused(format!(
        "{flag} applies to several clusters; select them with --all-contexts, --contexts REGEX or --context \
         given more than once"
    )))
}

/// What only reads a live cluster, given a dump.
pub(super) fn needs_live(what: &str) -> Failure {
    Failure::Refused(format!(
        "{what} needs a live cluster: a dump never changes; drop --from-file"
    ))
}

/// `leases --watch` follows a live cluster on the API server's clock.
fn refuse_watch_flags(global: &GlobalArgs) -> Result<(), Failure> {
    if !global.from_file.is_empty() {
        return Err(needs_live("--watch"));
    }
    if global.now.is_some() {
        return Err(Failure::Refused(
            "--watch judges freshness on the API server's clock as time passes; drop --now".into(),
        ));
    }
    Ok(())
}
