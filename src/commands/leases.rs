//! `k3sdoctor leases`.

use super::Ui;
use super::fleet::FleetCommand;
use super::load::{Loaded, load_lease_state, require_primary};
use crate::diagnose::leases::analyse_leases;
use crate::exit::Exit;
use crate::input::dump::dump_coverage::Primary;
use crate::render::{self, OutputFormat};
use crate::report::LeaseReport;
use crate::settings::LeasesOptions;
use crate::settings::Settings;

pub(crate) fn run(settings: &Settings, opts: &LeasesOptions, ui: &mut Ui) -> anyhow::Result<Exit> {
    if let Some(fleet) = &settings.fleet {
        let analyse = |loaded: Loaded| {
            let analysis = analyse_leases(&loaded.state, loaded.distro, loaded.now.time);
            LeaseReport::new(loaded.now, analysis).failing_on(opts.fail_on)
        };
        let write_member = |out: &mut dyn std::io::Write, report: &LeaseReport, style| {
            render::findings::write_finding_list(out, &report.analysis.findings, style)
        };
        let command = FleetCommand {
            snapshots: false,
            fail_on: opts.fail_on,
            analyse: &analyse,
            write_member: &write_member,
        };
        return super::fleet::run(settings, fleet, command, ui);
    }
    let loaded = load_lease_state(&settings.source, settings.judging, ui)?;
    require_primary(&loaded, Primary::Locks)?;
    let analysis = analyse_leases(&loaded.state, loaded.distro, loaded.now.time);
    let report = LeaseReport::new(loaded.now, analysis)
        .failing_on(opts.fail_on)
        .reading(&loaded.state.bundles);
    match settings.output.format {
        format if format.is_structured() => render::write_structured(&mut ui.out, format, &report)?,
        _ if ui.quiet => {}
        format => ui.write_table_report(|out, style| {
            render::leases::write_table(out, &report, format == OutputFormat::Wide, style)
        })?,
    }
    Ok(Exit::verdict(
        opts.fail_on.is_failure(&report.analysis.findings),
    ))
}
