//! The `snapshots` analyser: ETCDSnapshotFiles against the `<prog>-etcd-snapshots` ConfigMap,
//! by k3s's own rules (facts §4): which CRs get an entry, the key and exact value of each,
//! the 1 MiB pruning, and why something is missing.

mod snapshot_cr_findings;
mod snapshot_dump_gap;
pub mod snapshot_entry_count;
mod snapshot_entry_findings;
pub mod snapshot_files;
pub mod snapshot_findings;
pub mod snapshot_provenance;
pub mod snapshot_reconcile;
pub mod snapshot_reconcile_stalled;
pub mod snapshot_record_empty;
pub mod snapshot_s3;
pub mod snapshot_table_gap;
pub mod snapshot_writer;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use self::snapshot_entry_count::EntryCount;
use self::snapshot_findings::Tally;
use self::snapshot_reconcile::reconcile_fate;
use self::snapshot_writer::{controller_not_writing, removal_pending};
use super::finding::{Finding, rank};
use super::leases::LeaseAnalysis;
use crate::distro::Distro;
use crate::input::ClusterState;
use crate::model::configmap_listing::Listed;
use crate::model::go_json::GoEscaping;
use crate::model::snapshot_entry::{FieldDifference, S3Shape, decode, differences, encode_for};
use crate::model::snapshot_file::SnapshotFile;
use crate::model::snapshot_key::{
    alternate_key, data_key, is_current_format, key_timestamp, name_digest_mismatch,
};
use crate::version::ProductVersion;
pub use entry_state::{CONFIGMAP_LIMIT, EntryState, OrphanedEntry};
use snapshot_row::RowDetail;
pub use snapshot_row::SnapshotRow;

/// The controller's normal delay, with room to spare: how old a CR must be before a missing
/// controller finalizer means the controller is idle, and before a missing entry counts as
/// missing rather than pending. k3s's controller reacts to each CR change through its work
/// queue (`snapshots.OnChange` in `pkg/etcd/snapshot_controller.go`): an entry normally appears
/// within milliseconds, or seconds when the workers conflict on the ConfigMap at a snapshot
/// boundary (every server snapshots in the same second) and requeue with backoff.
const FINALIZER_GRACE: SignedDuration = SignedDuration::from_secs(60);

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotAnalysis {
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
    pub fn expected_value(&self, row: &SnapshotRow) -> String {
        encode_for(row.file(), self.s3_shape, self.go_escaping)
    }

    pub fn has_differences(&self) -> bool {
        self.snapshots.iter().any(|r| r.state.is_difference())
            || !self.orphaned.is_empty()
            || self
                .entry_count
                .as_ref()
                .is_some_and(|c| c.without_entry_at_least > 0)
    }
}

