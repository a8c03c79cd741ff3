//! What a pasted `kubectl get etcdsnapshotfiles` table cannot show (issue 29, item 13). A row
//! holds a name, snapshot name, node, location and size; CREATIONTIME is printed as an age.
//! Without finalizers, metadata, S3 settings, times or a deletion mark, the controller-idle,
//! stale-entry and name-digest checks are not run on table rows (src/diagnose/snapshots.rs),
//! and this finding says so once. Pure.

use super::finding::{Finding, FindingCode, Severity};

/// What a pasted `kubectl get etcdsnapshotfiles` table cannot show, said once.
pub fn table_gap(file: &str) -> Finding {
    Finding::new(
        Severity::Warning,
        FindingCode::DumpIncomplete,
        "dump",
        format!(
            "{file} is a kubectl table of ETCDSnapshotFiles (names, nodes, locations and sizes; CREATIONTIME \
             is an age, not a time): the snapshot count, empty records and which names have no entry were \
             checked; whether the controller processed them (snapshot-controller-idle: no finalizers), \
             whether entries match their records (snapshot-stale-in-configmap: no metadata, S3 settings or \
             times) and name digests (snapshot-name-digest-mismatch: no S3 settings) were not, nor \
             whether a record is being deleted or ready"
        ),
    )
    .fix("add `kubectl get etcdsnapshotfiles -o yaml` from a server to judge them")
}
