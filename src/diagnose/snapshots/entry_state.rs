//! What a snapshot's ConfigMap entry is found to be, and the entries no snapshot stands behind:
//! the vocabulary the analysis (`snapshots.rs`) produces and its findings read.

use serde::Serialize;

use crate::diagnose::snapshots::snapshot_reconcile::ReconcileFate;

/// The apiserver's limit on the sum of a ConfigMap's values (wire sample 072).
pub(crate) const CONFIGMAP_LIMIT: usize = 1_048_576;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum EntryState {
    /// The ConfigMap holds what k3s would write.
    Present,
    /// It should have an entry and has none.
    Missing,
    /// It should have an entry and has none yet, but the CR is younger than the controller's
    /// normal delay (a minute) and nothing shows the controller stopped: k3s writes it any
    /// moment. Never a difference or a finding.
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
    /// The ConfigMap was read as a pasted table that shows how many entries it holds, not
    /// which: whether this one has its entry is not shown (the count is judged as a whole).
    Unknown,
}

impl EntryState {
    pub(crate) fn label(self) -> &'static str {
        match self {
            EntryState::Present => "present",
            EntryState::Missing => "MISSING",
            EntryState::Pending => "pending",
            EntryState::Stale => "STALE",
            EntryState::PrunedForSize => "pruned (size)",
            EntryState::NotExpected => "not expected",
            EntryState::Extra => "extra",
            EntryState::Deleting => "deleting",
            EntryState::Unknown => "not shown",
        }
    }

    /// A difference `snapshots diff` exits 1 for (like `kubectl diff`).
    pub(crate) fn is_difference(self) -> bool {
        matches!(self, EntryState::Missing | EntryState::Stale)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct OrphanedEntry {
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
