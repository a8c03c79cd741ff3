//! The `snapshots` analyser: ETCDSnapshotFiles against the `<prog>-etcd-snapshots` ConfigMap,
//! by k3s's own rules (`pkg/etcd/snapshot_controller.go`): which CRs get an entry, the key and exact value of each,
//! the 1 MiB pruning, and why something is missing.

mod entry_judge;
mod snapshot_cr_findings;
mod snapshot_dump_gap;
mod snapshot_entry_count;
mod snapshot_entry_findings;
pub(crate) mod snapshot_files;
mod snapshot_finding_context;
mod snapshot_findings;
mod snapshot_provenance;
mod snapshot_reconcile;
pub(crate) mod snapshot_reconcile_stalled;
mod snapshot_record_empty;
pub(crate) mod snapshot_s3;
mod snapshot_table_gap;
mod snapshot_writer;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use self::entry_judge::{EntryJudge, Keyed, Writer};
use self::snapshot_entry_count::EntryCount;
use self::snapshot_finding_context::Tally;
use self::snapshot_reconcile::reconcile_fate;
use self::snapshot_writer::{controller_not_writing, removal_pending};
use super::finding::{Finding, rank};
use super::leases::LeaseAnalysis;
use crate::distro::Distro;
use crate::model::cluster_state::ClusterState;
use crate::model::configmap_listing::Listed;
use crate::model::go_json::GoEscaping;
use crate::model::snapshot_entry::{S3Shape, decode, encode_for};
use crate::model::snapshot_file::SnapshotFile;
use crate::model::snapshot_key::{is_current_format, name_digest_matches};
use crate::version::ProductVersion;
pub(crate) use entry_state::{CONFIGMAP_LIMIT, EntryState, OrphanedEntry};
use snapshot_row::RowDetail;
pub(crate) use snapshot_row::SnapshotRow;

/// The controller's normal delay, with room to spare: how old a CR must be before a missing
/// controller finalizer means the controller is idle, and before a missing entry counts as
/// missing rather than pending. k3s's controller reacts to each CR change through its work
/// queue (`snapshots.OnChange` in `pkg/etcd/snapshot_controller.go`): an entry normally appears
/// within milliseconds, or seconds when the workers conflict on the ConfigMap at a snapshot
/// boundary (every server snapshots in the same second) and requeue with backoff.
const FINALIZER_GRACE: SignedDuration = SignedDuration::from_secs(60);

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SnapshotAnalysis {
    pub configmap: String,
    pub configmap_present: bool,
    pub configmap_resource_version: Option<String>,
    pub configmap_entries: usize,
    /// Sum of the byte lengths of the values: what the 1 MiB limit counts.
    pub configmap_bytes: usize,
    pub extra_metadata_configmap_present: bool,
    /// The version whose controller writes the ConfigMap (the `-etcd` holder's).
    pub writer_version: Option<String>,
    /// Whether only CRs with metadata get entries on that version (`None`: not known).
    pub entries_need_metadata: Option<bool>,
    pub s3_shape: S3Shape,
    /// The ConfigMap was read from a pasted table that shows its entry count, not its entries:
    /// the count against the snapshots that should have one (rows are then `unknown`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry_count: Option<EntryCount>,
    /// Why k3s's snapshot controller cannot be writing now, when the objects show it (a split
    /// on an affected version, no fresh `-etcd` holder, or CRs it never processed): then no
    /// entry is `pending` and no orphan waits for k3s to remove it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub controller_not_writing: Option<String>,
    /// How the writer's Go release escapes `\b` and `\f` in the values it writes.
    pub go_escaping: GoEscaping,
    /// The writer's Go release is not known: the newest escaping is assumed.
    pub go_escaping_assumed: bool,
    pub snapshots: Vec<SnapshotRow>,
    pub orphaned: Vec<OrphanedEntry>,
    /// Keys in the pre-2023 bare format.
    pub legacy_keys: Vec<String>,
    pub findings: Vec<Finding>,
}

impl SnapshotAnalysis {
    /// The exact value k3s would write for `row`'s entry: what a backfill writes for a missing
    /// or stale one. Worked out when asked for, not held by every row.
    pub(crate) fn expected_value(&self, row: &SnapshotRow) -> String {
        encode_for(row.file(), self.s3_shape, self.go_escaping)
    }

    pub(crate) fn has_differences(&self) -> bool {
        self.snapshots.iter().any(|r| r.state.is_difference())
            || !self.orphaned.is_empty()
            || self
                .entry_count
                .as_ref()
                .is_some_and(|c| c.without_entry_at_least > 0)
    }
}

