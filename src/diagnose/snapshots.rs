//! The `snapshots` analyser: ETCDSnapshotFiles against the `<prog>-etcd-snapshots` ConfigMap,
//! by k3s's own rules (facts §4): which CRs get an entry, the key and exact value of each,
//! the 1 MiB pruning, and why something is missing.

use std::collections::{BTreeMap, BTreeSet};

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use super::finding::{Finding, rank};
use super::leases::LeaseAnalysis;
use super::snapshot_findings::{self, Tally};
use super::snapshot_reconcile::{ReconcileFate, reconcile_fate};
use crate::cluster::ClusterState;
use crate::distro::Distro;
use crate::model::go_json::GoEscaping;
use crate::model::snapshot_entry::{FieldDifference, S3Shape, decode, differences, encode_for};
use crate::model::snapshot_file::{FileState, SnapshotFile};
use crate::model::snapshot_key::{
    alternate_key, data_key, is_current_format, key_timestamp, name_digest_mismatch,
};
use crate::version::ProductVersion;

/// The apiserver's limit on the sum of a ConfigMap's values (wire sample 072).
pub const CONFIGMAP_LIMIT: usize = 1_048_576;

/// The controller's normal delay, with room to spare: how old a CR must be before a missing
/// controller finalizer means the controller is idle, and before a missing entry counts as
/// missing rather than pending. k3s's controller reacts to each CR change through its work
/// queue (`snapshots.OnChange` in `pkg/etcd/snapshot_controller.go`): an entry normally appears
/// within milliseconds, or seconds when the workers conflict on the ConfigMap at a snapshot
/// boundary (every server snapshots in the same second) and requeue with backoff.
const FINALIZER_GRACE: SignedDuration = SignedDuration::from_secs(60);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EntryState {
    /// The ConfigMap holds what k3s would write.
    Present,
    /// It should have an entry and has none.
    Missing,
    /// It should have an entry and has none yet, but the CR is younger than the controller's
    /// normal delay (a minute): k3s writes it any moment. Never a difference or a finding.
    Pending,
    /// It has an entry whose fields differ from the CR.
    Stale,
    /// Missing, explained by k3s's pruning of the oldest entries at the 1 MiB limit.
    PrunedForSize,
    /// k3s writes no entry for it (no metadata on this version); none is there.
    NotExpected,
    /// k3s writes no entry for it on this version, yet one is there: its reconcile treats the
    /// entry as having no CR (listed with the orphans).
    Extra,
    /// Being deleted: k3s removes its entry.
    Deleting,
}

