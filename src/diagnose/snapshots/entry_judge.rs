//! One ETCDSnapshotFile's entry judged by k3s's rules: which key it is under, whether k3s
//! keeps one for it, and whether the one found is what k3s would write (`pkg/etcd/snapshot_controller.go`).

use std::collections::BTreeMap;

use jiff::Timestamp;

use super::FINALIZER_GRACE;
use super::entry_state::{CONFIGMAP_LIMIT, EntryState};
use crate::model::go_json::GoEscaping;
use crate::model::snapshot_entry::{FieldDifference, S3Shape, decode, differences, encode_for};
use crate::model::snapshot_file::SnapshotFile;
use crate::model::snapshot_key::{alternate_key, data_key, is_current_format, key_timestamp};

/// What each row is judged against: the ConfigMap's data, what the writer's version would
/// write, and how full the ConfigMap is (for the 1 MiB pruning).
pub(super) struct EntryJudge<'a> {
    pub data: &'a BTreeMap<String, String>,
    pub writer: Writer,
    /// The snapshots came from a pasted table: no metadata, finalizers, times or S3 settings.
    pub from_table: bool,
    /// The ConfigMap is known only by its entry count: no row is known present or missing.
    pub counted_only: bool,
    /// k3s's snapshot controller may be writing now.
    pub writing: bool,
    pub now: Timestamp,
    /// Sum of the byte lengths of the values: what the 1 MiB limit counts.
    pub bytes: usize,
    largest_present: usize,
    oldest_present: Option<i64>,
    /// The bytes of every eligible entry that is absent and no newer than the oldest present
    /// one: what k3s would have had to hold had it not pruned (either path, any number of
    /// rounds).
    older_missing_bytes: usize,
}

/// What the writer's version writes: the S3 shape and escaping of a value, and whether only
/// CRs with metadata get one.
#[derive(Debug, Clone, Copy)]
pub(super) struct Writer {
    pub shape: S3Shape,
    pub go_escaping: GoEscaping,
    pub need_metadata: Option<bool>,
}

/// Where a CR's entry is, and is expected.
pub(super) struct Keyed {
    /// The key its entry was found under, else the usual one.
    pub key: String,
    /// The other key k3s may use for it (node `s3`), if any.
    pub other_key: Option<String>,
    /// Why the entry is under the other key, when it is.
    pub key_note: Option<String>,
}