pub(crate) fn analyse_snapshots(
    state: &ClusterState,
    distro: Distro,
    now: Timestamp,
    leases: &LeaseAnalysis,
) -> SnapshotAnalysis {
    let cm_name = distro.snapshots_configmap();
    let cm = state.configmap(&cm_name);
    // A pasted `kubectl get configmaps` table, read only where no object of the ConfigMap was.
    // Absent from a whole listing, or DATA 0, the ConfigMap is known empty and judged as such;
    // a count above 0 shows no keys, so the rows are `unknown` and the count is judged whole.
    let listed = state
        .configmap_listing
        .as_ref()
        .filter(|_| cm.is_none())
        .map(|l| (l.file.as_str(), l.shows(&cm_name)));
    let counted_only = match listed {
        Some((file, Listed::Entries(n))) if n > 0 => Some((file, n)),
        _ => None,
    };
    let no_data = BTreeMap::new();
    let data: &BTreeMap<String, String> = cm.map_or(&no_data, |c| &c.data);
    let writer_version = leases.verdict_version.clone();
    let known_escaping = writer_version
        .as_ref()
        .and_then(ProductVersion::go_escaping);
    let writer = writer_of(writer_version.as_ref());
    let files: &[Arc<SnapshotFile>] = state.snapshot_files.as_deref().unwrap_or_default();
    // A pasted table shows no metadata, finalizers, times or S3 settings: its rows are judged
    // on what they show (names, nodes, locations, sizes), the rest is reported as not checked.
    let from_table = state.snapshots_from_table.is_some();
    let not_writing = controller_not_writing(leases, files, now, FINALIZER_GRACE);
    let judge = EntryJudge::new(
        data,
        writer,
        from_table,
        counted_only.is_some(),
        not_writing.is_none(),
        now,
    )
    .sized(files);
    let Judged {
        rows,
        mut tally,
        live_keys,
        should_have_entry,
    } = judge_rows(&judge, files, distro);
    let orphaned = orphaned_entries(data, &rows, &live_keys, state, distro);
    let legacy_keys: Vec<String> = data
        .keys()
        .filter(|k| !is_current_format(k))
        .cloned()
        .collect();
    if from_table {
        // A row shows no finalizers (nor a creation time to start the grace period from).
        tally.without_finalizer.clear();
    } else {
        // The digest's prefix needs the S3 settings a table row lacks.
        tally.digest_mismatches = digest_mismatches(files);
    }

    let entry_count = counted_only.map(|(file, n)| EntryCount::new(file, n, should_have_entry));
    let analysis_context = snapshot_finding_context::Context {
        distro,
        state,
        leases,
        cm_name: &cm_name,
        extra_metadata_present: extra_metadata_present(state, distro),
        listed,
        entry_count: entry_count.as_ref(),
        bytes: judge.bytes,
        not_writing: not_writing.as_deref(),
    };
    let mut findings =
        snapshot_findings::findings(&analysis_context, &rows, &orphaned, &legacy_keys, &tally);
    rank(&mut findings);
    SnapshotAnalysis {
        configmap_present: cm.is_some() || matches!(listed, Some((_, Listed::Entries(_)))),
        configmap_resource_version: cm.and_then(|c| c.resource_version.clone()),
        configmap_entries: counted_only.map_or(data.len(), |(_, n)| n),
        configmap_bytes: judge.bytes,
        extra_metadata_configmap_present: analysis_context.extra_metadata_present,
        configmap: cm_name,
        writer_version: writer_version.map(|v| v.to_string()),
        entries_need_metadata: writer.need_metadata,
        s3_shape: writer.shape,
        entry_count,
        controller_not_writing: not_writing.clone(),
        go_escaping: writer.go_escaping,
        go_escaping_assumed: known_escaping.is_none(),
        snapshots: rows,
        orphaned,
        legacy_keys,
        findings,
    }
}

/// How the version that writes the entries writes them; an unknown version is assumed to
/// write as the newest releases do.
fn writer_of(version: Option<&ProductVersion>) -> Writer {
    Writer {
        need_metadata: version.and_then(ProductVersion::entries_need_metadata),
        shape: version
            .map(ProductVersion::s3_config_shape)
            .unwrap_or(S3Shape::Embedded),
        go_escaping: version
            .and_then(ProductVersion::go_escaping)
            .unwrap_or(GoEscaping::Go122),
    }
}

