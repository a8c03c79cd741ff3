//! `etcdsnapshots.rke.cattle.io` (`rke.cattle.io/v1` ETCDSnapshot, namespaced): Rancher's
//! record of one downstream snapshot (rancher/rancher `pkg/apis/rke.cattle.io/v1`).

use jiff::Timestamp;
use serde_json::Value;

use super::{string_map, text};

pub(crate) const CLUSTER_NAME_LABEL: &str = "rke.cattle.io/cluster-name";
pub(crate) const NODE_NAME_LABEL: &str = "rke.cattle.io/node-name";
pub(crate) const MACHINE_ID_LABEL: &str = "rke.cattle.io/machine-id";
pub(crate) const STORAGE_ANNOTATION: &str = "etcdsnapshot.rke.io/storage";
/// 2.11+: the downstream ETCDSnapshotFile's name, Rancher's correlation key.
pub(crate) const SNAPSHOT_NAME_ANNOTATION: &str = "etcdsnapshot.rke.io/snapshot-name";
pub(crate) const FILE_NAME_ANNOTATION: &str = "etcdsnapshot.rke.io/snapshot-file-name";
pub(crate) const RECONCILED_ANNOTATION: &str =
    "etcdsnapshot.rke.io/snapshotbackpopulate-reconciled";
pub(crate) const RESTORE_MODES_ANNOTATION: &str = "etcdsnapshot.rke.io/restore-mode-options";

/// One Rancher snapshot record.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct SnapshotRecord {
    pub namespace: String,
    pub name: String,
    pub created: Option<Timestamp>,
    pub deleting: bool,
    /// `rke.cattle.io/cluster-name`: the provisioning Cluster's name.
    pub cluster_label: Option<String>,
    pub node_label: Option<String>,
    pub machine_id: Option<String>,
    /// `etcdsnapshot.rke.io/storage`: `local` or `s3`.
    pub storage: Option<String>,
    /// 2.11+: the ETCDSnapshotFile it mirrors.
    pub snapshot_name: Option<String>,
    pub file_name_annotation: Option<String>,
    pub restore_modes: Option<String>,
    /// ≤ 2.10's `snapshotbackpopulate-reconciled: "true"`.
    pub legacy_reconciled: bool,
    pub spec_cluster_name: Option<String>,
    pub file: RecordFile,
    /// `status.missing`: ≤ 2.10 found no ConfigMap entry for it.
    pub missing: bool,
}

/// The record's top-level `snapshotFile`.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct RecordFile {
    pub name: Option<String>,
    pub node_name: Option<String>,
    pub location: Option<String>,
    /// base64 of the ETCDSnapshotFile's `spec.metadata` JSON, as Rancher copies it.
    pub metadata: Option<String>,
    pub created_at: Option<Timestamp>,
    /// `None` when absent (the ≤ 2.10 "0 B" record), `Some(Err)` when not a number.
    pub size: Option<Result<i64, String>>,
    pub status: Option<String>,
    pub message: Option<String>,
    pub s3_folder: Option<String>,
    pub s3: bool,
}

