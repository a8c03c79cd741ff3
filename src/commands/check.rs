//! `k3sdoctor check`: every analyser at once, for people, scripts and monitoring.

use super::Ui;
use super::fleet::FleetCommand;
use super::load::{Loaded, load_check_state, require_primary};
use crate::diagnose::check::analyse_check;
use crate::exit::Exit;
use crate::input::dump::dump_coverage::Primary;
use crate::render;
use crate::report::CheckReport;
use crate::settings::CheckOptions;
use crate::settings::Settings;

pub(crate) fn run(settings: &Settings, opts: &CheckOptions, ui: &mut Ui) -> anyhow::Result<Exit> {
    let suppressions = super::suppressions::suppressions(&opts.suppress)?;
    if let Some(fleet) = &settings.fleet {
        let analyse = |loaded: Loaded| {
            let analysis = analyse_check(&loaded.state, loaded.distro, loaded.now.time);
            let analysis = suppressions.apply(analysis);
            CheckReport::new(loaded.now, analysis).failing_on(opts.fail_on)
        };
        let write_member = |out: &mut dyn std::io::Write, report: &CheckReport, style| {
            render::check::write_linked_findings(out, &report.analysis.findings, style)
        };
        let command = FleetCommand {
            snapshots: true,
            fail_on: opts.fail_on,
            analyse: &analyse,
            write_member: &write_member,
        };
        return super::fleet::run(settings, fleet, command, ui);
    }
    let loaded = load_check_state(&settings.source, settings.judging, &settings.rancher, ui)?;
    require_primary(&loaded, Primary::Anything)?;
    let analysis = suppressions.apply(analyse_check(&loaded.state, loaded.distro, loaded.now.time));
    let report = CheckReport::new(loaded.now, analysis)
        .failing_on(opts.fail_on)
        .reading(&loaded.state.bundles);
    let written = match settings.output.format {
        f if f.is_structured() => render::write_structured(&mut ui.out, f, &report),
        _ if ui.quiet => Ok(()),
        _ => render::check::write_check(&mut ui.out, &report, ui.style).map_err(Into::into),
    };
    render::tolerate_closed_pipe(written)?;
    Ok(Exit::verdict(
        opts.fail_on.is_failure(&report.analysis.all_findings()),
    ))
}