/// The snapshot files whose name's digest does not match what k3s derives for them.
fn digest_mismatches(files: &[Arc<SnapshotFile>]) -> Vec<Arc<SnapshotFile>> {
    files
        .iter()
        .filter(|f| !name_digest_matches(f))
        .map(Arc::clone)
        .collect()
}

/// Whether the extra-metadata ConfigMap exists, as an object or in a pasted table.
fn extra_metadata_present(state: &ClusterState, distro: Distro) -> bool {
    let name = distro.extra_metadata_configmap();
    state.configmap(&name).is_some()
        || state
            .configmap_listing
            .as_ref()
            .is_some_and(|l| matches!(l.shows(&name), Listed::Entries(_)))
}

/// Every CR's row, what the findings count of them, and the ConfigMap's keys that belong to a
/// CR k3s keeps an entry for (either of its keys): everything else in it is orphaned.
struct Judged<'a> {
    rows: Vec<SnapshotRow>,
    tally: Tally,
    live_keys: BTreeSet<&'a str>,
    /// Of a ConfigMap known only by its entry count: how many CRs should have one.
    should_have_entry: usize,
}

fn judge_rows<'a>(
    judge: &EntryJudge<'a>,
    files: &[Arc<SnapshotFile>],
    distro: Distro,
) -> Judged<'a> {
    let now = judge.now;
    let mut judged = Judged {
        rows: Vec::with_capacity(files.len()),
        tally: Tally::default(),
        live_keys: BTreeSet::new(),
        should_have_entry: 0,
    };
    for file in files {
        let Keyed {
            key,
            other_key,
            key_note,
        } = judge.keyed(file);
        // A CR whose deletion began moments ago still has its entry: k3s's controller deletes
        // the key first and then drops the CR's finalizer, so that entry is not an orphan yet.
        let removal_due =
            file.deleting && judge.writing && removal_pending(file, now, FINALIZER_GRACE);
        let keeps_entry =
            !file.deleting && (judge.eligible(file) || !judge.data.contains_key(&key));
        if keeps_entry || removal_due {
            for k in std::iter::once(&key).chain(&other_key) {
                if let Some((k, _)) = judge.data.get_key_value(k) {
                    judged.live_keys.insert(k);
                }
            }
        }
        if judge.should_have_entry(file) {
            judged.should_have_entry += 1;
        }
        let (entry_state, differences) = judge.state(file, &key);
        judged.tally.count(file, entry_state, now, FINALIZER_GRACE);
        let detail = RowDetail {
            key_note,
            differences,
        };
        let alternate = other_key.as_ref() == Some(&key);
        judged.rows.push(SnapshotRow::new(
            file,
            distro,
            entry_state,
            alternate,
            detail,
        ));
    }
    judged
}

/// The current-format keys no CR k3s keeps an entry for accounts for, with what k3s's next
/// reconcile does with each.
fn orphaned_entries(
    data: &BTreeMap<String, String>,
    rows: &[SnapshotRow],
    live_keys: &BTreeSet<&str>,
    state: &ClusterState,
    distro: Distro,
) -> Vec<OrphanedEntry> {
    let deleting_keys: BTreeSet<String> = rows
        .iter()
        .filter(|r| r.state == EntryState::Deleting)
        .map(|r| r.key())
        .collect();
    let extra_keys: BTreeMap<String, &str> = rows
        .iter()
        .filter(|r| r.state == EntryState::Extra)
        .map(|r| (r.key(), r.name()))
        .collect();
    data.iter()
        // `etcd-snapshot ls` may show one server's snapshots: a key without a row is not an orphan.
        .filter(|_| !state.snapshots_partial)
        .filter(|(k, _)| is_current_format(k) && !live_keys.contains(k.as_str()))
        .map(|(k, v)| OrphanedEntry {
            key: k.clone(),
            name: decode(v).ok().map(|e| e.name).filter(|n| !n.is_empty()),
            cr_deleting: deleting_keys.contains(k.as_str()),
            cr_without_entry: extra_keys.get(k.as_str()).map(|n| n.to_string()),
            reconcile: reconcile_fate(k, state.nodes(), distro),
        })
        .collect()
}

#[cfg(test)]
mod count_tests;
mod entry_state;
#[cfg(test)]
mod missing_row_tests;
#[cfg(test)]
mod pending_tests;
#[cfg(test)]
mod pruning_tests;
mod snapshot_row;
#[cfg(test)]
mod table_tests;
#[cfg(test)]
mod tests;