impl EntryState {
    pub fn label(self) -> &'static str {
        match self {
            EntryState::Present => "present",
            EntryState::Missing => "MISSING",
            EntryState::Pending => "pending",
            EntryState::Stale => "STALE",
            EntryState::PrunedForSize => "pruned (size)",
            EntryState::NotExpected => "not expected",
            EntryState::Extra => "extra",
            EntryState::Deleting => "deleting",
        }
    }

    /// A difference `snapshots diff` exits 1 for (like `kubectl diff`).
    pub fn is_difference(self) -> bool {
        matches!(self, EntryState::Missing | EntryState::Stale)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotRow {
    pub name: String,
    pub node: String,
    pub storage: &'static str,
    /// `spec.snapshotName`: the file name `k3s etcd-snapshot ls` shows.
    pub snapshot_name: String,
    /// `spec.location`: `file:///…` or `s3://bucket/key`; empty for a failed save.
    pub location: String,
    /// ready, failed, terminating or pending (`state` is the ConfigMap entry's).
    pub file_state: FileState,
    /// `etcd.<prog>.cattle.io/snapshot-token-hash`, when k3s set one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_hash: Option<String>,
    /// `status.error.message` of a failed snapshot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub created: Option<Timestamp>,
    pub size: Option<i64>,
    pub ready: bool,
    pub key: String,
    /// Why the entry was found under a key other than the usual one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_note: Option<String>,
    pub state: EntryState,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<FieldDifference>,
    pub finalizer: bool,
    /// The exact value k3s would write, for the entries a backfill writes.
    #[serde(skip)]
    pub expected_value: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrphanedEntry {
    pub key: String,
    /// The file name inside the value, when it decodes.
    pub name: Option<String>,
    /// The CR behind the key is being deleted (k3s removes the key when it is done).
    pub cr_deleting: bool,
    /// The CR that has this key but gets no entry on this version (no metadata).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cr_without_entry: Option<String>,
    /// What k3s's next reconcile does with the entry.
    pub reconcile: ReconcileFate,
}

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
    pub fn has_differences(&self) -> bool {
        self.snapshots.iter().any(|r| r.state.is_difference()) || !self.orphaned.is_empty()
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
    let data: BTreeMap<String, String> = cm.map(|c| c.data.clone()).unwrap_or_default();
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
    let files: &[SnapshotFile] = state.snapshot_files.as_deref().unwrap_or_default();

    let bytes = data.values().map(String::len).sum();
    let oldest_present = data
        .keys()
        .filter(|k| is_current_format(k))
        .map(|k| key_timestamp(k))
        .min();
    // The bytes of every eligible entry that is absent and no newer than the oldest present
    // one: what k3s would have had to hold had it not pruned (either path, any number of rounds).
    // Each CR's keys and entry, worked out once: `serve` runs this over thousands of CRs.
    let keys: Vec<(String, Option<String>)> = files
        .iter()
        .map(|f| (data_key(f), alternate_key(f)))
        .collect();
    let expected: Vec<String> = files
        .iter()
        .map(|f| encode_for(f, shape, go_escaping))
        .collect();
    let older_missing_bytes: usize = files
        .iter()
        .zip(&keys)
        .zip(&expected)
        .filter(|((f, _), _)| {
            !f.deleting && (!f.metadata.is_empty() || need_metadata == Some(false))
        })
        .filter(|((_, (key, other)), _)| {
            !data.contains_key(key)
                && other.as_ref().is_none_or(|k| !data.contains_key(k))
                && oldest_present.is_some_and(|oldest| key_timestamp(key) <= oldest)
        })
        .map(|(_, value)| value.len())
        .sum();
    let mut rows = Vec::new();
    let mut tally = Tally::default();
    for ((file, (usual_key, other_key)), expected_value) in files.iter().zip(&keys).zip(expected) {
        let usual_key = usual_key.clone();
        let (key, key_note) = match other_key {
            Some(other) if !data.contains_key(&usual_key) && data.contains_key(other) => (
                other.clone(),
                Some(format!(
                    "{} (node `s3`) is keyed {other}, not {usual_key}: k3s keys a local snapshot of a node named s3 by node name on change and by storage on reconcile",
                    file.name
                )),
            ),
            _ => (usual_key, None),
        };
        let eligible = !file.metadata.is_empty() || need_metadata == Some(false);
        let mut diffs = Vec::new();
        let entry_state = if file.deleting {
            EntryState::Deleting
        } else if !eligible && data.contains_key(&key) {
            EntryState::Extra
        } else if let Some(found) = data.get(&key) {
            // What k3s wrote is byte for byte what it would write again in the common case;
            // decoding both is only needed to say how they differ.
            if found != &expected_value {
                match (decode(&expected_value), decode(found)) {
                    (Ok(e), Ok(f)) => diffs = differences(&e, &f),
                    (_, Err(e)) => diffs.push(FieldDifference {
                        field: "value".into(),
                        expected: expected_value.clone(),
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
        } else if pruned_for_size(
            &key,
            expected_value.len(),
            bytes,
            oldest_present,
            older_missing_bytes,
            &data,
        ) {
            EntryState::PrunedForSize
        } else if is_young(file, now) {
            EntryState::Pending
        } else {
            EntryState::Missing
        };
        tally.count(file, entry_state, now, FINALIZER_GRACE);
        rows.push(SnapshotRow {
            name: file.name.clone(),
            node: file.node_name.clone(),
            storage: if file.in_s3(distro) { "s3" } else { "local" },
            snapshot_name: file.snapshot_name.clone(),
            location: file.location.clone(),
            file_state: file.file_state(),
            token_hash: file.token_hash(distro).map(str::to_string),
            error: file.error.as_ref().and_then(|e| e.message.clone()),
            created: file.taken_at(),
            size: file.size_bytes(),
            ready: file.ready_to_use,
            key,
            key_note,
            state: entry_state,
            differences: diffs,
            finalizer: file.has_controller_finalizer(),
            expected_value,
        });
    }
    // Both keys k3s may use for a CR belong to it: neither is an orphan.
    let keys_of: BTreeMap<&str, Vec<&String>> = files
        .iter()
        .zip(&keys)
        .map(|(f, (usual, other))| {
            (
                f.name.as_str(),
                std::iter::once(usual).chain(other).collect(),
            )
        })
        .collect();
    let live_keys: BTreeSet<&str> = rows
        .iter()
        .filter(|r| !matches!(r.state, EntryState::Deleting | EntryState::Extra))
        .flat_map(|r| keys_of.get(r.name.as_str()).into_iter().flatten())
        .map(|key| key.as_str())
        .collect();
    let deleting_keys: BTreeSet<&str> = rows
        .iter()
        .filter(|r| r.state == EntryState::Deleting)
        .map(|r| r.key.as_str())
        .collect();
    let extra_keys: BTreeMap<&str, &str> = rows
        .iter()
        .filter(|r| r.state == EntryState::Extra)
        .map(|r| (r.key.as_str(), r.name.as_str()))
        .collect();
    let orphaned: Vec<OrphanedEntry> = data
        .iter()
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
    tally.digest_mismatches = files
        .iter()
        .filter_map(|f| name_digest_mismatch(f).map(|why| (f.name.clone(), why)))
        .collect();

    let analysis_context = snapshot_findings::Context {
        distro,
        state,
        leases,
        cm_name: &cm_name,
        extra_metadata_present: state
            .configmap(&distro.extra_metadata_configmap())
            .is_some(),
        bytes,
    };
    let mut findings =
        snapshot_findings::findings(&analysis_context, &rows, &orphaned, &legacy_keys, &tally);
    rank(&mut findings);
    SnapshotAnalysis {
        configmap_present: cm.is_some(),
        configmap_resource_version: cm.and_then(|c| c.resource_version.clone()),
        configmap_entries: data.len(),
        configmap_bytes: bytes,
        extra_metadata_configmap_present: analysis_context.extra_metadata_present,
        configmap: cm_name,
        writer_version: writer.map(|v| v.to_string()),
        entries_need_metadata: need_metadata,
        s3_shape: shape,
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
    data: &BTreeMap<String, String>,
) -> bool {
    let largest = data
        .values()
        .map(String::len)
        .max()
        .unwrap_or(0)
        .max(value_len);
    let near_limit = bytes + value_len > CONFIGMAP_LIMIT
        || bytes + 4 * largest > CONFIGMAP_LIMIT
        || bytes + older_missing_bytes > CONFIGMAP_LIMIT;
    near_limit && oldest_present.is_some_and(|oldest| key_timestamp(key) <= oldest)
}

#[cfg(test)]
mod tests;
