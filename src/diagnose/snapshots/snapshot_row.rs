//! A row of the snapshot comparison: one ETCDSnapshotFile, shared with the cluster state, and
//! what the comparison found for it.

use std::sync::Arc;

use jiff::Timestamp;
use serde::Serialize;

use super::entry_state::EntryState;
use crate::distro::Distro;
use crate::model::snapshot_entry::FieldDifference;
use crate::model::snapshot_file::{FileState, SnapshotFile};
use crate::model::snapshot_key::{alternate_key, data_key};

/// One ETCDSnapshotFile and what the comparison found for it. The CR's own fields are read
/// through the CR, shared with the cluster state, so a row adds only the comparison: at
/// 50,000 CRs copies of names and locations were tens of MiB. Serialized as
/// [`SnapshotRowJson`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SnapshotRow {
    file: Arc<SnapshotFile>,
    distro: Distro,
    pub state: EntryState,
    /// Whether the entry is under the CR's other key (a local snapshot of a node named s3);
    /// the key itself is worked out when asked for rather than held for every row.
    alternate_key: bool,
    /// What few rows have, boxed so the others do not carry its room.
    detail: Option<Box<RowDetail>>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct RowDetail {
    pub(super) key_note: Option<String>,
    pub(super) differences: Vec<FieldDifference>,
}

impl SnapshotRow {
    pub(super) fn new(
        file: &Arc<SnapshotFile>,
        distro: Distro,
        state: EntryState,
        alternate_key: bool,
        detail: RowDetail,
    ) -> SnapshotRow {
        SnapshotRow {
            file: Arc::clone(file),
            distro,
            state,
            alternate_key,
            detail: (detail != RowDetail::default()).then(|| Box::new(detail)),
        }
    }

    /// The ConfigMap key of the CR's entry.
    pub(crate) fn key(&self) -> String {
        let alternate = self.alternate_key.then(|| alternate_key(&self.file));
        alternate.flatten().unwrap_or_else(|| data_key(&self.file))
    }

    /// Why the entry was found under a key other than the usual one.
    pub(crate) fn key_note(&self) -> Option<&str> {
        self.detail.as_ref()?.key_note.as_deref()
    }

    /// How a stale entry differs from what k3s would write.
    pub(crate) fn differences(&self) -> &[FieldDifference] {
        self.detail.as_ref().map_or(&[], |d| &d.differences)
    }

    /// Whether the row holds anything beyond its CR and state: a missing row holds nothing
    /// (its value is worked out when a backfill writes it: 50,000 missing rows held ~25 MiB
    /// of values no report shows).
    #[cfg(test)]
    pub(super) fn has_detail(&self) -> bool {
        self.detail.is_some()
    }

    /// The ETCDSnapshotFile.
    pub(crate) fn file(&self) -> &SnapshotFile {
        &self.file
    }

    pub(crate) fn name(&self) -> &str {
        &self.file.name
    }

    /// `spec.nodeName`.
    pub(crate) fn node(&self) -> &str {
        &self.file.node_name
    }

    /// `s3` or `local`.
    pub(crate) fn storage(&self) -> &'static str {
        if self.file.in_s3(self.distro) {
            "s3"
        } else {
            "local"
        }
    }

    /// `spec.snapshotName`.
    pub(crate) fn snapshot_name(&self) -> &str {
        &self.file.snapshot_name
    }

    /// `spec.location`.
    pub(crate) fn location(&self) -> &str {
        &self.file.location
    }

    pub(crate) fn file_state(&self) -> FileState {
        self.file.file_state()
    }

    pub(crate) fn token_hash(&self) -> Option<&str> {
        self.file.token_hash(self.distro)
    }

    pub(crate) fn created(&self) -> Option<Timestamp> {
        self.file.taken_at()
    }

    /// Whether the controller's finalizer is on the CR.
    pub(crate) fn finalizer(&self) -> bool {
        self.file.has_controller_finalizer()
    }

    fn json(&self) -> SnapshotRowJson<'_> {
        let file = &*self.file;
        SnapshotRowJson {
            name: &file.name,
            node: &file.node_name,
            storage: self.storage(),
            snapshot_name: &file.snapshot_name,
            location: &file.location,
            file_state: file.file_state(),
            token_hash: self.token_hash(),
            error: file.error.as_ref().and_then(|e| e.message.as_deref()),
            created: file.taken_at(),
            size: file.size_bytes(),
            ready: file.ready_to_use,
            key: self.key(),
            key_note: self.key_note(),
            state: self.state,
            differences: self.differences(),
            finalizer: file.has_controller_finalizer(),
        }
    }
}

// A `SnapshotRow` as reports show it (its doc comments are the schema's descriptions).
#[derive(Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "SnapshotRow")]
struct SnapshotRowJson<'a> {
    name: &'a str,
    node: &'a str,
    storage: &'static str,
    /// `spec.snapshotName`: the file name `k3s etcd-snapshot ls` shows.
    snapshot_name: &'a str,
    /// `spec.location`: `file:///…` or `s3://bucket/key`; empty for a failed save.
    location: &'a str,
    /// ready, failed, terminating or pending (`state` is the ConfigMap entry's).
    file_state: FileState,
    /// `etcd.<prog>.cattle.io/snapshot-token-hash`, when k3s set one.
    #[serde(skip_serializing_if = "Option::is_none")]
    token_hash: Option<&'a str>,
    /// `status.error.message` of a failed snapshot.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    created: Option<Timestamp>,
    size: Option<i64>,
    ready: bool,
    key: String,
    /// Why the entry was found under a key other than the usual one.
    #[serde(skip_serializing_if = "Option::is_none")]
    key_note: Option<&'a str>,
    state: EntryState,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    differences: &'a [FieldDifference],
    finalizer: bool,
}

impl Serialize for SnapshotRow {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.json().serialize(serializer)
    }
}

impl schemars::JsonSchema for SnapshotRow {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        SnapshotRowJson::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        SnapshotRowJson::json_schema(generator)
    }
}