impl SnapshotRecord {
    pub(crate) fn from_json(v: &Value) -> SnapshotRecord {
        let labels = string_map(v, "/metadata/labels");
        let annotations = string_map(v, "/metadata/annotations");
        let size = match v.pointer("/snapshotFile/size") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) => Some(n.as_i64().ok_or_else(|| n.to_string())),
            Some(Value::String(s)) => Some(s.parse::<i64>().map_err(|_| s.clone())),
            Some(other) => Some(Err(other.to_string())),
        };
        let time = |p: &str| text(v, p).and_then(|t| t.parse().ok());
        SnapshotRecord {
            namespace: text(v, "/metadata/namespace").unwrap_or_default(),
            name: text(v, "/metadata/name").unwrap_or_default(),
            created: time("/metadata/creationTimestamp"),
            deleting: v
                .pointer("/metadata/deletionTimestamp")
                .is_some_and(|d| !d.is_null()),
            cluster_label: labels.get(CLUSTER_NAME_LABEL).cloned(),
            node_label: labels.get(NODE_NAME_LABEL).cloned(),
            machine_id: labels.get(MACHINE_ID_LABEL).cloned(),
            storage: annotations.get(STORAGE_ANNOTATION).cloned(),
            snapshot_name: annotations.get(SNAPSHOT_NAME_ANNOTATION).cloned(),
            file_name_annotation: annotations.get(FILE_NAME_ANNOTATION).cloned(),
            restore_modes: annotations.get(RESTORE_MODES_ANNOTATION).cloned(),
            legacy_reconciled: annotations.get(RECONCILED_ANNOTATION).map(String::as_str)
                == Some("true"),
            spec_cluster_name: text(v, "/spec/clusterName"),
            file: RecordFile {
                name: text(v, "/snapshotFile/name"),
                node_name: text(v, "/snapshotFile/nodeName"),
                location: text(v, "/snapshotFile/location"),
                metadata: text(v, "/snapshotFile/metadata"),
                created_at: time("/snapshotFile/createdAt"),
                size,
                status: text(v, "/snapshotFile/status").filter(|s| !s.is_empty()),
                message: text(v, "/snapshotFile/message").filter(|s| !s.is_empty()),
                s3_folder: text(v, "/snapshotFile/s3/folder"),
                s3: v.pointer("/snapshotFile/s3").is_some_and(Value::is_object),
            },
            missing: v
                .pointer("/status/missing")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        }
    }

    /// The provisioning Cluster it belongs to: the label, else `spec.clusterName`.
    pub(crate) fn cluster(&self) -> Option<&str> {
        self.cluster_label
            .as_deref()
            .or(self.spec_cluster_name.as_deref())
    }

    /// Whether it is about an S3 copy: the storage annotation, else the `s3` block.
    pub(crate) fn is_s3(&self) -> bool {
        match self.storage.as_deref() {
            Some(storage) => storage == "s3",
            None => self.file.s3 || self.node_label.as_deref() == Some("s3"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_a_2_14_record() {
        let r = SnapshotRecord::from_json(&json!({
            "apiVersion": "rke.cattle.io/v1", "kind": "ETCDSnapshot",
            "metadata": {"name": "prod-local-etcd-snapshot-s1-1717156800-1a2b3c",
                "namespace": "fleet-default",
                "labels": {"rke.cattle.io/cluster-name": "prod", "rke.cattle.io/node-name": "s1",
                           "rke.cattle.io/machine-id": "abc"},
                "annotations": {"etcdsnapshot.rke.io/storage": "local",
                    "etcdsnapshot.rke.io/snapshot-name": "local-etcd-snapshot-s1-1717156800-1a2b3c",
                    "etcdsnapshot.rke.io/restore-mode-options": "none"}},
            "spec": {"clusterName": "prod"},
            "snapshotFile": {"name": "etcd-snapshot-s1-1717156800", "nodeName": "s1",
                "location": "file:///var/lib/rancher/k3s/server/db/snapshots/etcd-snapshot-s1-1717156800",
                "size": 12345, "status": "successful", "createdAt": "2024-05-31T12:00:00Z",
                "metadata": "bnVsbA=="},
            "status": {"missing": false}
        }));
        assert_eq!(r.cluster(), Some("prod"));
        assert!(!r.is_s3());
        assert_eq!(r.file.size, Some(Ok(12345)));
        assert_eq!(r.restore_modes.as_deref(), Some("none"));
    }

    #[test]
    fn a_0_b_record_has_no_size_and_no_status() {
        let r = SnapshotRecord::from_json(&json!({
            "metadata": {"name": "x", "labels": {"rke.cattle.io/node-name": "s3"}},
            "snapshotFile": {"name": "on-demand", "status": ""}
        }));
        assert_eq!(r.file.size, None);
        assert_eq!(r.file.status, None);
        assert!(r.is_s3());
    }
}
