//! core/v1 Events about Nodes, as k3s's recorders write them in `default` (a cluster-scoped
//! object's events go to `default`): the cert monitor (`<prog>-cert-monitor`) and the
//! secrets re-encryption controller (`reencrypt-controller`). Only what the checks read.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Event;

use crate::model::kinds::Kind;

/// The namespace k3s's recorders put Node events in.
pub(crate) const NAMESPACE: &str = "default";

/// The field selector that keeps only Node events.
pub(crate) const NODE_SELECTOR: &str = "involvedObject.kind=Node";

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NodeEvent {
    pub name: String,
    pub reason: String,
    /// `Normal` or `Warning`.
    pub type_: String,
    pub message: String,
    /// `involvedObject.name`: the Node.
    pub node: String,
    /// How many times the recorder saw it within the event TTL (1 h by default).
    pub count: i32,
    pub first_seen: Option<Timestamp>,
    /// `lastTimestamp`, else `eventTime`, else `firstTimestamp`, else the creation time: the
    /// time of the newest occurrence, whichever field the writer filled.
    pub last_seen: Option<Timestamp>,
    pub source: String,
}

impl NodeEvent {
    /// `None` for an Event about anything but a Node.
    pub(crate) fn from_api(event: &Event) -> Option<NodeEvent> {
        let involved = &event.involved_object;
        if involved.kind.as_deref() != Some(Kind::Node.name()) {
            return None;
        }
        let event_time = event.event_time.as_ref().map(|t| t.0);
        let first = event.first_timestamp.as_ref().map(|t| t.0);
        let created = event.metadata.creation_timestamp.as_ref().map(|t| t.0);
        Some(NodeEvent {
            name: event.metadata.name.clone().unwrap_or_default(),
            reason: event.reason.clone().unwrap_or_default(),
            type_: event.type_.clone().unwrap_or_default(),
            message: event.message.clone().unwrap_or_default(),
            node: involved.name.clone().unwrap_or_default(),
            count: event.count.unwrap_or(1),
            first_seen: first.or(event_time).or(created),
            last_seen: (event.last_timestamp.as_ref().map(|t| t.0))
                .or(event_time)
                .or(first)
                .or(created),
            source: event
                .source
                .as_ref()
                .and_then(|s| s.component.clone())
                .or_else(|| event.reporting_component.clone())
                .unwrap_or_default(),
        })
    }
}
