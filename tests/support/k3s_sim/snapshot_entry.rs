//! The `<prog>-etcd-snapshots` ConfigMap entry of one ETCDSnapshotFile, byte for byte as k3s
//! writes it: `File.FromETCDSnapshotFile` + `json.Marshal` (`pkg/etcd/snapshot/types.go`;
//! before that `snapshotFile.fromETCDSnapshotFile` in `pkg/etcd/snapshot.go`), and the data key
//! (`generateETCDSnapshotFileConfigMapKey`). An independent implementation for tests to compare
//! the product's encoder against; it follows k3s's `snapshot.File` encoding, not the product code.

use serde_json::Value;

use super::go_json::{self, Object};
use super::go_time::time_from_json;
use super::quantity::quantity_value;

/// Which `s3Config` struct the simulated k3s marshals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum S3ConfigShape {
    /// Up to k3s v1.29.6 / v1.30.2: its own `s3Config` struct (`endpoint`, `endpointCA`,
    /// `skipSSLVerify`, `bucket`, `region`, `folder`, `insecure`, all omitempty).
    Legacy,
    /// From k3s v1.29.7 (commit c36db53e): `snapshot.S3Config` embedding `config.EtcdS3` with
    /// the secrets masked; fields in `EtcdS3` order and always `"timeout":"0s"` last.
    #[default]
    Embedded,
}

/// `local-` or `s3-` (iff `spec.s3` is set) + `spec.snapshotName` with every character outside
/// `[-._a-zA-Z0-9]` replaced by `_` (Go's regexp replaces whole runes, so one `_` per char).
pub(crate) fn data_key(cr: &Value) -> String {
    let prefix = if is_s3(cr) { "s3-" } else { "local-" };
    let name: String = text(&cr["spec"]["snapshotName"])
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{prefix}{name}")
}

/// Whether the CR has non-empty `spec.metadata` (the eligibility rule of k3s ≥ v1.28.4).
pub(crate) fn has_metadata(cr: &Value) -> bool {
    cr["spec"]["metadata"]
        .as_object()
        .is_some_and(|m| !m.is_empty())
}

fn is_s3(cr: &Value) -> bool {
    cr["spec"]["s3"].is_object()
}

/// A Go `string` field: non-strings (which Go would refuse to decode) read as empty.
fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

/// The exact value k3s stores under `data_key(cr)`.
pub(crate) fn entry_value(cr: &Value, shape: S3ConfigShape) -> String {
    let (spec, status) = (&cr["spec"], &cr["status"]);
    let name = text(&spec["snapshotName"]);

    let mut created_at = time_from_json(&status["creationTime"]);
    let mut message = String::new();
    if status["error"].is_object() {
        let error = &status["error"];
        if let Some(t) = time_from_json(&error["time"]) {
            created_at = Some(t);
        }
        let text = error["message"].as_str().unwrap_or("etcd snapshot failed");
        message = go_json::base64_std(text.as_bytes());
    }

    let metadata = match spec["metadata"].as_object() {
        Some(m) if !m.is_empty() => {
            let entries: Vec<(String, String)> = m
                .iter()
                .map(|(k, v)| {
                    let v = match v {
                        Value::String(s) => s.clone(),
                        Value::Null => String::new(),
                        other => other.to_string(),
                    };
                    (k.clone(), v)
                })
                .collect();
            go_json::base64_std(go_json::string_map(&entries).as_bytes())
        }
        _ => String::new(),
    };

    let node_name = if is_s3(cr) {
        "s3"
    } else {
        text(&spec["nodeName"])
    };
    let status_text = if status["readyToUse"] == Value::Bool(true) {
        "successful"
    } else {
        "failed"
    };

    let mut out = Object::new();
    out.string("name", name)
        .string_omitempty("location", text(&spec["location"]))
        .string_omitempty("metadata", &metadata)
        .string_omitempty("message", &message)
        .string_omitempty("nodeName", node_name);
    if let Some(t) = created_at {
        out.raw("createdAt", &t.to_json());
    }
    out.int_omitempty("size", quantity_value(&status["size"]).unwrap_or(0))
        .string("status", status_text);
    if is_s3(cr) {
        out.raw("s3Config", &s3_config(&spec["s3"], shape));
    }
    out.bool("compressed", name.ends_with(".zip"));
    out.finish()
}

