//! `k3sdoctor snapshots list` and `snapshots diff`.

use super::Ui;
use super::load::{Loaded, load_snapshot_state_with_rancher, require_primary};
use crate::diagnose::finding::FailOn;
use crate::diagnose::leases::analyse_leases;
use crate::diagnose::snapshots::{SnapshotAnalysis, analyse_snapshots};
use crate::diagnose::snapshots_in_full::analyse_snapshots_in_full;
use crate::exit::Exit;
use crate::input::dump::dump_coverage::Primary;
use crate::model::snapshot_file::FileState;
use crate::render::{self, OutputFormat};
use crate::report::SnapshotReport;
use crate::settings::Settings;
use crate::settings::{SnapshotDiffOptions, SnapshotListOptions};

/// Says so when the cluster has no ETCDSnapshotFile CRD, so an empty comparison is not read
/// as a healthy one.
fn note_missing_crd(loaded: &Loaded, ui: &Ui) {
    if loaded.state.snapshot_crd_missing {
        ui.note(
            "note: the API server does not serve etcdsnapshotfiles.k3s.cattle.io: this cluster predates \
             ETCDSnapshotFile resources (releases before Oct 2023), so there is nothing to compare",
        );
    }
}

/// With `-v`, says why an entry was found under a key other than the usual one.
fn trace_key_notes(analysis: &SnapshotAnalysis, ui: &Ui) {
    for note in analysis.snapshots.iter().filter_map(|r| r.key_note()) {
        ui.trace(&format!("note: {note}"));
    }
}

pub(crate) fn analyse(loaded: &Loaded) -> SnapshotAnalysis {
    let leases = analyse_leases(&loaded.state, loaded.distro, loaded.now.time);
    analyse_snapshots(&loaded.state, loaded.distro, loaded.now.time, &leases)
}

/// The ConfigMap comparison plus every other `snapshot-*` finding `check` makes (failed
/// snapshots, stuck deletions, S3 retention, …) and Rancher's records where they were asked
/// for, so `snapshots list|diff` show what `check` says about snapshots. Why Rancher's side
/// was not compared is a note, as `check` lists it under "not checked".
fn analyse_with_snapshot_findings(loaded: &Loaded, ui: &Ui) -> SnapshotAnalysis {
    let (analysis, rancher) =
        analyse_snapshots_in_full(&loaded.state, loaded.distro, loaded.now.time);
    if let Some(note) = rancher.filter(|r| !r.checked).and_then(|r| r.note) {
        ui.note(&format!("note: not compared with Rancher: {note}"));
    }
    analysis
}

/// `--node`, `--storage` and `--failed` choose the rows; the findings stay whole, since they
/// judge the cluster.
fn filter_rows(analysis: &mut SnapshotAnalysis, opts: &SnapshotListOptions) {
    analysis.snapshots.retain(|r| {
        opts.node.as_ref().is_none_or(|n| r.node() == n)
            && opts.storage.is_none_or(|s| r.storage() == s.as_str())
            && (!opts.failed || r.file_state() == FileState::Failed)
    });
}

pub(crate) fn run_list(
    settings: &Settings,
    opts: &SnapshotListOptions,
    ui: &mut Ui,
) -> anyhow::Result<Exit> {
    let loaded = load_snapshot_state_with_rancher(
        &settings.source,
        settings.judging,
        &settings.rancher,
        ui,
    )?;
    require_primary(&loaded, Primary::Snapshots)?;
    note_missing_crd(&loaded, ui);
    let mut analysis = analyse_with_snapshot_findings(&loaded, ui);
    filter_rows(&mut analysis, opts);
    let report = SnapshotReport::new("SnapshotList", loaded.now, analysis)
        .failing_on(opts.fail_on)
        .reading(&loaded.state.bundles);
    trace_key_notes(&report.analysis, ui);
    let written = match settings.output.format {
        f if f.is_structured() => render::write_structured(&mut ui.out, f, &report),
        _ if ui.quiet => Ok(()),
        f => ui.write_table_report(|out, style| {
            render::snapshots::write_list(out, &report, f == OutputFormat::Wide, style)
        }),
    };
    render::tolerate_closed_pipe(written)?;
    Ok(Exit::verdict(
        opts.fail_on.is_failure(&report.analysis.findings),
    ))
}

/// Exits 1 when the ConfigMap differs from what k3s would hold, like `kubectl diff`, or on
/// an error finding (a summary that counts errors must not come with exit 0); `--fail-on`
/// replaces that rule with the severity threshold the other commands use.
pub(crate) fn run_diff(
    settings: &Settings,
    opts: &SnapshotDiffOptions,
    ui: &mut Ui,
) -> anyhow::Result<Exit> {
    let loaded = load_snapshot_state_with_rancher(
        &settings.source,
        settings.judging,
        &settings.rancher,
        ui,
    )?;
    require_primary(&loaded, Primary::Snapshots)?;
    note_missing_crd(&loaded, ui);
    let report = SnapshotReport::new(
        "SnapshotDiff",
        loaded.now,
        analyse_with_snapshot_findings(&loaded, ui),
    )
    .failing_on(opts.fail_on.unwrap_or(FailOn::Error))
    .reading(&loaded.state.bundles);
    trace_key_notes(&report.analysis, ui);
    let failed = match opts.fail_on {
        Some(fail_on) => fail_on.is_failure(&report.analysis.findings),
        None => {
            report.analysis.has_differences() || FailOn::Error.is_failure(&report.analysis.findings)
        }
    };
    let written = match settings.output.format {
        f if f.is_structured() => {
            render::write_structured(&mut ui.out, f, &report.only_differences())
        }
        _ if ui.quiet => Ok(()),
        _ => ui.write_table_report(|out, style| render::snapshots::write_diff(out, &report, style)),
    };
    render::tolerate_closed_pipe(written)?;
    Ok(if failed {
        Exit::Findings
    } else {
        Exit::Healthy
    })
}
