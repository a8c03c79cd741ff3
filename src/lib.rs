//! k3sdoctor: find and safely repair k3s/RKE2 leader-lock splits and etcd snapshot
//! ConfigMap drift. `main.rs` parses arguments and calls [`run`]; everything else lives here.

// Visibility says who uses an item: `pub` only for what main.rs and the tests reach.
#![warn(unreachable_pub)]

mod age;
mod apply;
mod build_info;
mod byte_size;
pub mod cli;
mod commands;
pub(crate) mod const_regex;
mod diagnose;
mod distro;
mod events;
mod exit;
mod follow;
mod heal;
mod input;
mod line_cap;
mod model;
mod monitor;
mod render;
mod report;
pub mod schema;
mod settings;
mod snapshots;
mod version;

#[cfg(test)]
mod proptests;

use std::io::{IsTerminal, Write as _};

use cli::{Cli, ColorChoice, Command};
use commands::Ui;
use exit::{Exit, Failure};
use render::style::Style;

/// Runs one command line and returns its exit code. Errors are printed here, once, as a
/// single line (with the cause chain under `-v`).
pub fn run(cli: Cli, bin_name: &str) -> Exit {
    let output = settings::OutputChoices::of(&cli.global);
    let color = match output.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        // The usual conventions, decided as clap decides its own: CLICOLOR_FORCE colours a
        // pipe, NO_COLOR (non-empty), CLICOLOR=0 and TERM=dumb turn colour off, and otherwise
        // a terminal gets colour and a pipe does not.
        ColorChoice::Auto => !matches!(
            anstream::AutoStream::choice(&std::io::stdout()),
            anstream::ColorChoice::Never
        ),
    };
    let stdout = render::closed_pipe::ClosedPipeTolerant::new(std::io::stdout());
    let reader_gone = stdout.reader_gone();
    let mut ui = Ui::new(
        Box::new(stdout),
        Box::new(std::io::stderr()),
        Style {
            color,
            // Leaked once per process: the name lives as long as the run.
            program: (bin_name != "k3sdoctor")
                .then(|| &*Box::leak(bin_name.to_string().into_boxed_str())),
            rerun: Some(Box::leak(Box::new(
                settings::ConnectionFlags::of(&cli).rerun(),
            ))),
            width: output_width(),
            terminal: std::io::stdout().is_terminal(),
            no_headers: output.no_headers,
            detail: output.verbose > 0,
        },
        output.verbose,
        output.quiet,
    );
    ui.reader_gone = Some(reader_gone);
    // serve sets up its own log (which takes -v into account).
    if !matches!(cli.command, Command::Serve(_)) {
        commands::verbosity::init_request_trace(output.verbose);
    }
    match dispatch(&cli, bin_name, &mut ui) {
        Ok(exit) => exit,
        Err(err) => {
            let (exit, detail) = match err.downcast_ref::<Failure>() {
                Some(f) => (f.exit(), f.detail().map(str::to_string)),
                // The cause chain, never `Debug`: library errors carry what they were given
                // (a request, a process's output) in their `Debug` form.
                None => (
                    Exit::ReadFailed,
                    Some(input::connect::redact::redact_patterns(&format!("{err:#}"))),
                ),
            };
            ui.err_line(&format!(
                "{bin_name}: error: {}",
                ui.style.with_flags(&err.to_string())
            ));
            if let (true, Some(detail)) = (output.verbose > 0, detail) {
                ui.err_line(&format!("  cause: {detail}"));
            }
            exit
        }
    }
}

/// What the command line could not be parsed into: one `k3sdoctor: error: …` line and exit 2,
/// like every other refusal; `--help` and `--version` print as clap prints them.
pub fn usage_error(usage: &cli::UsageError, bin_name: &str) -> Exit {
    let e = &usage.error;
    match cli::one_line_usage_error(usage) {
        Some(line) => {
            let _ = writeln!(std::io::stderr(), "{bin_name}: error: {line}");
            Exit::Refused
        }
        None if e.kind() == clap::error::ErrorKind::DisplayVersion => {
            let info = build_info::BuildInfo::current();
            let lines = if usage.verbose {
                info.lines(bin_name)
            } else {
                vec![info.short_line(bin_name)]
            };
            let mut out = std::io::stdout();
            for line in lines {
                let _ = writeln!(out, "{line}");
            }
            Exit::Healthy
        }
        None => {
            let _ = e.print();
            if e.exit_code() == 0 {
                Exit::Healthy
            } else {
                Exit::Refused
            }
        }
    }
}

/// The terminal's width when stdout is one; a pipe or a file gets 80 columns, the layout of
/// a standard terminal, so captured output matches what a reader saw.
fn output_width() -> usize {
    if !std::io::stdout().is_terminal() {
        return render::wrap::DEFAULT_WIDTH;
    }
    terminal_size::terminal_size_of(std::io::stdout())
        .map(|(terminal_size::Width(w), _)| usize::from(w))
        .filter(|&w| w > 0)
        .unwrap_or(render::wrap::DEFAULT_WIDTH)
}

/// Answers a completion request (`k3sdoctor __complete WORD...` from the bash, zsh and fish
/// scripts, `kubectl_complete-k3s_doctor WORD...` from kubectl): candidates on stdout in
/// Cobra's `__complete` format. Nothing else is printed, whatever the words.
pub fn complete(words: &[String]) -> Exit {
    let mut out = render::closed_pipe::ClosedPipeTolerant::new(std::io::stdout());
    match commands::completions::write_protocol(words, &mut out) {
        Ok(()) => Exit::Healthy,
        Err(_) => Exit::ReadFailed,
    }
}

fn dispatch(cli: &Cli, bin_name: &str, ui: &mut Ui) -> anyhow::Result<Exit> {
    let settings = settings::Settings::resolve(cli, bin_name)?;
    let settings = &settings;
    match &cli.command {
        Command::Leases(args) => match &args.action {
            Some(cli::LeasesAction::Follow(follow)) => {
                commands::leases_follow::run(settings, &follow.into(), ui)
            }
            None if args.watch => commands::leases_watch::run(settings, &args.into(), ui),
            None => commands::leases::run(settings, &args.into(), ui),
        },
        Command::Check(args) => commands::check::run(settings, &args.into(), ui),
        Command::Dump(args) => commands::dump::run(settings, &args.into(), ui),
        Command::Snapshots(args) => match &args.action() {
            cli::SnapshotsAction::List(list) => {
                commands::snapshots::run_list(settings, &list.into(), ui)
            }
            cli::SnapshotsAction::Diff(diff) => {
                commands::snapshots::run_diff(settings, &diff.into(), ui)
            }
            cli::SnapshotsAction::Backfill(backfill) => {
                commands::snapshots_backfill::run(settings, &backfill.into(), ui)
            }
            cli::SnapshotsAction::Restore(restore) => {
                commands::snapshots_restore::run(settings, &restore.into(), ui)
            }
        },
        Command::Serve(args) => commands::serve::run(settings, &args.into(), ui),
        Command::Completions { shell } => {
            commands::completions::write(*shell, &cli::script_name(bin_name), &mut ui.out);
            Ok(Exit::Healthy)
        }
        Command::Rbac { r#use } => commands::rbac::run(*r#use, bin_name, ui),
        Command::Options => {
            render::tolerate_closed_pipe(
                commands::options::write(bin_name, &mut ui.out).map_err(Into::into),
            )?;
            Ok(Exit::Healthy)
        }
        Command::Version => commands::version::run(settings, bin_name, ui),
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
