//! ETCDSnapshotFile (`k3s.cattle.io/v1`, cluster-scoped) as k3sdoctor needs it. Parsed from
//! JSON tolerantly: a missing or odd field is recorded, never a reason to reject the object.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde_json::Value;

use super::quantity::parse_quantity;

/// Finalizer the snapshot ConfigMap controller adds on first sync (wrangler `pkg/generic/remove.go`).
pub const CONTROLLER_FINALIZER: &str = "wrangler.cattle.io/managed-etcd-snapshots-controller";

#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotFile {
    pub name: String,
    pub created: Option<Timestamp>,
    pub deleting: bool,
    pub finalizers: Vec<String>,
    /// `spec.snapshotName`: the file name, with `.zip` when compressed.
    pub snapshot_name: String,
    /// `spec.nodeName`: the node that took (or uploaded) it; `s3` when unknown.
    pub node_name: String,
    pub location: String,
    /// `spec.metadata`: the extra-metadata ConfigMap's data at snapshot time.
    pub metadata: BTreeMap<String, String>,
    pub s3: Option<S3Spec>,
    pub creation_time: Option<Timestamp>,
    pub ready_to_use: bool,
    /// `status.size` in bytes; `Err` carries the raw text that is not a quantity.
    pub size: Result<i64, String>,
    pub error: Option<SnapshotError>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct S3Spec {
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
pub struct SnapshotError {
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

fn flag(v: &Value, pointer: &str) -> bool {
    v.pointer(pointer).and_then(Value::as_bool).unwrap_or(false)
}

impl Default for SnapshotFile {
    fn default() -> SnapshotFile {
        SnapshotFile::from_json(&Value::Null)
    }
}

impl SnapshotFile {
    pub fn from_json(v: &Value) -> SnapshotFile {
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
            });
        let error = v
            .pointer("/status/error")
            .filter(|e| e.is_object())
            .map(|_| SnapshotError {
                time: time(v, "/status/error/time"),
                message: v
                    .pointer("/status/error/message")
                    .and_then(Value::as_str)
                    .map(str::to_string),
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
        SnapshotFile {
            name: text(v, "/metadata/name"),
            created: time(v, "/metadata/creationTimestamp"),
            deleting: v
                .pointer("/metadata/deletionTimestamp")
                .is_some_and(|d| !d.is_null()),
            finalizers: v
                .pointer("/metadata/finalizers")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
            snapshot_name: text(v, "/spec/snapshotName"),
            node_name: text(v, "/spec/nodeName"),
            location: text(v, "/spec/location"),
            metadata,
            s3,
            creation_time: time(v, "/status/creationTime"),
            ready_to_use: flag(v, "/status/readyToUse"),
            size,
            error,
        }
    }

    pub fn is_s3(&self) -> bool {
        self.s3.is_some()
    }

    pub fn has_controller_finalizer(&self) -> bool {
        self.finalizers.iter().any(|f| f == CONTROLLER_FINALIZER)
    }

    /// The size to report; an unparseable one counts as unknown.
    pub fn size_bytes(&self) -> Option<i64> {
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
            (empty.name.as_str(), empty.ready_to_use, empty.size.clone()),
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
}