pub fn analyse_snapshots(
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
    let mut should_have_entry = 0;
    let no_data = BTreeMap::new();
    let data: &BTreeMap<String, String> = cm.map_or(&no_data, |c| &c.data);
    let writer = leases.verdict_version.clone();
    let need_metadata = writer
        .as_ref()
        .and_then(ProductVersion::entries_need_metadata);
    let shape = writer
        .as_ref()
        .map(ProductVersion::s3_config_shape)
        .unwrap_or(S3Shape::Embedded);
    let known_escaping = writer.as_ref().and_then(ProductVersion::go_escaping);
    let go_escaping = known_escaping.unwrap_or(GoEscaping::Go122);
    let files: &[Arc<SnapshotFile>] = state.snapshot_files.as_deref().unwrap_or_default();
    // A pasted table shows no metadata, finalizers, times or S3 settings: its rows are judged
    // on what they show (names, nodes, locations, sizes), the rest is reported as not checked.
    let from_table = state.snapshots_from_table.is_some();
    let eligible =
        |f: &SnapshotFile| from_table || !f.metadata.is_empty() || need_metadata == Some(false);
    let not_writing = controller_not_writing(leases, files, now, FINALIZER_GRACE);
    let writing = not_writing.is_none();
    let entry_of = |f: &SnapshotFile| {
        let key = data_key(f);
        let other = alternate_key(f);
        let found = data
            .get_key_value(&key)
            .or_else(|| other.as_ref().and_then(|o| data.get_key_value(o)));
        (key, other, found)
    };

    let bytes = data.values().map(String::len).sum();
    let largest_present = data.values().map(String::len).max().unwrap_or(0);
    let oldest_present = data
        .keys()
        .filter(|k| is_current_format(k))
        .map(|k| key_timestamp(k))
        .min();
    // The bytes of every eligible entry that is absent and no newer than the oldest present
    // one: what k3s would have had to hold had it not pruned (either path, any number of rounds).
    let older_missing_bytes: usize = files
        .iter()
        .filter(|f| !f.deleting && eligible(f))
        .filter(|f| {
            let (key, _, found) = entry_of(f);
            found.is_none() && oldest_present.is_some_and(|oldest| key_timestamp(&key) <= oldest)
        })
        .map(|f| encode_for(f, shape, go_escaping).len())
        .sum();
    let mut rows = Vec::with_capacity(files.len());
    let mut tally = Tally::default();
    // The ConfigMap's keys that belong to a CR k3s keeps an entry for (either of its keys):
    // everything else in it is orphaned.
    let mut live_keys: BTreeSet<&str> = BTreeSet::new();
    for file in files {
        let (usual_key, other_key, found) = entry_of(file);
        let (key, key_note) = match (&other_key, found) {
            (Some(other), Some((found_key, _))) if found_key == other => (
                other.clone(),
                Some(format!(
                    "{} (node `s3`) is keyed {other}, not {usual_key}: k3s keys a local snapshot of a node named s3 by node name on change and by storage on reconcile",
                    file.name
                )),
            ),
            _ => (usual_key, None),
        };
        let eligible = eligible(file);
        // A CR whose deletion began moments ago still has its entry: k3s's controller deletes
        // the key first and then drops the CR's finalizer, so that entry is not an orphan yet.
        let removal_due = file.deleting && writing && removal_pending(file, now, FINALIZER_GRACE);
        if (!file.deleting && (eligible || !data.contains_key(&key))) || removal_due {
            for k in std::iter::once(&key).chain(&other_key) {
                if let Some((k, _)) = data.get_key_value(k) {
                    live_keys.insert(k);
                }
            }
        }
        let mut diffs = Vec::new();
        let entry_state = if file.deleting {
            EntryState::Deleting
        } else if counted_only.is_some() {
            if eligible && !(writing && is_young(file, now)) {
                should_have_entry += 1;
            }
            EntryState::Unknown
        } else if !eligible && data.contains_key(&key) {
            EntryState::Extra
        } else if from_table && data.contains_key(&key) {
            // The row lacks the fields the entry holds: that it has one is all a table shows.
            EntryState::Present
        } else if let Some(found) = data.get(&key) {
            // What k3s wrote is byte for byte what it would write again in the common case;
            // decoding both is only needed to say how they differ.
            let expected = encode_for(file, shape, go_escaping);
            if found != &expected {
                match (decode(&expected), decode(found)) {
                    (Ok(e), Ok(f)) => diffs = differences(&e, &f),
                    (_, Err(e)) => diffs.push(FieldDifference {
                        field: "value".into(),
                        expected: expected.clone(),
                        found: format!("(undecodable: {e})"),
                    }),
                    _ => {}
                }
            }
            if diffs.is_empty() {
                EntryState::Present
            } else {
                EntryState::Stale
            }
        } else if !eligible {
            EntryState::NotExpected
        } else {
            // Only the length is needed here; a backfill encodes the value again when it
            // writes it (`expected_value`), so no missing row holds one.
            let expected_len = encode_for(file, shape, go_escaping).len();
            if pruned_for_size(
                &key,
                expected_len,
                bytes,
                oldest_present,
                older_missing_bytes,
                largest_present,
            ) {
                EntryState::PrunedForSize
            } else if writing && is_young(file, now) {
                EntryState::Pending
            } else {
                EntryState::Missing
            }
        };
        tally.count(file, entry_state, now, FINALIZER_GRACE);
        let detail = RowDetail {
            key_note,
            differences: diffs,
        };
        let alternate = other_key.as_ref() == Some(&key);
        rows.push(SnapshotRow::new(
            file,
            distro,
            entry_state,
            alternate,
            detail,
        ));
    }
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
    let orphaned: Vec<OrphanedEntry> = data
        .iter()
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
        .collect();
    let legacy_keys: Vec<String> = data
        .keys()
        .filter(|k| !is_current_format(k))
        .cloned()
        .collect();
    if from_table {
        // A row shows no finalizers (nor a creation time to start the grace period from).
        tally.without_finalizer.clear();
    }
    tally.digest_mismatches = files
        .iter()
        // The digest's prefix needs the S3 settings a table row lacks.
        .filter(|_| !from_table)
        .filter_map(|f| name_digest_mismatch(f).map(|why| (f.name.to_string(), why)))
        .collect();

    let entry_count = counted_only.map(|(file, n)| EntryCount::new(file, n, should_have_entry));
    let analysis_context = snapshot_findings::Context {
        distro,
        state,
        leases,
        cm_name: &cm_name,
        extra_metadata_present: state
            .configmap(&distro.extra_metadata_configmap())
            .is_some()
            || state.configmap_listing.as_ref().is_some_and(|l| {
                matches!(
                    l.shows(&distro.extra_metadata_configmap()),
                    Listed::Entries(_)
                )
            }),
        listed,
        entry_count: entry_count.as_ref(),
        bytes,
        not_writing: not_writing.as_deref(),
    };
    let mut findings =
        snapshot_findings::findings(&analysis_context, &rows, &orphaned, &legacy_keys, &tally);
    rank(&mut findings);
    SnapshotAnalysis {
        configmap_present: cm.is_some() || matches!(listed, Some((_, Listed::Entries(_)))),
        configmap_resource_version: cm.and_then(|c| c.resource_version.clone()),
        configmap_entries: counted_only.map_or(data.len(), |(_, n)| n),
        configmap_bytes: bytes,
        extra_metadata_configmap_present: analysis_context.extra_metadata_present,
        configmap: cm_name,
        writer_version: writer.map(|v| v.to_string()),
        entries_need_metadata: need_metadata,
        s3_shape: shape,
        entry_count,
        controller_not_writing: not_writing.clone(),
        go_escaping,
        go_escaping_assumed: known_escaping.is_none(),
        snapshots: rows,
        orphaned,
        legacy_keys,
        findings,
    }
}

