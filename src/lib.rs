//! k3sdoctor: find and safely repair k3s/RKE2 leader-lock splits and etcd snapshot
//! ConfigMap drift. `main.rs` parses arguments and calls [`run`]; everything else lives here.

pub mod age;
pub mod cli;
pub mod cluster;
pub mod commands;
pub mod diagnose;
pub mod distro;
pub mod exit;
pub mod model;
pub mod render;
pub mod repair;
pub mod report;
pub mod version;

#[cfg(test)]
mod proptests;

use std::io::IsTerminal;

use cli::{Cli, ColorChoice, Command};
use commands::Ui;
use exit::{Exit, Failure};
use render::style::Style;

/// Runs one command line and returns its exit code. Errors are printed here, once, as a
/// single line (with the cause chain under `-v`).
pub fn run(cli: Cli, bin_name: &str) -> Exit {
    let color = match cli.global.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    };
    let mut ui = Ui::new(
        Box::new(std::io::stdout()),
        Box::new(std::io::stderr()),
        Style {
            color,
            // Leaked once per process: the name lives as long as the run.
            program: (bin_name != "k3sdoctor")
                .then(|| &*Box::leak(bin_name.to_string().into_boxed_str())),
            rerun: Some(Box::leak(Box::new(commands::rerun_flags(&cli.global)))),
        },
        cli.global.verbose,
        cli.global.quiet,
    );
    match dispatch(&cli, bin_name, &mut ui) {
        Ok(exit) => exit,
        Err(err) => {
            let (exit, detail) = match err.downcast_ref::<Failure>() {
                Some(f) => (f.exit(), f.detail().map(str::to_string)),
                None => (Exit::ReadFailed, Some(format!("{err:?}"))),
            };
            ui.err_line(&format!(
                "{bin_name}: error: {}",
                ui.style.with_flags(&err.to_string())
            ));
            if let (true, Some(detail)) = (cli.global.verbose > 0, detail) {
                ui.err_line(&format!("  cause: {detail}"));
            }
            exit
        }
    }
}

fn dispatch(cli: &Cli, bin_name: &str, ui: &mut Ui) -> anyhow::Result<Exit> {
    match &cli.command {
        Command::Leases(args) => match &args.action {
            Some(cli::LeasesAction::Follow(follow)) => {
                commands::leases_follow::run(&cli.global, follow, ui)
            }
            None => commands::leases::run(&cli.global, args, ui),
        },
        Command::Check(args) => commands::check::run(&cli.global, args, ui),
        Command::Snapshots(args) => match &args.action {
            cli::SnapshotsAction::List => commands::snapshots::run_list(&cli.global, ui),
            cli::SnapshotsAction::Diff => commands::snapshots::run_diff(&cli.global, ui),
            cli::SnapshotsAction::Backfill(backfill) => {
                commands::snapshots_backfill::run(&cli.global, backfill, ui)
            }
            cli::SnapshotsAction::Restore(restore) => {
                commands::snapshots_restore::run(&cli.global, restore, ui)
            }
        },
        Command::Completions { shell } => {
            commands::completions::write(*shell, bin_name, &mut ui.out);
            Ok(Exit::Healthy)
        }
        Command::Man { out_dir: None } => {
            commands::man::write_main(&mut ui.out)?;
            Ok(Exit::Healthy)
        }
        Command::Man { out_dir: Some(dir) } => {
            let written = commands::man::write_dir(dir).map_err(|e| {
                Failure::Refused(format!(
                    "cannot write man pages into {}: {e}",
                    dir.display()
                ))
            })?;
            ui.note(&format!(
                "wrote {} man pages into {}",
                written.len(),
                dir.display()
            ));
            Ok(Exit::Healthy)
        }
    }
}
