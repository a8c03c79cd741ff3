//! ETCDSnapshotFile (`k3s.cattle.io/v1`, cluster-scoped) as k3sdoctor needs it. Parsed from
//! JSON tolerantly: a missing or odd field is recorded, never a reason to reject the object.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;
use serde_json::Value;

use super::etcd_keys::EtcdKeys;
use super::quantity::parse_quantity;
use super::recent_values::Recent;
use crate::distro::Distro;

/// Finalizer the snapshot ConfigMap controller adds on first sync (wrangler `pkg/generic/remove.go`).
pub(crate) const CONTROLLER_FINALIZER: &str =
    "wrangler.cattle.io/managed-etcd-snapshots-controller";

/// Label naming where a snapshot is stored: the node for a local file, `s3` for S3
/// (`etcd.<prog>.cattle.io/snapshot-storage-node`, pkg/etcd/snapshot/types.go).
pub(crate) const STORAGE_NODE_SUFFIX: &str = "snapshot-storage-node";
/// Annotation with the first 12 hex of sha256 of the server token's password part, set on
/// successful snapshots only (`AnnotationTokenHash`, pkg/etcd/snapshot/types.go L40).
pub(crate) const TOKEN_HASH_SUFFIX: &str = "snapshot-token-hash";

/// What a snapshot file is, as `snapshots list` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum FileState {
    /// `status.readyToUse: true`.
    Ready,
    /// Not ready, with `status.error`: k3s writes these for a failed save or upload and keeps
    /// them 24 h (`errorTTL`, pkg/etcd/snapshot.go).
    Failed,
    /// `metadata.deletionTimestamp` set: waiting for the controller's finalizer.
    Terminating,
    /// Not ready and no error (yet).
    Pending,
}

impl FileState {
    pub(crate) fn label(self) -> &'static str {
        match self {
            FileState::Ready => "ready",
            FileState::Failed => "FAILED",
            FileState::Terminating => "terminating",
            FileState::Pending => "pending",
        }
    }
}

