//! The time a dump was taken, as far as its objects tell: the newest server-written time.

use jiff::{SignedDuration, Timestamp};
use serde_json::Value;

/// The newest time the API server or a control-plane lock holder wrote into an object, and
/// where: the newest over a dump stands in for "when the dump was taken". Lease renewals
/// (`spec.renewTime`: the k3s locks every 2 s, the apiserver identity leases every 10 s),
/// `metadata.creationTimestamp` and `metadata.managedFields[].time` (both set by the API
/// server). Not the Node conditions' `lastHeartbeatTime`: each kubelet writes that with its own
/// clock, so one agent running minutes fast would make every fresh lock look expired.
pub(super) fn newest_timestamp(object: &Value) -> Option<(Timestamp, &'static str)> {
    let at = |pointer: &str, field: &'static str| {
        object
            .pointer(pointer)
            .and_then(Value::as_str)
            .and_then(|t| t.parse::<Timestamp>().ok())
            .map(|t| (t, field))
    };
    let managed = object
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.get("time")?.as_str()?.parse::<Timestamp>().ok())
        .map(|t| (t, "metadata.managedFields[].time"));
    [
        at("/metadata/creationTimestamp", "metadata.creationTimestamp"),
        at("/spec/renewTime", "spec.renewTime"),
    ]
    .into_iter()
    .flatten()
    .chain(managed)
    .max_by_key(|(t, _)| *t)
}

/// A kubelet heartbeat this far past the newest server-written time means that node's clock
/// runs fast (heartbeats come every 10 s at most); the same allowance as lock freshness.
const HEARTBEAT_SKEW: SignedDuration = SignedDuration::from_secs(10);

/// The newest `lastHeartbeatTime` of a Node's conditions: written by its kubelet's clock.
pub(super) fn newest_heartbeat(node: &Value) -> Option<Timestamp> {
    node.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .filter_map(|c| c.get("lastHeartbeatTime")?.as_str()?.parse().ok())
        .max()
}

/// Says which time "now" is and why a later heartbeat was passed over, when one was.
pub(super) fn heartbeat_ahead(
    heartbeat: Option<&(Timestamp, String)>,
    newest: Option<&(Timestamp, String)>,
) -> Option<String> {
    let ((beat, node), (now, from)) = (heartbeat?, newest?);
    let ahead = beat.duration_since(*now);
    (ahead > HEARTBEAT_SKEW).then(|| {
        format!(
            "Node {node}'s heartbeat is {} past the newest server-written time in the dump (its clock \
             probably runs fast) and was not used as now; now is {} from {from}, override with --now",
            minutes_seconds(ahead),
            now.strftime("%Y-%m-%dT%H:%M:%SZ")
        )
    })
}

/// `6m0s`, `45s`.
fn minutes_seconds(d: SignedDuration) -> String {
    let secs = d.as_secs();
    if secs >= 60 {
        format!("{}m{}s", secs / 60, secs % 60)
    } else {
        format!("{secs}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_timestamp_looks_at_renewals_and_heartbeats() {
        let v: Value = serde_json::json!({
            "metadata": {"creationTimestamp": "2024-05-01T00:00:00Z"},
            "spec": {"renewTime": "2024-05-31T12:10:33.918204Z"},
        });
        let (time, field) = newest_timestamp(&v).unwrap();
        assert_eq!(time.to_string(), "2024-05-31T12:10:33.918204Z");
        assert_eq!(field, "spec.renewTime");
    }

    #[test]
    fn a_heartbeat_ahead_of_now_is_named_with_the_time_used() {
        let t = |s: &str| s.parse::<Timestamp>().unwrap();
        let now = (
            t("2024-05-31T12:10:40Z"),
            "Lease kube-system/k3s spec.renewTime".to_string(),
        );
        let fast = (t("2024-05-31T12:16:40Z"), "w1".to_string());
        let note = heartbeat_ahead(Some(&fast), Some(&now)).unwrap();
        assert!(
            note.starts_with("Node w1's heartbeat is 6m0s past"),
            "{note}"
        );
        assert!(
            note.contains("now is 2024-05-31T12:10:40Z from Lease kube-system/k3s spec.renewTime")
        );
        let usual = (t("2024-05-31T12:10:48Z"), "w1".to_string());
        assert_eq!(heartbeat_ahead(Some(&usual), Some(&now)), None);
    }

    /// A kubelet's clock six minutes fast does not move the dump's "now".
    #[test]
    fn node_heartbeats_do_not_count_but_server_written_times_do() {
        let node: Value = serde_json::json!({
            "metadata": {"creationTimestamp": "2024-05-01T00:00:00Z",
                         "managedFields": [{"manager": "k3s", "time": "2024-05-31T12:10:30Z"}]},
            "status": {"conditions": [{"type": "Ready", "lastHeartbeatTime": "2024-05-31T12:16:40Z"}]},
        });
        let (time, field) = newest_timestamp(&node).unwrap();
        assert_eq!(time.to_string(), "2024-05-31T12:10:30Z");
        assert_eq!(field, "metadata.managedFields[].time");
    }
}
