//! The edit itself: the same object with only the holder identity changed, so nothing else a
//! server relies on (times, transitions) moves — except the duration of a released record,
//! which `release()` set to 1 s and which must be restored for the new holder to keep it.

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use serde_json::Value;

use crate::model::configmap::ConfigMapFacts;
use crate::model::lock::{LEADER_ANNOTATION, LockRecord};

/// What the edit writes into a lock record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HolderEdit<'a> {
    pub holder: &'a str,
    /// `leaseDurationSeconds` to write back into a released record.
    pub restore_duration_seconds: Option<i64>,
}

/// The Lease with `spec.holderIdentity` set; managedFields are left to the server.
pub(crate) fn lease_with_holder(lease: &Lease, edit: HolderEdit<'_>) -> Lease {
    let mut next = lease.clone();
    next.metadata.managed_fields = None;
    let spec = next.spec.get_or_insert_with(Default::default);
    spec.holder_identity = Some(edit.holder.to_string());
    if let Some(d) = edit.restore_duration_seconds {
        spec.lease_duration_seconds = i32::try_from(d).ok();
    }
    next
}

/// The ConfigMap with `holderIdentity` set inside its leader annotation; every other field of
/// the record is kept as it was.
pub(crate) fn configmap_with_holder(
    cm: &ConfigMap,
    edit: HolderEdit<'_>,
) -> Result<ConfigMap, String> {
    let name = cm.metadata.name.as_deref().unwrap_or_default();
    let raw = cm
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(LEADER_ANNOTATION))
        .ok_or_else(|| {
            format!("ConfigMap kube-system/{name} has no {LEADER_ANNOTATION} annotation")
        })?;
    let mut record: Value = serde_json::from_str(raw).map_err(|e| {
        format!(
            "the {LEADER_ANNOTATION} annotation of ConfigMap kube-system/{name} is not JSON: {e}"
        )
    })?;
    let object = record.as_object_mut().ok_or_else(|| {
        format!(
            "the {LEADER_ANNOTATION} annotation of ConfigMap kube-system/{name} is not an object"
        )
    })?;
    object.insert(
        "holderIdentity".into(),
        Value::String(edit.holder.to_string()),
    );
    if let Some(d) = edit.restore_duration_seconds {
        object.insert("leaseDurationSeconds".into(), Value::from(d));
    }
    let mut next = cm.clone();
    next.metadata.managed_fields = None;
    next.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(LEADER_ANNOTATION.to_string(), record.to_string());
    Ok(next)
}

/// The record a ConfigMap copy holds (none when its annotation is absent or unreadable).
pub(crate) fn configmap_record(cm: &ConfigMap) -> Option<LockRecord> {
    ConfigMapFacts::from_api(cm)
        .leader_record()
        .and_then(Result::ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn to(holder: &str) -> HolderEdit<'_> {
        HolderEdit {
            holder,
            restore_duration_seconds: None,
        }
    }

    #[test]
    fn a_released_record_gets_its_duration_back() {
        let lease: Lease = serde_json::from_value(json!({
            "metadata": {"name": "k3s", "namespace": "kube-system"},
            "spec": {"holderIdentity": "", "leaseDurationSeconds": 1}
        }))
        .unwrap();
        let edit = HolderEdit {
            holder: "b",
            restore_duration_seconds: Some(45),
        };
        let next = lease_with_holder(&lease, edit);
        assert_eq!(next.spec.as_ref().unwrap().lease_duration_seconds, Some(45));
        let cm: ConfigMap = serde_json::from_value(json!({
            "metadata": {"name": "k3s", "annotations": {LEADER_ANNOTATION:
                r#"{"holderIdentity":"","leaseDurationSeconds":1,"renewTime":"2024-05-31T12:10:33Z","leaderTransitions":2}"#}}
        }))
        .unwrap();
        let record = configmap_record(&configmap_with_holder(&cm, edit).unwrap()).unwrap();
        assert_eq!(
            (
                record.holder_identity.as_str(),
                record.lease_duration_seconds
            ),
            ("b", Some(45))
        );
    }

    #[test]
    fn only_the_holder_changes_in_a_lease() {
        let lease: Lease = serde_json::from_value(json!({
            "metadata": {"name": "k3s", "namespace": "kube-system", "resourceVersion": "42",
                         "managedFields": [{"manager": "k3s"}]},
            "spec": {"holderIdentity": "a", "leaseDurationSeconds": 45, "leaseTransitions": 3,
                     "renewTime": "2024-05-31T12:10:33.918204Z"}
        }))
        .unwrap();
        let next = lease_with_holder(&lease, to("b"));
        let spec = next.spec.as_ref().unwrap();
        assert_eq!(spec.holder_identity.as_deref(), Some("b"));
        assert_eq!(spec.lease_transitions, Some(3));
        assert_eq!(spec.renew_time, lease.spec.as_ref().unwrap().renew_time);
        assert_eq!(next.metadata.resource_version.as_deref(), Some("42"));
        assert!(next.metadata.managed_fields.is_none());
    }

    #[test]
    fn only_the_holder_changes_in_an_annotation() {
        let cm: ConfigMap = serde_json::from_value(json!({
            "metadata": {"name": "k3s", "annotations": {LEADER_ANNOTATION:
                r#"{"holderIdentity":"a","leaseDurationSeconds":45,"acquireTime":"2024-05-31T11:58:01Z","renewTime":"2024-05-31T12:10:33Z","leaderTransitions":2}"#}}
        }))
        .unwrap();
        let next = configmap_with_holder(&cm, to("b")).unwrap();
        let record = configmap_record(&next).unwrap();
        assert_eq!(record.holder_identity, "b");
        assert_eq!(record.transitions, Some(2));
        assert_eq!(record.renew_time, configmap_record(&cm).unwrap().renew_time);
    }

    #[test]
    fn a_configmap_without_a_record_is_an_error() {
        let cm: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "k3s"}})).unwrap();
        assert!(
            configmap_with_holder(&cm, to("b"))
                .unwrap_err()
                .contains("has no")
        );
    }
}
