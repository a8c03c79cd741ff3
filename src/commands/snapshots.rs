//! `k3sdoctor snapshots list` and `snapshots diff`.

use super::Ui;
use super::load::{Loaded, load_snapshot_state, require_primary};
use crate::cli::GlobalArgs;
use crate::cluster::dump_coverage::Primary;
use crate::diagnose::leases::analyse_leases;
use crate::diagnose::snapshots::{SnapshotAnalysis, analyse_snapshots};
use crate::exit::Exit;
use crate::render::{self, OutputFormat};
use crate::report::SnapshotReport;

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

pub fn analyse(loaded: &Loaded) -> SnapshotAnalysis {
    let leases = analyse_leases(&loaded.state, loaded.distro, loaded.now.time);
    analyse_snapshots(&loaded.state, loaded.distro, loaded.now.time, &leases)
}

pub fn run_list(global: &GlobalArgs, ui: &mut Ui) -> anyhow::Result<Exit> {
    let loaded = load_snapshot_state(global, ui)?;
    require_primary(&loaded, Primary::Snapshots)?;
    note_missing_crd(&loaded, ui);
    let report = SnapshotReport::new("SnapshotList", loaded.now, analyse(&loaded));
    let written = match global.output {
        f if f.is_structured() => render::write_structured(&mut ui.out, f, &report),
        _ if ui.quiet => Ok(()),
        f => render::snapshots::write_list(&mut ui.out, &report, f == OutputFormat::Wide, ui.style)
            .map_err(Into::into),
    };
    render::tolerate_closed_pipe(written)?;
    Ok(Exit::Healthy)
}

/// Exits 1 when the ConfigMap differs from what k3s would hold, like `kubectl diff`.
pub fn run_diff(global: &GlobalArgs, ui: &mut Ui) -> anyhow::Result<Exit> {
    let loaded = load_snapshot_state(global, ui)?;
    require_primary(&loaded, Primary::Snapshots)?;
    note_missing_crd(&loaded, ui);
    let report = SnapshotReport::new("SnapshotDiff", loaded.now, analyse(&loaded));
    let written = match global.output {
        f if f.is_structured() => render::write_structured(&mut ui.out, f, &report),
        _ if ui.quiet => Ok(()),
        _ => render::snapshots::write_diff(&mut ui.out, &report, ui.style).map_err(Into::into),
    };
    render::tolerate_closed_pipe(written)?;
    Ok(if report.analysis.has_differences() {
        Exit::Findings
    } else {
        Exit::Healthy
    })
}