impl<'a> EntryJudge<'a> {
    /// Everything but the sizes, which [`EntryJudge::sized`] works out from the CRs.
    pub(super) fn new(
        data: &'a BTreeMap<String, String>,
        writer: Writer,
        from_table: bool,
        counted_only: bool,
        writing: bool,
        now: Timestamp,
    ) -> EntryJudge<'a> {
        EntryJudge {
            data,
            writer,
            from_table,
            counted_only,
            writing,
            now,
            bytes: data.values().map(String::len).sum(),
            largest_present: data.values().map(String::len).max().unwrap_or(0),
            oldest_present: data
                .keys()
                .filter(|k| is_current_format(k))
                .map(|k| key_timestamp(k))
                .min(),
            older_missing_bytes: 0,
        }
    }

    pub(super) fn sized(mut self, files: &[std::sync::Arc<SnapshotFile>]) -> Self {
        self.older_missing_bytes = files
            .iter()
            .filter(|f| !f.deleting && self.eligible(f))
            .filter(|f| {
                let (key, _, found) = self.entry_of(f);
                found.is_none()
                    && self
                        .oldest_present
                        .is_some_and(|oldest| key_timestamp(&key) <= oldest)
            })
            .map(|f| encode_for(f, self.writer.shape, self.writer.go_escaping).len())
            .sum();
        self
    }

    /// Whether k3s keeps an entry for `f` (a pasted table's rows are judged on what they show).
    pub(super) fn eligible(&self, f: &SnapshotFile) -> bool {
        self.from_table || !f.metadata.is_empty() || self.writer.need_metadata == Some(false)
    }

    fn entry_of(
        &self,
        f: &SnapshotFile,
    ) -> (String, Option<String>, Option<(&'a String, &'a String)>) {
        let key = data_key(f);
        let other = alternate_key(f);
        let found = self
            .data
            .get_key_value(&key)
            .or_else(|| other.as_ref().and_then(|o| self.data.get_key_value(o)));
        (key, other, found)
    }

    pub(super) fn keyed(&self, file: &SnapshotFile) -> Keyed {
        let (usual_key, other_key, found) = self.entry_of(file);
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
        Keyed {
            key,
            other_key,
            key_note,
        }
    }

    /// Whether a CR without a known entry counts toward the entries a counted-only
    /// ConfigMap should hold.
    pub(super) fn should_have_entry(&self, file: &SnapshotFile) -> bool {
        !file.deleting
            && self.counted_only
            && self.eligible(file)
            && !(self.writing && is_young(file, self.now))
    }

    /// The state of `file`'s entry under `key`, and how a stale one differs.
    pub(super) fn state(
        &self,
        file: &SnapshotFile,
        key: &str,
    ) -> (EntryState, Vec<FieldDifference>) {
        let eligible = self.eligible(file);
        let state = if file.deleting {
            EntryState::Deleting
        } else if self.counted_only {
            EntryState::Unknown
        } else if !eligible && self.data.contains_key(key) {
            EntryState::Extra
        } else if self.from_table && self.data.contains_key(key) {
            // The row lacks the fields the entry holds: that it has one is all a table shows.
            EntryState::Present
        } else if let Some(found) = self.data.get(key) {
            let diffs = self.differences(file, found);
            let state = if diffs.is_empty() {
                EntryState::Present
            } else {
                EntryState::Stale
            };
            return (state, diffs);
        } else if !eligible {
            EntryState::NotExpected
        } else {
            self.without_entry(file, key)
        };
        (state, Vec::new())
    }

    /// What k3s wrote is byte for byte what it would write again in the common case;
    /// decoding both is only needed to say how they differ.
    fn differences(&self, file: &SnapshotFile, found: &str) -> Vec<FieldDifference> {
        let expected = encode_for(file, self.writer.shape, self.writer.go_escaping);
        if found == expected {
            return Vec::new();
        }
        match (decode(&expected), decode(found)) {
            (Ok(e), Ok(f)) => differences(&e, &f),
            (_, Err(e)) => vec![FieldDifference {
                field: "value".into(),
                expected: expected.clone(),
                found: format!("(undecodable: {e})"),
            }],
            _ => Vec::new(),
        }
    }

    /// An eligible CR without an entry: pruned for size, pending, or missing.
    fn without_entry(&self, file: &SnapshotFile, key: &str) -> EntryState {
        // Only the length is needed here; a backfill encodes the value again when it
        // writes it (`expected_value`), so no missing row holds one.
        let expected_len = encode_for(file, self.writer.shape, self.writer.go_escaping).len();
        if pruned_for_size(
            key,
            expected_len,
            self.bytes,
            self.oldest_present,
            self.older_missing_bytes,
            self.largest_present,
        ) {
            EntryState::PrunedForSize
        } else if self.writing && is_young(file, self.now) {
            EntryState::Pending
        } else {
            EntryState::Missing
        }
    }
}

/// Created less than the controller's normal delay before `now` (a CR created after `now`, as
/// when a snapshot lands between reading the clock and listing, is young too).
fn is_young(file: &SnapshotFile, now: Timestamp) -> bool {
    file.created
        .is_some_and(|created| now.duration_since(created) < FINALIZER_GRACE)
}

/// k3s drops the oldest entries when a write would pass 1 MiB (`pruneConfigMap`,
/// `snapshotDataBackoff` in `pkg/etcd/snapshot_controller.go`): four on the first
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
