//! The `events.k8s.io/v1` Event every repair that writes leaves in kube-system, so
//! `kubectl get events -n kube-system` shows what k3sdoctor changed, why and who asked
//! (docs/repairs.md). Pure: the time and the reporting instance are parameters.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};

use crate::distro::LOCK_NAMESPACE;
use crate::model::kinds::Kind;

/// `reportingController` of every Event k3sdoctor records (a qualified name, as the API server
/// requires for events.k8s.io/v1).
pub(crate) const REPORTING_CONTROLLER: &str = "k3sdoctor.io/k3sdoctor";

/// The API server's limits (k8s.io/kubernetes pkg/apis/core/validation/events.go): `note` at
/// most 1 kB, `reportingInstance` at most 128 characters.
const NOTE_LIMIT: usize = 1024;
const INSTANCE_LIMIT: usize = 128;

/// Why an Event was recorded. The names are a stable contract (docs/repairs.md): alerts and
/// `kubectl get events --field-selector reason=…` depend on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventReason {
    /// A lock was moved onto the `-etcd` holder (and the takeover verified, unless told not to wait).
    LockMoved,
    /// A move was attempted and did not complete or could not be verified.
    LockMoveFailed,
    /// `serve --heal dry-run` would have moved the lock (once per split episode).
    WouldMoveLock,
    /// `snapshots backfill --fix` wrote the snapshot ConfigMap.
    SnapshotEntriesBackfilled,
    /// `snapshots restore --fix` wrote the snapshot ConfigMap back from a backup.
    SnapshotEntriesRestored,
}

impl EventReason {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EventReason::LockMoved => "LockMoved",
            EventReason::LockMoveFailed => "LockMoveFailed",
            EventReason::WouldMoveLock => "WouldMoveLock",
            EventReason::SnapshotEntriesBackfilled => "SnapshotEntriesBackfilled",
            EventReason::SnapshotEntriesRestored => "SnapshotEntriesRestored",
        }
    }

    /// `Warning` for what an operator must look at, `Normal` otherwise.
    pub(crate) fn event_type(self) -> &'static str {
        match self {
            EventReason::LockMoveFailed | EventReason::WouldMoveLock => "Warning",
            _ => "Normal",
        }
    }

    /// The verb (`action`): what was done, or would have been, to the object.
    pub(crate) fn action(self) -> &'static str {
        match self {
            EventReason::LockMoved | EventReason::LockMoveFailed | EventReason::WouldMoveLock => {
                "MoveLock"
            }
            EventReason::SnapshotEntriesBackfilled => "BackfillSnapshotEntries",
            EventReason::SnapshotEntriesRestored => "RestoreSnapshotEntries",
        }
    }
}

/// An object in kube-system an Event is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EventObject {
    /// `Lease` or `ConfigMap`.
    pub kind: &'static str,
    pub name: String,
    /// The resourceVersion written (or judged, when nothing was written).
    pub resource_version: Option<String>,
}

impl EventObject {
    pub(crate) fn lease(name: &str, resource_version: Option<String>) -> EventObject {
        EventObject {
            kind: Kind::Lease.name(),
            name: name.to_string(),
            resource_version,
        }
    }

    pub(crate) fn configmap(name: &str, resource_version: Option<String>) -> EventObject {
        EventObject {
            kind: Kind::ConfigMap.name(),
            name: name.to_string(),
            resource_version,
        }
    }

    fn reference(&self) -> ObjectReference {
        ObjectReference {
            api_version: Kind::named(self.kind).map(|kind| kind.row().api_version.to_string()),
            kind: Some(self.kind.to_string()),
            name: Some(self.name.clone()),
            namespace: Some(LOCK_NAMESPACE.to_string()),
            resource_version: self.resource_version.clone(),
            ..Default::default()
        }
    }
}

/// What happened, to what, and who asked: everything an Event says besides its time and the
/// instance that reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RepairEvent {
    pub reason: EventReason,
    pub regarding: EventObject,
    /// The other copy of a MultiLock pair, when both were written.
    pub related: Option<EventObject>,
    /// What changed, in one or two sentences; `asked_by` is appended.
    pub what: String,
    /// `user alice (context prod)`, `serve --heal`, ….
    pub asked_by: String,
}

