//! What a pasted snapshot table cannot show: a `kubectl get
//! etcdsnapshotfiles` row holds a name, snapshot name, node, location and size (CREATIONTIME is
//! printed as an age); a `k3s etcd-snapshot ls` row a snapshot name, location, size and time.
//! Without finalizers, metadata, S3 settings, times or a deletion mark, the controller-idle,
//! stale-entry and name-digest checks are not run on table rows (src/diagnose/snapshots/mod.rs),
//! and this finding says so once. Pure.

use crate::diagnose::finding::{Finding, FindingCode, Severity};

/// What a pasted snapshot table cannot show, said once.
/// `partial`: the table may list only what one server sees, so orphans were not judged either.
pub(super) fn table_gap(file: &str, partial: bool) -> Finding {
    let orphans = if partial {
        "; nor whether ConfigMap entries without a row are orphaned (`etcd-snapshot ls` may list only \
         the snapshots one server sees)"
    } else {
        ""
    };
    Finding::new(
        Severity::Warning,
        FindingCode::DumpIncomplete,
        "dump",
        format!(
            "{file} is a pasted table of snapshots (`kubectl get etcdsnapshotfiles` or `etcd-snapshot ls`: \
             names, locations and sizes): the snapshot count, empty records and which names have no entry were \
             checked; whether the controller processed them (snapshot-controller-idle: no finalizers), \
             whether entries match their records (snapshot-stale-in-configmap: no metadata, S3 settings or \
             times) and name digests (snapshot-name-digest-mismatch: no S3 settings) were not, nor \
             whether a record is being deleted or ready{orphans}"
        ),
    )
    .fix("add `kubectl get etcdsnapshotfiles -o yaml` from a server to judge them")
}
