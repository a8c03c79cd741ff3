//! Findings about the snapshot ConfigMap's entries: missing, stale, orphaned, pruned for
//! size, withheld for lack of metadata, and in the legacy format.

use super::entry_state::{CONFIGMAP_LIMIT, EntryState, OrphanedEntry};
use super::snapshot_finding_context::{Said, Tally, all, in_state, plural};
use super::snapshot_row::SnapshotRow;
use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::diagnose::object_ref::ObjectRef;

/// `snapshot-missing-from-configmap`: the entries k3s should have written and has not.
pub(super) fn missing(said: &Said<'_>, rows: &[SnapshotRow], out: &mut Vec<Finding>) {
    let missing = in_state(said, rows, EntryState::Missing);
    if !missing.is_empty() {
        let mut f = Finding::new(
            Severity::Error,
            FindingCode::SnapshotMissingFromConfigmap,
            &said.object,
            format!(
                "{} that k3s lists should be in {}{} but {}: ",
                plural(missing.len(), "snapshot", "snapshots"),
                said.ctx.cm_name,
                said.listed_empty,
                if missing.len() == 1 {
                    "is not"
                } else {
                    "are not"
                },
            ),
        )
        .spelling_objects(missing, &said.because);
        f.remediation = match &said.cause {
            Some((_, fix)) => format!(
                "{fix} (the controller's first sync restores them); or k3sdoctor snapshots backfill --fix"
            ),
            None => "k3sdoctor snapshots backfill --fix".to_string(),
        };
        out.push(f.caused_by(said.split_code()));
    }
}