/// Who asked, for a person's command: the kubeconfig user (and context) when known.
pub(crate) fn asked_by_user(command: &str, user: Option<&str>, context: Option<&str>) -> String {
    match (user, context) {
        (Some(user), Some(context)) => format!("{command}, run by {user} (context {context})"),
        (Some(user), None) => format!("{command}, run by {user}"),
        (None, Some(context)) => format!("{command}, run with context {context}"),
        (None, None) => command.to_string(),
    }
}

impl RepairEvent {
    /// The note: what changed and who asked, cut to the API server's limit.
    pub(crate) fn note(&self) -> String {
        let what = self.what.trim_end_matches('.');
        truncate(&format!("{what}; asked by {}.", self.asked_by), NOTE_LIMIT)
    }

    /// The Event object to create in kube-system at `now`, reported by `instance`. The name
    /// is client-go's (`<object>.<hex nanoseconds>`, k8s.io/client-go/tools/events), unique
    /// enough for one writer and readable in `kubectl get events`.
    pub(crate) fn to_event(&self, now: Timestamp, instance: &str) -> Event {
        let nanos = u128::try_from(now.as_nanosecond()).unwrap_or_default();
        Event {
            metadata: ObjectMeta {
                name: Some(format!("{}.{nanos:x}", self.regarding.name)),
                namespace: Some(LOCK_NAMESPACE.to_string()),
                ..Default::default()
            },
            event_time: Some(MicroTime(now)),
            action: Some(self.reason.action().to_string()),
            reason: Some(self.reason.as_str().to_string()),
            type_: Some(self.reason.event_type().to_string()),
            note: Some(self.note()),
            regarding: Some(self.regarding.reference()),
            related: self.related.as_ref().map(EventObject::reference),
            reporting_controller: Some(REPORTING_CONTROLLER.to_string()),
            reporting_instance: Some(truncate(instance, INSTANCE_LIMIT)),
            ..Default::default()
        }
    }
}

/// The Event of a write to the snapshot ConfigMap (`backfill`, or `restore` from `backup`).
pub(crate) fn snapshot_entries_event(
    reason: EventReason,
    configmap: &str,
    resource_version: Option<String>,
    (add, update, remove): (usize, usize, usize),
    source: &str,
    asked_by: &str,
) -> RepairEvent {
    RepairEvent {
        reason,
        regarding: EventObject::configmap(configmap, resource_version),
        related: None,
        what: format!(
            "{source}: {add} entries added, {update} updated, {remove} removed in ConfigMap kube-system/{configmap}"
        ),
        asked_by: asked_by.to_string(),
    }
}

/// `reportingInstance`: the host k3sdoctor runs on, and in a Pod the Pod too (`node/pod`,
/// from the downward API's `NODE_NAME` and `POD_NAME`, which deploy/ sets).
pub(crate) fn reporting_instance(host: &str, node: Option<&str>, pod: Option<&str>) -> String {
    match (
        node.filter(|n| !n.is_empty()),
        pod.filter(|p| !p.is_empty()),
    ) {
        (Some(node), Some(pod)) => format!("{node}/{pod}"),
        (None, Some(pod)) if pod != host => format!("{host}/{pod}"),
        _ => host.to_string(),
    }
}