/// `s3Config` from `spec.s3` (`prefix` becomes `folder`).
fn s3_config(s3: &Value, shape: S3ConfigShape) -> String {
    let s = |key: &str| text(&s3[key]);
    let b = |key: &str| s3[key] == Value::Bool(true);
    let mut out = Object::new();
    match shape {
        S3ConfigShape::Legacy => {
            out.string_omitempty("endpoint", s("endpoint"))
                .string_omitempty("endpointCA", s("endpointCA"))
                .bool_omitempty("skipSSLVerify", b("skipSSLVerify"))
                .string_omitempty("bucket", s("bucket"))
                .string_omitempty("region", s("region"))
                .string_omitempty("folder", s("prefix"))
                .bool_omitempty("insecure", b("insecure"));
        }
        S3ConfigShape::Embedded => {
            // EtcdS3 fields first (accessKey/configSecret/proxy/secretKey are shadowed by the
            // empty masking fields; sessionToken and retention are never set from a CR), then
            // the masking fields, of which only the non-omittable struct `timeout` shows.
            out.string_omitempty("bucket", s("bucket"))
                .string_omitempty("bucketLookup", s("bucketLookup"))
                .string_omitempty("endpoint", s("endpoint"))
                .string_omitempty("endpointCA", s("endpointCA"))
                .string_omitempty("folder", s("prefix"))
                .string_omitempty("region", s("region"))
                .bool_omitempty("insecure", b("insecure"))
                .bool_omitempty("skipSSLVerify", b("skipSSLVerify"))
                .string("timeout", "0s");
        }
    }
    out.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;
    use serde_json::json;

    /// A local ETCDSnapshotFile as k3s v1.29 writes it.
    fn local_cr() -> Value {
        json!({
            "apiVersion": "k3s.cattle.io/v1",
            "kind": "ETCDSnapshotFile",
            "metadata": {
                "name": "local-etcd-snapshot-server-1-1717156805-4056ed",
                "labels": { "etcd.k3s.cattle.io/snapshot-storage-node": "server-1" },
                "annotations": { "etcd.k3s.cattle.io/snapshot-token-hash": "5f1c0a9e77d2" },
                "finalizers": [ "wrangler.cattle.io/managed-etcd-snapshots-controller" ],
                "creationTimestamp": "2024-05-31T12:00:06Z"
            },
            "spec": {
                "snapshotName": "etcd-snapshot-server-1-1717156805",
                "nodeName": "server-1",
                "location": "file:///var/lib/rancher/k3s/server/db/snapshots/etcd-snapshot-server-1-1717156805",
                "metadata": { "cluster": "prod-a", "note": "example" }
            },
            "status": {
                "creationTime": "2024-05-31T12:00:05Z",
                "readyToUse": true,
                "size": "8417312"
            }
        })
    }

    /// Its S3 twin.
    fn s3_cr() -> Value {
        let mut cr = local_cr();
        cr["metadata"]["name"] = json!("s3-etcd-snapshot-server-1-1717156805-b84088");
        cr["metadata"]["labels"]["etcd.k3s.cattle.io/snapshot-storage-node"] = json!("s3");
        cr["spec"]["location"] =
            json!("s3://k3s-backups/cluster-a/etcd-snapshot-server-1-1717156805");
        cr["spec"]["s3"] = json!({"endpoint": "s3.amazonaws.com", "bucket": "k3s-backups",
                                  "region": "us-east-1", "prefix": "cluster-a"});
        cr
    }

    fn decode(b64: &str) -> String {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap();
        String::from_utf8(bytes).unwrap()
    }

    fn field(value: &str, key: &str) -> Value {
        serde_json::from_str::<Value>(value).unwrap()[key].clone()
    }

    #[test]
    fn facts_9_2_local_entry() {
        let cr = local_cr();
        assert_eq!(data_key(&cr), "local-etcd-snapshot-server-1-1717156805");
        assert_eq!(
            entry_value(&cr, S3ConfigShape::Embedded),
            r#"{"name":"etcd-snapshot-server-1-1717156805","location":"file:///var/lib/rancher/k3s/server/db/snapshots/etcd-snapshot-server-1-1717156805","metadata":"eyJjbHVzdGVyIjoicHJvZC1hIiwibm90ZSI6ImV4YW1wbGUifQ==","nodeName":"server-1","createdAt":"2024-05-31T12:00:05Z","size":8417312,"status":"successful","compressed":false}"#
        );
        // The shape only matters for S3 entries.
        assert_eq!(
            entry_value(&cr, S3ConfigShape::Legacy),
            entry_value(&cr, S3ConfigShape::Embedded)
        );
    }

    #[test]
    fn facts_9_2_s3_entry_embedded_shape() {
        let cr = s3_cr();
        assert_eq!(data_key(&cr), "s3-etcd-snapshot-server-1-1717156805");
        assert_eq!(
            entry_value(&cr, S3ConfigShape::Embedded),
            r#"{"name":"etcd-snapshot-server-1-1717156805","location":"s3://k3s-backups/cluster-a/etcd-snapshot-server-1-1717156805","metadata":"eyJjbHVzdGVyIjoicHJvZC1hIiwibm90ZSI6ImV4YW1wbGUifQ==","nodeName":"s3","createdAt":"2024-05-31T12:00:05Z","size":8417312,"status":"successful","s3Config":{"bucket":"k3s-backups","endpoint":"s3.amazonaws.com","folder":"cluster-a","region":"us-east-1","timeout":"0s"},"compressed":false}"#
        );
    }

    #[test]
    fn s3_entry_legacy_shape() {
        assert_eq!(
            entry_value(&s3_cr(), S3ConfigShape::Legacy),
            r#"{"name":"etcd-snapshot-server-1-1717156805","location":"s3://k3s-backups/cluster-a/etcd-snapshot-server-1-1717156805","metadata":"eyJjbHVzdGVyIjoicHJvZC1hIiwibm90ZSI6ImV4YW1wbGUifQ==","nodeName":"s3","createdAt":"2024-05-31T12:00:05Z","size":8417312,"status":"successful","s3Config":{"endpoint":"s3.amazonaws.com","bucket":"k3s-backups","region":"us-east-1","folder":"cluster-a"},"compressed":false}"#
        );
    }

    #[test]
    fn s3_config_all_fields_in_both_shapes() {
        let mut cr = s3_cr();
        cr["spec"]["s3"] = json!({"endpoint": "minio:9000", "endpointCA": "/etc/ca.pem",
            "skipSSLVerify": true, "bucket": "b", "bucketLookup": "path", "region": "r",
            "prefix": "p/q", "insecure": true});
        let s3 = |cr: &Value, shape| field(&entry_value(cr, shape), "s3Config").to_string();
        let legacy = entry_value(&cr, S3ConfigShape::Legacy);
        assert!(legacy.contains(r#""s3Config":{"endpoint":"minio:9000","endpointCA":"/etc/ca.pem","skipSSLVerify":true,"bucket":"b","region":"r","folder":"p/q","insecure":true}"#), "{legacy}");
        let embedded = entry_value(&cr, S3ConfigShape::Embedded);
        assert!(embedded.contains(r#""s3Config":{"bucket":"b","bucketLookup":"path","endpoint":"minio:9000","endpointCA":"/etc/ca.pem","folder":"p/q","region":"r","insecure":true,"skipSSLVerify":true,"timeout":"0s"},"compressed":false}"#), "{embedded}");
        // An empty spec.s3 is still an S3 record.
        cr["spec"]["s3"] = json!({});
        assert_eq!(s3(&cr, S3ConfigShape::Legacy), "{}");
        assert_eq!(s3(&cr, S3ConfigShape::Embedded), r#"{"timeout":"0s"}"#);
        assert!(data_key(&cr).starts_with("s3-"));
    }

    #[test]
    fn failed_snapshot_entry() {
        let mut cr = local_cr();
        cr["spec"]["snapshotName"] = json!("on-demand-server-1-1717156805.zip");
        cr["spec"]["location"] = json!("file:///snapshots/on-demand-server-1-1717156805.zip");
        cr["status"] = json!({"creationTime": "2024-05-31T12:00:05Z", "readyToUse": false,
            "size": "0", "error": {"time": "2024-05-31T12:01:07.123456Z",
            "message": "context deadline exceeded"}});
        assert_eq!(
            entry_value(&cr, S3ConfigShape::Embedded),
            r#"{"name":"on-demand-server-1-1717156805.zip","location":"file:///snapshots/on-demand-server-1-1717156805.zip","metadata":"eyJjbHVzdGVyIjoicHJvZC1hIiwibm90ZSI6ImV4YW1wbGUifQ==","message":"Y29udGV4dCBkZWFkbGluZSBleGNlZWRlZA==","nodeName":"server-1","createdAt":"2024-05-31T12:01:07Z","status":"failed","compressed":true}"#
        );
        // No message → the default text; no error time → creationTime; no readyToUse → failed.
        cr["status"] = json!({"creationTime": "2024-05-31T12:00:05Z", "error": {}});
        let v = entry_value(&cr, S3ConfigShape::Embedded);
        assert_eq!(
            decode(field(&v, "message").as_str().unwrap()),
            "etcd snapshot failed"
        );
        assert_eq!(field(&v, "createdAt"), "2024-05-31T12:00:05Z");
        assert_eq!(field(&v, "status"), "failed");
        assert_eq!(field(&v, "size"), Value::Null);
        // An empty message is base64 of "" = "", so omitted.
        cr["status"]["error"] = json!({"message": ""});
        assert!(!entry_value(&cr, S3ConfigShape::Embedded).contains("message"));
    }

    #[test]
    fn minimal_cr_omits_empty_fields() {
        let cr = json!({"spec": {"snapshotName": "x"}});
        assert_eq!(
            entry_value(&cr, S3ConfigShape::Embedded),
            r#"{"name":"x","status":"failed","compressed":false}"#
        );
        let cr = json!({"spec": {"snapshotName": "x", "metadata": {}},
                        "status": {"creationTime": "0001-01-01T00:00:00Z"}});
        assert_eq!(
            entry_value(&cr, S3ConfigShape::Embedded),
            r#"{"name":"x","createdAt":null,"status":"failed","compressed":false}"#
        );
        assert!(!has_metadata(&cr));
    }

    #[test]
    fn escaping_in_fields_and_metadata() {
        let mut cr = local_cr();
        cr["spec"]["metadata"] = json!({
            "zeta": "a<b>&c",
            "Alpha": "line\u{2028}sep\u{2029}",
            "quote": "say \"hi\" \\ bye",
            "ctl": "\u{1}\t\n\r\u{8}\u{c}\u{1f}\u{7f}",
            "é": "naïve ☃ 🙂",
        });
        cr["spec"]["location"] = json!("file:///d/<x>&\"y\"");
        cr["spec"]["nodeName"] = json!("nöde\u{2028}");
        let v = entry_value(&cr, S3ConfigShape::Embedded);
        assert!(
            v.contains(r#""location":"file:///d/\u003cx\u003e\u0026\"y\"""#),
            "{v}"
        );
        assert!(v.contains("\"nodeName\":\"nöde\\u2028\""), "{v}");
        let metadata = decode(field(&v, "metadata").as_str().unwrap());
        assert_eq!(
            metadata,
            concat!(
                r#"{"Alpha":"line\u2028sep\u2029","ctl":"\u0001\t\n\r\b\f\u001f"#,
                "\u{7f}",
                r#"","quote":"say \"hi\" \\ bye","zeta":"a\u003cb\u003e\u0026c","#,
                r#""é":"naïve ☃ 🙂"}"#
            )
        );
    }

    #[test]
    fn keys_replace_disallowed_characters() {
        let key = |name: &str, s3: bool| {
            let mut cr = json!({"spec": {"snapshotName": name}});
            if s3 {
                cr["spec"]["s3"] = json!({"bucket": "b"});
            }
            data_key(&cr)
        };
        assert_eq!(
            key("on-demand:node/1 é.zip", false),
            "local-on-demand_node_1__.zip"
        );
        assert_eq!(key("a🙂b_C-9.", true), "s3-a_b_C-9.");
        assert_eq!(key("", false), "local-");
        // spec.s3: null is no S3 record.
        assert_eq!(
            data_key(&json!({"spec": {"snapshotName": "n", "s3": null}})),
            "local-n"
        );
    }

    #[test]
    fn sizes_from_quantities() {
        let size = |q: Value| {
            let mut cr = local_cr();
            cr["status"]["size"] = q;
            field(&entry_value(&cr, S3ConfigShape::Embedded), "size")
        };
        assert_eq!(size(json!("8417k")), json!(8_417_000));
        assert_eq!(size(json!("12Mi")), json!(12_582_912));
        assert_eq!(size(json!(5_328_929)), json!(5_328_929));
        assert_eq!(size(json!("1500m")), json!(2));
        assert_eq!(size(json!("0")), Value::Null);
        assert_eq!(size(json!(0)), Value::Null);
        assert_eq!(size(Value::Null), Value::Null);
    }
}
