//! `check` and `leases` over several contexts of a kubeconfig (each cluster read with its own
//! client) or the clusters of one Rancher (all on the Rancher's one client): at most
//! `--parallel` at once, each request under `--request-timeout` and a Rancher cluster's first
//! answer under `--cluster-timeout`, so an unreachable cluster costs only its own timeout. The
//! verdicts are the single-cluster ones.

use std::io::IsTerminal;

use futures_util::StreamExt;
use serde::Serialize;

use super::Ui;
use super::fleet_members;
pub(crate) use super::fleet_members::FleetCommand;
use super::load::runtime;
use crate::diagnose::fleet::{FleetMember, fleet_exit};
use crate::exit::Exit;
use crate::render::fleet::{write_fleet, write_json_line};
use crate::render::style::Style;
use crate::render::{self, OutputFormat};
use crate::report::FleetReport;
use crate::settings::{FleetSelection, Settings};

pub(crate) fn run<R: FleetMember + Serialize>(
    settings: &Settings,
    fleet: &FleetSelection,
    command: FleetCommand<'_, R>,
    ui: &mut Ui,
) -> anyhow::Result<Exit> {
    let runtime = runtime()?;
    let members = {
        let ui: &Ui = ui;
        let trace = |line: &str| ui.trace(line);
        runtime.block_on(fleet_members::select(
            settings,
            fleet,
            command.snapshots,
            &trace,
        ))?
    };
    let parallel = fleet.parallel;
    ui.trace(&format!(
        "reading {}, {parallel} at a time",
        members.origin()
    ));
    let progress = progress_bar(ui, members.len());
    let label = ui.style.program.unwrap_or("k3sdoctor");
    // The streamed lines go to stdout while the reads, which trace through `ui`, are in flight.
    let mut out = std::mem::replace(&mut ui.out, Box::new(std::io::sink()));
    let ui_ref: &Ui = ui;
    let member_trace = |line: &str| ui_ref.trace(line);
    let reading = async {
        let mut entries = Vec::with_capacity(members.len());
        let mut reads = futures_util::stream::iter(0..members.len())
            .map(|index| {
                fleet_members::read_one(&members, index, settings, fleet, &command, &member_trace)
            })
            .buffer_unordered(parallel);
        while let Some((entry, notes)) = reads.next().await {
            let report_line = |line: &str| match &progress {
                Some(bar) => bar.suspend(|| ui_ref.err_line(line)),
                None => ui_ref.err_line(line),
            };
            for note in notes.iter().filter(|_| !ui_ref.quiet) {
                report_line(&format!("context {}: {note}", entry.context));
            }
            if let Some(error) = &entry.error {
                if !fleet.ignore_unreachable {
                    report_line(&format!(
                        "{label}: error: context {}: {error}",
                        entry.context
                    ));
                } else if !ui_ref.quiet {
                    report_line(&format!(
                        "{label}: warning: context {}: {error}",
                        entry.context
                    ));
                }
            }
            if settings.output.format == OutputFormat::Jsonl {
                render::tolerate_closed_pipe(write_json_line(&mut out, &entry))?;
            }
            if let Some(bar) = &progress {
                bar.inc(1);
            }
            entries.push(entry);
        }
        anyhow::Ok(entries)
    };
    let entries = runtime.block_on(reading);
    ui.out = out;
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    let report = FleetReport::new(entries?, command.fail_on, fleet.ignore_unreachable);
    let written = match settings.output.format {
        OutputFormat::Jsonl => Ok(()),
        f if f.is_structured() => render::write_structured(&mut ui.out, f, &report),
        _ if ui.quiet => Ok(()),
        f => {
            let base = ui.style;
            let style_for =
                |context: &str| context_style(settings, context, members.server_for(context), base);
            ui.write_table_report(|out, style| {
                write_fleet(
                    out,
                    &report,
                    f == OutputFormat::Wide,
                    style,
                    &style_for,
                    command.write_member,
                )
            })
        }
    };
    render::tolerate_closed_pipe(written)?;
    Ok(fleet_exit(
        &report.entries,
        command.fail_on,
        fleet.ignore_unreachable,
    ))
}

/// Suggested commands in a cluster's findings name that cluster's context (a Rancher
/// cluster: the Rancher context and the cluster's proxy URL).
fn context_style(settings: &Settings, context: &str, server: Option<&str>, style: Style) -> Style {
    let flags = match server {
        Some(server) => settings
            .connection
            .rerun_for_server(settings.rancher.context.as_deref(), server),
        None => settings.connection.rerun_for(Some(context)),
    };
    Style {
        // One small value per context, alive for the rest of this short process, as the
        // run's own flags are (`lib.rs`); `Style` stays `Copy`.
        rerun: Some(Box::leak(Box::new(flags))),
        ..style
    }
}

/// Clusters done / total, on a terminal only, and not under `-q` or `-v` (whose lines it
/// would tear).
fn progress_bar(ui: &Ui, total: usize) -> Option<indicatif::ProgressBar> {
    if ui.quiet || ui.verbose > 0 || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(total as u64),
        indicatif::ProgressDrawTarget::stderr(),
    );
    if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} clusters read")
    {
        bar.set_style(style);
    }
    // Drawn at once: `0/N` says the run has started even before the first cluster answers.
    bar.tick();
    Some(bar)
}