/// Created less than the controller's normal delay before `now` (a CR created after `now`, as
/// when a snapshot lands between reading the clock and listing, is young too).
fn is_young(file: &SnapshotFile, now: Timestamp) -> bool {
    file.created
        .is_some_and(|created| now.duration_since(created) < FINALIZER_GRACE)
}

/// k3s drops the oldest entries when a write would pass 1 MiB (facts §4.5): four on the first
/// retry, then 8, 12, … more, on its change path (one new entry) and on its reconcile after a
/// leader change (every entry at once, so a larger gap). A missing entry no newer than the
/// oldest present one is explained by that when putting back every such missing entry would
/// pass the limit, or when the ConfigMap is within four of the largest entries of it (the other
/// pruned entries' snapshots may be gone since).
fn pruned_for_size(
    key: &str,
    value_len: usize,
    bytes: usize,
    oldest_present: Option<i64>,
    older_missing_bytes: usize,
    largest_present: usize,
) -> bool {
    let largest = largest_present.max(value_len);
    let near_limit = bytes + value_len > CONFIGMAP_LIMIT
        || bytes + 4 * largest > CONFIGMAP_LIMIT
        || bytes + older_missing_bytes > CONFIGMAP_LIMIT;
    near_limit && oldest_present.is_some_and(|oldest| key_timestamp(key) <= oldest)
}

#[cfg(test)]
mod count_tests;
pub mod entry_state;
#[cfg(test)]
mod missing_row_tests;
pub mod snapshot_row;
#[cfg(test)]
mod table_tests;
#[cfg(test)]
mod tests;
