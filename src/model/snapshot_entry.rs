//! Values of the `<prog>-etcd-snapshots` ConfigMap: k3s's `snapshot.File` record
//! (`pkg/etcd/snapshot/types.go`). The encoder reproduces k3s's bytes exactly (Go struct
//! order, omitempty, Go string escaping, base64 metadata and message); the decoder accepts
//! anything k3s ever wrote and keeps what it does not know.

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use jiff::Timestamp;
use serde::Serialize;
use serde_json::Value;

use super::go_json::{GoEscaping, ObjectWriter, string_map};
use super::snapshot_file::SnapshotFile;

pub(crate) use crate::version::shapes::S3Shape;

/// What k3s writes for a failed snapshot without a message (`FromETCDSnapshotFile`).
const DEFAULT_FAILURE: &str = "etcd snapshot failed";

#[cfg(test)]
/// The exact value a k3s built with Go 1.22 or later writes for this CR.
pub(crate) fn encode(file: &SnapshotFile, shape: S3Shape) -> String {
    encode_for(file, shape, GoEscaping::Go122)
}

/// The exact value k3s writes for this CR, for the writer's `s3Config` shape and Go release.
pub(crate) fn encode_for(file: &SnapshotFile, shape: S3Shape, escaping: GoEscaping) -> String {
    let mut w = ObjectWriter::new(escaping);
    w.string("name", &file.snapshot_name);
    w.string_omitempty("location", &file.location);
    if !file.metadata.is_empty() {
        w.string(
            "metadata",
            &BASE64.encode(string_map(&file.metadata, escaping)),
        );
    }
    if let Some(error) = &file.error {
        // An empty message encodes to "", which omitempty drops.
        let message = error.message.as_deref().unwrap_or(DEFAULT_FAILURE);
        w.string_omitempty("message", &BASE64.encode(message));
    }
    w.string_omitempty(
        "nodeName",
        if file.is_s3() { "s3" } else { &file.node_name },
    );
    let created = file
        .error
        .as_ref()
        .and_then(|e| e.time)
        .or(file.creation_time);
    if let Some(t) = created {
        // metav1.Time: RFC 3339 in UTC, whole seconds.
        w.string("createdAt", &t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string());
    }
    w.int_omitempty("size", file.size_bytes().unwrap_or(0));
    w.string(
        "status",
        if file.ready_to_use {
            "successful"
        } else {
            "failed"
        },
    );
    if let Some(s3) = &file.s3 {
        let mut c = ObjectWriter::new(escaping);
        match shape {
            S3Shape::Legacy => {
                c.string_omitempty("endpoint", &s3.endpoint);
                c.string_omitempty("endpointCA", &s3.endpoint_ca);
                c.bool_omitempty("skipSSLVerify", s3.skip_ssl_verify);
                c.string_omitempty("bucket", &s3.bucket);
                c.string_omitempty("region", &s3.region);
                c.string_omitempty("folder", &s3.prefix);
                c.bool_omitempty("insecure", s3.insecure);
            }
            S3Shape::Embedded => {
                c.string_omitempty("bucket", &s3.bucket);
                c.string_omitempty("bucketLookup", &s3.bucket_lookup);
                c.string_omitempty("endpoint", &s3.endpoint);
                c.string_omitempty("endpointCA", &s3.endpoint_ca);
                c.string_omitempty("folder", &s3.prefix);
                c.string_omitempty("region", &s3.region);
                c.bool_omitempty("insecure", s3.insecure);
                c.bool_omitempty("skipSSLVerify", s3.skip_ssl_verify);
                // metav1.Duration is a struct: omitempty cannot drop it.
                c.string("timeout", "0s");
            }
        }
        w.raw("s3Config", &c.finish());
    }
    w.bool("compressed", file.snapshot_name.ends_with(".zip"));
    w.finish()
}

/// A decoded ConfigMap value.
#[derive(Debug, Clone, PartialEq, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SnapshotEntry {
    pub name: String,
    pub location: String,
    /// The extra metadata, decoded from base64 JSON; `Err` when it does not decode.
    #[serde(skip)]
    pub metadata: Option<Result<BTreeMap<String, String>, String>>,
    /// The failure message, decoded from base64.
    pub message: Option<String>,
    pub node_name: String,
    pub created_at: Option<Timestamp>,
    pub size: i64,
    pub status: String,
    pub s3_config: Option<BTreeMap<String, Value>>,
    pub compressed: bool,
    /// Fields this version of k3sdoctor does not know, kept by name.
    pub unknown_fields: Vec<String>,
}

const KNOWN_FIELDS: [&str; 10] = [
    "name",
    "location",
    "metadata",
    "message",
    "nodeName",
    "createdAt",
    "size",
    "status",
    "s3Config",
    "compressed",
];