/// `snapshot-stale-in-configmap`: entries whose fields differ from their CR.
pub(super) fn stale(said: &Said<'_>, rows: &[SnapshotRow], out: &mut Vec<Finding>) {
    let stale: Vec<String> = rows
        .iter()
        .filter(|r| r.state == EntryState::Stale)
        .map(|r| {
            format!(
                "{} ({})",
                r.key(),
                r.differences()
                    .iter()
                    .map(|d| d.field.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
        .collect();
    if !stale.is_empty() {
        out.push(
            Finding::new(
                Severity::Warning,
                FindingCode::SnapshotStaleInConfigmap,
                &said.object,
                format!(
                    "{} differ from their ETCDSnapshotFile: {}",
                    plural(stale.len(), "entry", "entries"),
                    all(&stale)
                ),
            )
            .about(ObjectRef::snapshot_files(
                &rows
                    .iter()
                    .filter(|r| r.state == EntryState::Stale)
                    .map(|r| r.name().to_string())
                    .collect::<Vec<_>>(),
            ))
            .listing(&stale)
            .fix("k3sdoctor snapshots backfill --fix"),
        );
    }
}

/// `snapshot-orphaned-in-configmap`: entries without a CR behind them, the split's own apart.
pub(super) fn orphaned(said: &Said<'_>, orphaned: &[OrphanedEntry], out: &mut Vec<Finding>) {
    // Entries of CRs stuck terminating stay because the idle controller never ran its
    // OnRemove; with the split named as the cause they are its doing, not strays.
    let (held_by_deleting, strays): (Vec<&OrphanedEntry>, Vec<&OrphanedEntry>) = orphaned
        .iter()
        .partition(|o| o.cr_deleting && said.cause.is_some());
    if !held_by_deleting.is_empty() {
        let keys: Vec<String> = held_by_deleting.iter().map(|o| o.key.clone()).collect();
        out.push(
            Finding::new(
                Severity::Warning,
                FindingCode::SnapshotOrphanedInConfigmap,
                &said.object,
                format!(
                    "{} belong to ETCDSnapshotFiles stuck deleting, whose finalizer the idle controller never \
                     removes: {}",
                    plural(keys.len(), "entry", "entries"),
                    all(&keys)
                ),
            )
            .listing(&keys)
            .fix("k3sdoctor leases follow --fix (the controller then removes them and lets the CRs go)")
            .caused_by(said.split_code()),
        );
    }
    if !strays.is_empty() {
        let keys: Vec<String> = strays
            .iter()
            .map(|o| match (&o.cr_without_entry, o.cr_deleting) {
                (Some(cr), _) => format!("{} (its CR {cr} gets no entry: no metadata)", o.key),
                (None, true) => format!("{} (CR being deleted)", o.key),
                (None, false) => o.key.clone(),
            })
            .collect();
        let removed = strays.iter().filter(|o| o.reconcile.removes).count();
        let kept_why = strays
            .iter()
            .find(|o| !o.reconcile.removes)
            .map(|o| format!(", keeps {} ({})", strays.len() - removed, o.reconcile.why))
            .unwrap_or_default();
        out.push(
            Finding::new(
                Severity::Warning,
                FindingCode::SnapshotOrphanedInConfigmap,
                &said.object,
                format!(
                    "{} have no ETCDSnapshotFile behind them that k3s lists: {}. k3s's next reconcile removes \
                     {removed}{kept_why}",
                    plural(keys.len(), "entry", "entries"),
                    all(&keys)
                ),
            )
            .listing(&keys)
            .fix(if removed > 0 {
                "k3sdoctor snapshots backfill --fix --prune (removes exactly what k3s's reconcile would)"
            } else {
                "nothing to remove: k3s keeps these entries until the condition above changes"
            }),
        );
    }
}

/// `snapshot-pruned-for-size`: missing, explained by k3s's pruning at the 1 MiB limit.
pub(super) fn pruned(said: &Said<'_>, rows: &[SnapshotRow], out: &mut Vec<Finding>) {
    let pruned = in_state(said, rows, EntryState::PrunedForSize);
    if !pruned.is_empty() {
        out.push(Finding::new(
            Severity::Info,
            FindingCode::SnapshotPrunedForSize,
            &said.object,
            format!(
                "{} missing, explained by k3s dropping the oldest entries at the 1 MiB limit: each is no newer \
                 than the oldest entry left, and {} ({} of {} bytes) is near the limit (putting the entry, or \
                 every such missing entry, back would pass it, or it is within four of its largest entries of \
                 it): ",
                plural(pruned.len(), "snapshot is", "snapshots are"),
                said.ctx.cm_name,
                said.ctx.bytes,
                CONFIGMAP_LIMIT,
            ),
        )
        .spelling_objects(pruned, ""));
    }
}

/// Snapshots without metadata, which k3s gives no entry, said when metadata is in use.
pub(super) fn without_metadata(
    said: &Said<'_>,
    rows: &[SnapshotRow],
    tally: &Tally,
    out: &mut Vec<Finding>,
) {
    let no_metadata = in_state(said, rows, EntryState::NotExpected);
    if !no_metadata.is_empty() && (said.ctx.extra_metadata_present || tally.with_metadata > 0) {
        out.push(Finding::new(
            Severity::Info,
            FindingCode::SnapshotMissingFromConfigmap,
            &said.object,
            format!(
                "{} no metadata (taken while {} was absent or empty), so k3s gives {} no entry: ",
                plural(no_metadata.len(), "snapshot has", "snapshots have"),
                said.ctx.distro.extra_metadata_configmap(),
                if no_metadata.len() == 1 { "it" } else { "them" },
            ),
        )
        .spelling_objects(no_metadata, ""));
    }
}

/// `configmap-legacy-format`: pre-2023 bare keys.
pub(super) fn legacy(said: &Said<'_>, legacy_keys: &[String], out: &mut Vec<Finding>) {
    if !legacy_keys.is_empty() {
        out.push(
            Finding::new(
                Severity::Warning,
                FindingCode::ConfigmapLegacyFormat,
                &said.object,
                format!(
                    "{} use the pre-2023 bare-key format, which k3s no longer writes or updates: {}",
                    plural(legacy_keys.len(), "entry", "entries"),
                    all(legacy_keys)
                ),
            )
            .listing(legacy_keys)
            .fix(format!("once nothing reads them, remove them: kubectl -n kube-system edit configmap {}", said.ctx.cm_name)),
        );
    }
}
