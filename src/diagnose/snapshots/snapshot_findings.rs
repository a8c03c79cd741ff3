//! Findings of the snapshot analyser, each with its cause where one is known: a missing
//! entry on a cluster whose locks are split on an affected version is that bug, not a
//! reason to hand-edit the ConfigMap.

use super::entry_state::OrphanedEntry;
use super::snapshot_cr_findings as crs;
use super::snapshot_dump_gap::dump_gap;
use super::snapshot_entry_count;
use super::snapshot_entry_findings as entries;
use super::snapshot_finding_context::{Context, Said, Tally};
use super::snapshot_row::SnapshotRow;
use crate::diagnose::finding::Finding;

pub(super) fn findings(
    ctx: &Context<'_>,
    rows: &[SnapshotRow],
    orphaned: &[OrphanedEntry],
    legacy_keys: &[String],
    tally: &Tally,
) -> Vec<Finding> {
    let mut out = pasted_table_gaps(ctx);
    if let Some(gap) = dump_gap(ctx) {
        out.push(gap);
        return out;
    }
    let said = Said::new(ctx);
    entry_count(&said, &mut out);
    entries::missing(&said, rows, &mut out);
    entries::stale(&said, rows, &mut out);
    entries::orphaned(&said, orphaned, &mut out);
    entries::pruned(&said, rows, &mut out);
    entries::without_metadata(&said, rows, tally, &mut out);
    crs::controller_idle(&said, tally, &mut out);
    crs::digest_mismatch(&said, tally, &mut out);
    entries::legacy(&said, legacy_keys, &mut out);
    out
}

/// What a pasted table of snapshots or ConfigMaps cannot show, said once.
fn pasted_table_gaps(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(file) = &ctx.state.snapshots_from_table {
        out.push(super::snapshot_table_gap::table_gap(
            file,
            ctx.state.snapshots_partial,
        ));
    }
    if let Some((file, listed)) = ctx.listed {
        let should_have = ctx.entry_count.map(|c| c.should_have_entry);
        let judged = should_have.filter(|_| ctx.state.snapshot_files.is_some());
        out.extend(snapshot_entry_count::table_gap(
            file,
            ctx.cm_name,
            listed,
            judged,
        ));
    }
    out
}

/// A pasted ConfigMap table's entry count judged whole, when it is all the table shows.
fn entry_count(said: &Said<'_>, out: &mut Vec<Finding>) {
    let ctx = said.ctx;
    if let Some(count) = ctx.entry_count {
        out.extend(
            snapshot_entry_count::short_count(
                &said.object,
                ctx.cm_name,
                count,
                &said.because,
                ctx.state.snapshots_from_table.is_some()
                    && ctx
                        .leases
                        .verdict_version
                        .as_ref()
                        .and_then(|v| v.entries_need_metadata())
                        != Some(false),
            )
            .map(|f| f.caused_by(said.split_code())),
        );
    }
}