// Strings are boxed and the node name shared: 50,000 of these are the largest thing k3sdoctor
// holds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SnapshotFile {
    pub name: Box<str>,
    pub created: Option<Timestamp>,
    pub deleting: bool,
    /// `metadata.deletionTimestamp`.
    pub deletion_time: Option<Timestamp>,
    /// The `etcd.<prog>.cattle.io/…` labels only (the storage node): what the checks read.
    /// Shared between CRs with equal ones, as are `annotations` and `finalizers` (see
    /// [`Recent`]): every CR of a node carries the same few.
    pub labels: Arc<EtcdKeys>,
    /// The `etcd.<prog>.cattle.io/…` annotations only (the token hash).
    pub annotations: Arc<EtcdKeys>,
    pub finalizers: Arc<Vec<String>>,
    /// `spec.snapshotName`: the file name, with `.zip` when compressed.
    pub snapshot_name: Box<str>,
    /// `spec.nodeName`: the node that took (or uploaded) it; `s3` when unknown. Shared
    /// between the CRs of a node.
    pub node_name: Arc<String>,
    pub location: Box<str>,
    /// `spec.metadata`: the extra-metadata ConfigMap's data at snapshot time. Shared between
    /// CRs that carry the same data (most do), see [`Recent`].
    pub metadata: Arc<BTreeMap<String, String>>,
    /// Shared between CRs of the same S3 target.
    pub s3: Option<Arc<S3Spec>>,
    pub creation_time: Option<Timestamp>,
    pub ready_to_use: bool,
    /// `status.size` in bytes; `Err` carries the raw text that is not a quantity.
    pub size: Result<i64, String>,
    /// Boxed: most CRs have none, and every CR would otherwise carry its 48 bytes.
    pub error: Option<Box<SnapshotError>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct S3Spec {
    pub endpoint: String,
    pub endpoint_ca: String,
    pub skip_ssl_verify: bool,
    pub bucket: String,
    pub bucket_lookup: String,
    pub region: String,
    /// `prefix` in the CR, `folder` in the ConfigMap.
    pub prefix: String,
    pub insecure: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct SnapshotError {
    pub time: Option<Timestamp>,
    pub message: Option<String>,
}

fn text(v: &Value, pointer: &str) -> String {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn time(v: &Value, pointer: &str) -> Option<Timestamp> {
    v.pointer(pointer)?.as_str()?.parse().ok()
}

thread_local! {
    static METADATA: RefCell<Vec<Arc<BTreeMap<String, String>>>> = const { RefCell::new(Vec::new()) };
    static S3_SPECS: RefCell<Vec<Arc<S3Spec>>> = const { RefCell::new(Vec::new()) };
    static KEYS: RefCell<Vec<Arc<EtcdKeys>>> = const { RefCell::new(Vec::new()) };
    static FINALIZERS: RefCell<Vec<Arc<Vec<String>>>> = const { RefCell::new(Vec::new()) };
    static NODE_NAMES: RefCell<Vec<Arc<String>>> = const { RefCell::new(Vec::new()) };
}
static RECENT_METADATA: Recent<BTreeMap<String, String>> = Recent::new(&METADATA);
static RECENT_S3_SPECS: Recent<S3Spec> = Recent::new(&S3_SPECS);
static RECENT_KEYS: Recent<EtcdKeys> = Recent::new(&KEYS);
static RECENT_FINALIZERS: Recent<Vec<String>> = Recent::new(&FINALIZERS);
static RECENT_NODE_NAMES: Recent<String> = Recent::new(&NODE_NAMES);

/// The `etcd.*.cattle.io/` entries of a metadata map: k3s's own keys, not every tool's.
fn etcd_keys(v: &Value, pointer: &str) -> Arc<EtcdKeys> {
    let keys = v
        .pointer(pointer)
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter(|(k, _)| k.starts_with("etcd.") && k.contains(".cattle.io/"))
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    RECENT_KEYS.share(keys)
}

fn flag(v: &Value, pointer: &str) -> bool {
    v.pointer(pointer).and_then(Value::as_bool).unwrap_or(false)
}

impl Default for SnapshotFile {
    fn default() -> SnapshotFile {
        SnapshotFile::from_json(&Value::Null)
    }
}

impl SnapshotFile {
    pub(crate) fn from_json(v: &Value) -> SnapshotFile {
        let size = match v.pointer("/status/size") {
            None | Some(Value::Null) => Ok(0),
            Some(Value::Number(n)) => n.as_i64().ok_or_else(|| n.to_string()),
            Some(Value::String(s)) if s.is_empty() => Ok(0),
            Some(Value::String(s)) => parse_quantity(s).map_err(|_| s.clone()),
            Some(other) => Err(other.to_string()),
        };
        let s3 = v
            .pointer("/spec/s3")
            .filter(|s| s.is_object())
            .map(|_| S3Spec {
                endpoint: text(v, "/spec/s3/endpoint"),
                endpoint_ca: text(v, "/spec/s3/endpointCA"),
                skip_ssl_verify: flag(v, "/spec/s3/skipSSLVerify"),
                bucket: text(v, "/spec/s3/bucket"),
                bucket_lookup: text(v, "/spec/s3/bucketLookup"),
                region: text(v, "/spec/s3/region"),
                prefix: text(v, "/spec/s3/prefix"),
                insecure: flag(v, "/spec/s3/insecure"),
            })
            .map(|s3| RECENT_S3_SPECS.share(s3));
        let error = v
            .pointer("/status/error")
            .filter(|e| e.is_object())
            .map(|_| {
                Box::new(SnapshotError {
                    time: time(v, "/status/error/time"),
                    message: v
                        .pointer("/status/error/message")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                })
            });
        let metadata = v
            .pointer("/spec/metadata")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            v.as_str()
                                .map(str::to_string)
                                .unwrap_or_else(|| v.to_string()),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let metadata = RECENT_METADATA.share(metadata);
        SnapshotFile {
            name: text(v, "/metadata/name").into(),
            created: time(v, "/metadata/creationTimestamp"),
            deleting: v
                .pointer("/metadata/deletionTimestamp")
                .is_some_and(|d| !d.is_null()),
            deletion_time: time(v, "/metadata/deletionTimestamp"),
            labels: etcd_keys(v, "/metadata/labels"),
            annotations: etcd_keys(v, "/metadata/annotations"),
            finalizers: RECENT_FINALIZERS.share(
                v.pointer("/metadata/finalizers")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
            snapshot_name: text(v, "/spec/snapshotName").into(),
            node_name: RECENT_NODE_NAMES.share(text(v, "/spec/nodeName")),
            location: text(v, "/spec/location").into(),
            metadata,
            s3,
            creation_time: time(v, "/status/creationTime"),
            ready_to_use: flag(v, "/status/readyToUse"),
            size,
            error,
        }
    }

    pub(crate) fn is_s3(&self) -> bool {
        self.s3.is_some()
    }

    pub(crate) fn has_controller_finalizer(&self) -> bool {
        self.finalizers.iter().any(|f| f == CONTROLLER_FINALIZER)
    }

    /// The storage-node label: a node name for a local file, `s3` for S3; `None` when absent
    /// (objects not written by k3s).
    pub(crate) fn storage_node(&self, distro: Distro) -> Option<&str> {
        self.labels
            .get(&distro.etcd_annotation(STORAGE_NODE_SUFFIX))
    }

    /// The token hash; empty values count as absent.
    pub(crate) fn token_hash(&self, distro: Distro) -> Option<&str> {
        self.annotations
            .get(&distro.etcd_annotation(TOKEN_HASH_SUFFIX))
            .filter(|h| !h.is_empty())
    }

    /// Stored in S3: the `spec.s3` block or an `s3://` location; or, for the record of an S3
    /// client that failed to start (no location, node `s3`, pkg/etcd/snapshot.go L358-375), the
    /// storage-node label `s3`. A local snapshot of a node literally named `s3` has a `file://`
    /// location and stays local.
    pub(crate) fn in_s3(&self, distro: Distro) -> bool {
        self.is_s3()
            || self.location.starts_with("s3://")
            || (self.location.is_empty()
                && self.node_name.as_str() == "s3"
                && self.storage_node(distro) == Some("s3"))
    }

    /// Failed: not ready, with an error k3s recorded.
    pub(crate) fn is_failed(&self) -> bool {
        !self.ready_to_use && self.error.is_some()
    }

    pub(crate) fn file_state(&self) -> FileState {
        if self.deleting {
            FileState::Terminating
        } else if self.ready_to_use {
            FileState::Ready
        } else if self.error.is_some() {
            FileState::Failed
        } else {
            FileState::Pending
        }
    }

    /// When the snapshot was taken: `status.creationTime`, else the error's time (a failed
    /// snapshot's creation time is its error time, pkg/etcd/snapshot/types.go), else when the
    /// object was created.
    pub(crate) fn taken_at(&self) -> Option<Timestamp> {
        self.creation_time
            .or_else(|| self.error.as_ref().and_then(|e| e.time))
            .or(self.created)
    }

    /// The size to report; an unparseable one counts as unknown.
    pub(crate) fn size_bytes(&self) -> Option<i64> {
        self.size.as_ref().ok().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tolerates_odd_and_missing_fields() {
        for (size, expected) in [
            (json!(""), Ok(0)),
            (json!("0"), Ok(0)),
            (json!("8417k"), Ok(8_417_000)),
            (json!(5_328_929), Ok(5_328_929)),
        ] {
            let f = SnapshotFile::from_json(
                &json!({"metadata": {"name": "x"}, "status": {"size": size}}),
            );
            assert_eq!(f.size, expected);
        }
        let odd = SnapshotFile::from_json(&json!({"status": {"size": "12 MB"}}));
        assert_eq!(odd.size, Err("12 MB".to_string()));
        let empty = SnapshotFile::from_json(&json!({}));
        assert_eq!(
            (&*empty.name, empty.ready_to_use, empty.size.clone()),
            ("", false, Ok(0))
        );
    }

    #[test]
    fn reads_s3_metadata_and_errors() {
        let f = SnapshotFile::from_json(&json!({
            "metadata": {"name": "s3-x", "finalizers": [CONTROLLER_FINALIZER], "deletionTimestamp": "2024-05-31T12:00:00Z"},
            "spec": {"snapshotName": "x", "nodeName": "s3", "location": "s3://b/x", "metadata": {"a": "b"},
                     "s3": {"bucket": "b", "prefix": "p"}},
            "status": {"readyToUse": false, "error": {"message": "boom"}}
        }));
        assert!(f.is_s3() && f.deleting && f.has_controller_finalizer());
        assert_eq!(f.s3.unwrap().prefix, "p");
        assert_eq!(f.error.unwrap().message.as_deref(), Some("boom"));
        assert_eq!(f.metadata["a"], "b");
    }

    #[test]
    fn reads_storage_node_token_hash_deletion_time_and_state() {
        let f = SnapshotFile::from_json(&json!({
            "metadata": {"name": "local-x", "deletionTimestamp": "2024-05-31T12:00:00Z",
                         "labels": {"etcd.rke2.cattle.io/snapshot-storage-node": "n1", "app": "x"},
                         "annotations": {"etcd.rke2.cattle.io/snapshot-token-hash": "37831a857fac",
                                         "kubectl.kubernetes.io/last-applied-configuration": "{}"}},
            "status": {"readyToUse": true}
        }));
        assert_eq!(f.storage_node(Distro::Rke2), Some("n1"));
        assert_eq!(f.storage_node(Distro::K3s), None);
        assert_eq!(f.token_hash(Distro::Rke2), Some("37831a857fac"));
        assert_eq!(
            f.labels.len() + f.annotations.len(),
            2,
            "only k3s's keys are kept"
        );
        assert_eq!(
            f.deletion_time,
            Some("2024-05-31T12:00:00Z".parse().unwrap())
        );
        assert_eq!(f.file_state(), FileState::Terminating);
        let failed = SnapshotFile::from_json(&json!({"status": {"readyToUse": false,
            "error": {"time": "2024-05-31T11:00:00Z", "message": "no space"}}}));
        assert!(failed.is_failed());
        assert_eq!(failed.file_state(), FileState::Failed);
        assert_eq!(
            failed.taken_at(),
            Some("2024-05-31T11:00:00Z".parse().unwrap())
        );
        assert_eq!(
            SnapshotFile::from_json(&json!({})).file_state(),
            FileState::Pending
        );
        let ready = SnapshotFile::from_json(&json!({"status": {"readyToUse": true}}));
        assert_eq!(
            (ready.file_state(), ready.is_failed()),
            (FileState::Ready, false)
        );
    }
}