/// At most `limit` bytes, cut at a character boundary, with `…` when cut.
fn truncate(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_string();
    }
    let mut end = limit - '…'.len_utf8();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moved() -> RepairEvent {
        RepairEvent {
            reason: EventReason::LockMoved,
            regarding: EventObject::lease("k3s", Some("42".into())),
            related: Some(EventObject::configmap("k3s", Some("41".into()))),
            what: "moved k3s from server-1 to server-2, the k3s-etcd holder.".into(),
            asked_by: asked_by_user("leases follow --fix", Some("alice"), Some("prod")),
        }
    }

    #[test]
    fn a_moved_lock_is_a_normal_event_on_the_lease_with_the_configmap_related() {
        let now: Timestamp = "2026-12-01T19:00:00.123456Z".parse().unwrap();
        let event = moved().to_event(now, "admin-box");
        assert_eq!(event.reason.as_deref(), Some("LockMoved"));
        assert_eq!(event.type_.as_deref(), Some("Normal"));
        assert_eq!(event.action.as_deref(), Some("MoveLock"));
        assert_eq!(
            event.reporting_controller.as_deref(),
            Some("k3sdoctor.io/k3sdoctor")
        );
        assert_eq!(event.reporting_instance.as_deref(), Some("admin-box"));
        assert_eq!(event.metadata.namespace.as_deref(), Some("kube-system"));
        assert!(event.metadata.name.as_deref().unwrap().starts_with("k3s."));
        assert_eq!(event.event_time, Some(MicroTime(now)));
        let regarding = event.regarding.unwrap();
        assert_eq!(regarding.kind.as_deref(), Some("Lease"));
        assert_eq!(
            regarding.api_version.as_deref(),
            Some("coordination.k8s.io/v1")
        );
        assert_eq!(regarding.namespace.as_deref(), Some("kube-system"));
        assert_eq!(regarding.resource_version.as_deref(), Some("42"));
        assert_eq!(event.related.unwrap().kind.as_deref(), Some("ConfigMap"));
        assert_eq!(
            event.note.as_deref(),
            Some(
                "moved k3s from server-1 to server-2, the k3s-etcd holder; asked by leases follow --fix, run by \
                 alice (context prod)."
            )
        );
    }

    #[test]
    fn failures_and_dry_runs_are_warnings_and_each_reason_has_its_verb() {
        for (reason, kind, action) in [
            (EventReason::LockMoved, "Normal", "MoveLock"),
            (EventReason::LockMoveFailed, "Warning", "MoveLock"),
            (EventReason::WouldMoveLock, "Warning", "MoveLock"),
            (
                EventReason::SnapshotEntriesBackfilled,
                "Normal",
                "BackfillSnapshotEntries",
            ),
            (
                EventReason::SnapshotEntriesRestored,
                "Normal",
                "RestoreSnapshotEntries",
            ),
        ] {
            assert_eq!(reason.event_type(), kind, "{reason:?}");
            assert_eq!(reason.action(), action, "{reason:?}");
        }
    }

    #[test]
    fn a_long_note_is_cut_to_the_api_servers_limit_on_a_character_boundary() {
        let mut event = moved();
        event.what = "é".repeat(2000);
        let note = event.note();
        assert!(note.len() <= NOTE_LIMIT, "{}", note.len());
        assert!(note.ends_with('…'));
        let instance = "h".repeat(300);
        let e = moved().to_event(Timestamp::UNIX_EPOCH, &instance);
        assert_eq!(e.reporting_instance.unwrap().len(), INSTANCE_LIMIT);
    }

    #[test]
    fn the_instance_names_the_pod_when_in_a_cluster() {
        assert_eq!(reporting_instance("laptop", None, None), "laptop");
        assert_eq!(
            reporting_instance("k3sdoctor-7f9", Some("node-1"), Some("k3sdoctor-7f9")),
            "node-1/k3sdoctor-7f9"
        );
        // In a Pod the hostname is the Pod's name: said once.
        assert_eq!(
            reporting_instance("k3sdoctor-7f9", None, Some("k3sdoctor-7f9")),
            "k3sdoctor-7f9"
        );
        assert_eq!(reporting_instance("box", Some(""), Some("")), "box");
    }

    #[test]
    fn a_snapshot_write_is_about_the_configmap_and_counts_the_entries() {
        let e = snapshot_entries_event(
            EventReason::SnapshotEntriesRestored,
            "k3s-etcd-snapshots",
            Some("9".into()),
            (1, 2, 3),
            "restored from backup /tmp/b.json",
            "snapshots restore --fix",
        );
        assert_eq!(
            e.regarding,
            EventObject::configmap("k3s-etcd-snapshots", Some("9".into()))
        );
        assert_eq!(
            e.note(),
            "restored from backup /tmp/b.json: 1 entries added, 2 updated, 3 removed in ConfigMap \
             kube-system/k3s-etcd-snapshots; asked by snapshots restore --fix."
        );
        let v1 = e.to_event(Timestamp::UNIX_EPOCH, "h");
        assert_eq!(v1.regarding.unwrap().api_version.as_deref(), Some("v1"));
    }

    #[test]
    fn who_asked_says_what_the_kubeconfig_knows() {
        assert_eq!(
            asked_by_user("snapshots backfill --fix", None, None),
            "snapshots backfill --fix"
        );
        assert_eq!(
            asked_by_user("snapshots backfill --fix", Some("bob as ops"), None),
            "snapshots backfill --fix, run by bob as ops"
        );
    }
}