pub(crate) fn decode(value: &str) -> Result<SnapshotEntry, String> {
    let v: Value = serde_json::from_str(value).map_err(|e| format!("not JSON: {e}"))?;
    let obj = v.as_object().ok_or("not a JSON object")?;
    let text = |k: &str| {
        obj.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let metadata = obj
        .get("metadata")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(|b64| {
            let bytes = BASE64
                .decode(b64)
                .map_err(|e| format!("metadata is not base64: {e}"))?;
            serde_json::from_slice::<BTreeMap<String, String>>(&bytes)
                .map_err(|e| format!("metadata is not a JSON map: {e}"))
        });
    let message = obj
        .get("message")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(|b64| {
            BASE64
                .decode(b64)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .unwrap_or_else(|| b64.to_string())
        });
    Ok(SnapshotEntry {
        name: text("name"),
        location: text("location"),
        metadata,
        message,
        node_name: text("nodeName"),
        created_at: obj
            .get("createdAt")
            .and_then(Value::as_str)
            .and_then(|t| t.parse().ok()),
        size: obj.get("size").and_then(Value::as_i64).unwrap_or(0),
        status: text("status"),
        s3_config: obj
            .get("s3Config")
            .and_then(Value::as_object)
            .map(|m| m.clone().into_iter().collect()),
        compressed: obj
            .get("compressed")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        unknown_fields: obj
            .keys()
            .filter(|k| !KNOWN_FIELDS.contains(&k.as_str()))
            .cloned()
            .collect(),
    })
}

impl SnapshotEntry {
    /// The record as k3s rebuilds a CR from a ConfigMap entry (`ToETCDSnapshotFile`), so that
    /// `encode(entry.to_snapshot_file(), entry.s3_shape())` gives the entry's bytes back.
    pub(crate) fn to_snapshot_file(&self) -> SnapshotFile {
        let text = |m: &BTreeMap<String, Value>, k: &str| {
            m.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let flag = |m: &BTreeMap<String, Value>, k: &str| {
            m.get(k).and_then(Value::as_bool).unwrap_or(false)
        };
        SnapshotFile {
            snapshot_name: self.name.as_str().into(),
            node_name: std::sync::Arc::new(self.node_name.clone()),
            location: self.location.as_str().into(),
            metadata: std::sync::Arc::new(
                self.metadata
                    .clone()
                    .and_then(Result::ok)
                    .unwrap_or_default(),
            ),
            s3: self
                .s3_config
                .as_ref()
                .map(|m| super::snapshot_file::S3Spec {
                    endpoint: text(m, "endpoint"),
                    endpoint_ca: text(m, "endpointCA"),
                    skip_ssl_verify: flag(m, "skipSSLVerify"),
                    bucket: text(m, "bucket"),
                    bucket_lookup: text(m, "bucketLookup"),
                    region: text(m, "region"),
                    prefix: text(m, "folder"),
                    insecure: flag(m, "insecure"),
                })
                .map(std::sync::Arc::new),
            creation_time: self.created_at,
            ready_to_use: self.status == "successful",
            size: Ok(self.size),
            error: self.message.as_ref().map(|m| {
                Box::new(super::snapshot_file::SnapshotError {
                    time: self.created_at,
                    message: Some(m.clone()),
                })
            }),
            ..SnapshotFile::default()
        }
    }

    #[cfg(test)]
    /// The `s3Config` shape the entry was written in.
    pub(crate) fn s3_shape(&self) -> S3Shape {
        match &self.s3_config {
            Some(m) if !m.contains_key("timeout") => S3Shape::Legacy,
            _ => S3Shape::Embedded,
        }
    }
}

/// One field that differs between what k3s would write and what the ConfigMap holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub(crate) struct FieldDifference {
    pub field: String,
    pub expected: String,
    pub found: String,
}

/// Field-level differences, ignoring encodings that carry the same meaning (the two
/// `s3Config` shapes, `"timeout":"0s"`, omitted zero values).
pub(crate) fn differences(expected: &SnapshotEntry, found: &SnapshotEntry) -> Vec<FieldDifference> {
    let mut diffs = Vec::new();
    let mut check = |field: &str, e: String, f: String| {
        if e != f {
            diffs.push(FieldDifference {
                field: field.to_string(),
                expected: e,
                found: f,
            });
        }
    };
    check("name", expected.name.clone(), found.name.clone());
    check(
        "location",
        expected.location.clone(),
        found.location.clone(),
    );
    check(
        "metadata",
        shown_metadata(&expected.metadata),
        shown_metadata(&found.metadata),
    );
    check(
        "message",
        expected.message.clone().unwrap_or_default(),
        found.message.clone().unwrap_or_default(),
    );
    check(
        "nodeName",
        expected.node_name.clone(),
        found.node_name.clone(),
    );
    let time = |t: &Option<Timestamp>| t.map(|t| t.to_string()).unwrap_or_default();
    check(
        "createdAt",
        time(&expected.created_at),
        time(&found.created_at),
    );
    check("size", expected.size.to_string(), found.size.to_string());
    check("status", expected.status.clone(), found.status.clone());
    check(
        "s3Config",
        shown_s3(&expected.s3_config),
        shown_s3(&found.s3_config),
    );
    check(
        "compressed",
        expected.compressed.to_string(),
        found.compressed.to_string(),
    );
    diffs
}

fn shown_metadata(m: &Option<Result<BTreeMap<String, String>, String>>) -> String {
    match m {
        None => String::new(),
        Some(Ok(map)) => serde_json::to_string(map).unwrap_or_default(),
        Some(Err(e)) => format!("(undecodable: {e})"),
    }
}

fn shown_s3(m: &Option<BTreeMap<String, Value>>) -> String {
    let Some(map) = m else { return String::new() };
    let meaningful: BTreeMap<&String, &Value> = map
        .iter()
        .filter(|(k, v)| {
            k.as_str() != "timeout"
                && !matches!(v, Value::Bool(false) | Value::Null)
                && v.as_str() != Some("")
        })
        .collect();
    serde_json::to_string(&meaningful).unwrap_or_default()
}

#[cfg(test)]
mod tests;
