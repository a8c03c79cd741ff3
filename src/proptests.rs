//! Property tests: no parser panics on any input, and every encoder round-trips through its
//! decoder. Case counts are bounded so `cargo test` stays fast.

// Test-only (declared under `#[cfg(test)]`): its panics are assertions, never reached on
// bad input.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_json::{Value, json};

use crate::cli::parse_request_timeout;
use crate::input::dump::read_dump;
use crate::model::lock::LockRecord;
use crate::model::quantity::parse_quantity;
use crate::model::snapshot_entry::{S3Shape, decode, differences, encode};
use crate::model::snapshot_file::SnapshotFile;
use crate::model::snapshot_key::{data_key, key_timestamp, name_digest_mismatch};
use crate::version::ProductVersion;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        ..ProptestConfig::default()
    }
}

/// Arbitrary JSON, a few levels deep, with keys k3sdoctor looks at mixed in.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        ".{0,12}".prop_map(Value::String),
        Just(json!("2024-05-31T12:10:33.918204Z")),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        let keys = prop_oneof![
            Just("kind".to_string()),
            Just("apiVersion".to_string()),
            Just("metadata".to_string()),
            Just("spec".to_string()),
            Just("status".to_string()),
            Just("items".to_string()),
            Just("name".to_string()),
            Just("size".to_string()),
            "[a-zA-Z]{1,8}",
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(keys, inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// An object that claims to be one of the kinds the dump reader types, with arbitrary content.
fn api_object() -> impl Strategy<Value = Value> {
    let kinds = prop_oneof![
        Just(("v1", "Node")),
        Just(("v1", "ConfigMap")),
        Just(("coordination.k8s.io/v1", "Lease")),
        Just(("k3s.cattle.io/v1", "ETCDSnapshotFile")),
        Just(("v1", "List")),
    ];
    (kinds, json_value(), json_value(), "[a-z0-9.-]{1,12}").prop_map(|((api, kind), spec, status, name)| {
        json!({"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": "kube-system"},
               "spec": spec, "status": status, "data": {"k": "v"}, "items": [spec.clone()]})
    })
}

fn snapshot_file() -> impl Strategy<Value = SnapshotFile> {
    let text = ".{0,16}";
    (
        (text, text, text, prop::collection::btree_map("[ -~é<>&\u{2028}]{0,6}", text, 0..3)),
        (any::<bool>(), 0i64..i64::MAX, any::<bool>(), prop::option::of(text)),
        (any::<bool>(), text, text),
        0i64..4_000_000_000,
    )
        .prop_map(|((name, node, location, metadata), (ready, size, failed, message), (s3, bucket, prefix), ts)| {
            let mut cr = json!({
                "metadata": {"name": "x"},
                "spec": {"snapshotName": name, "nodeName": node, "location": location, "metadata": metadata},
                "status": {"readyToUse": ready, "size": size,
                           "creationTime": jiff::Timestamp::from_second(ts).unwrap().to_string()}
            });
            if failed {
                cr["status"]["error"] = json!({"message": message});
            }
            if s3 {
                cr["spec"]["s3"] = json!({"bucket": bucket, "prefix": prefix, "skipSSLVerify": true});
            }
            SnapshotFile::from_json(&cr)
        })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn versions_never_panic(text in ".{0,40}") {
        if let Ok(v) = ProductVersion::parse(&text) {
            let _ = (v.split_impact(), v.lock_style(), v.entries_need_metadata(), v.s3_config_shape(), v.has_etcd_lock());
        }
    }

    #[test]
    fn generated_versions_parse_and_print_back(
        minor in 0u64..40, patch in 0u64..30, rc in prop::option::of(1u32..5), build in prop_oneof![
            (1u32..5).prop_map(|n| format!("k3s{n}")),
            "[0-9a-f]{8}".prop_map(|c| format!("k3s-{c}")),
            (1u32..5).prop_map(|n| format!("rke2r{n}")),
        ]
    ) {
        let text = format!("v1.{minor}.{patch}{}+{build}", rc.map(|n| format!("-rc{n}")).unwrap_or_default());
        let v = ProductVersion::parse(&text).unwrap();
        prop_assert_eq!(v.to_string(), text);
        prop_assert_eq!((v.minor, v.patch), (minor, patch));
        let _ = v.split_impact();
    }

    #[test]
    fn quantities_never_panic(text in ".{0,24}") {
        let _ = parse_quantity(&text);
    }

    #[test]
    fn integer_quantities_round_trip(n in 0i64..(i64::MAX / 1024), k in 0i64..9_000_000_000_000) {
        prop_assert_eq!(parse_quantity(&n.to_string()), Ok(n));
        prop_assert_eq!(parse_quantity(&format!("{k}k")), Ok(k * 1000));
        prop_assert_eq!(parse_quantity(&format!("{}Ki", n / 1024)), Ok(n / 1024 * 1024));
    }

    #[test]
    fn configmap_values_never_panic(text in ".{0,64}") {
        let _ = decode(&text);
        let _ = key_timestamp(&text);
    }

    #[test]
    fn lease_annotations_never_panic(text in ".{0,64}", value in json_value()) {
        let _ = LockRecord::from_annotation(&text);
        let _ = LockRecord::from_annotation(&value.to_string());
    }

    #[test]
    fn request_timeouts_never_panic(text in ".{0,16}") {
        let _ = parse_request_timeout(&text);
    }

    #[test]
    fn snapshot_files_from_any_json_never_panic(value in json_value()) {
        let file = SnapshotFile::from_json(&value);
        let _ = (data_key(&file), name_digest_mismatch(&file), encode(&file, S3Shape::Legacy));
    }

    #[test]
    fn the_encoder_round_trips_through_the_decoder(file in snapshot_file(), embedded in any::<bool>()) {
        let shape = if embedded { S3Shape::Embedded } else { S3Shape::Legacy };
        let value = encode(&file, shape);
        // Valid JSON whose strings decode to what went in.
        let parsed: Value = serde_json::from_str(&value).unwrap();
        prop_assert_eq!(parsed["name"].as_str().unwrap(), &*file.snapshot_name);
        let entry = decode(&value).unwrap();
        prop_assert_eq!(entry.location.as_str(), &*file.location);
        if !file.metadata.is_empty() {
            prop_assert_eq!(&entry.metadata.clone().unwrap().unwrap(), &*file.metadata);
        }
        prop_assert!(entry.unknown_fields.is_empty());
        // And back, as k3s rebuilds a record from an entry: the same bytes.
        let rebuilt_shape = if file.is_s3() { shape } else { entry.s3_shape() };
        prop_assert_eq!(encode(&entry.to_snapshot_file(), rebuilt_shape), value.clone());
        prop_assert!(differences(&entry, &decode(&encode(&file, shape)).unwrap()).is_empty());
        // The two s3Config shapes carry the same meaning.
        let other = if embedded { S3Shape::Legacy } else { S3Shape::Embedded };
        prop_assert!(differences(&entry, &decode(&encode(&file, other)).unwrap()).is_empty());
    }

    #[test]
    fn dump_files_never_panic(text in ".{0,200}", objects in prop::collection::vec(api_object(), 0..4)) {
        let dir = tempfile::tempdir().unwrap();
        let garbage = dir.path().join("garbage.yaml");
        std::fs::write(&garbage, &text).unwrap();
        let _ = read_dump(&[garbage], Default::default());
        let list = dir.path().join("list.json");
        std::fs::write(&list, json!({"kind": "List", "apiVersion": "v1", "items": objects}).to_string()).unwrap();
        let _ = read_dump(&[list], Default::default());
        let yaml = dir.path().join("docs.yaml");
        let docs: Vec<String> = objects.iter().map(|o| serde_yaml_ng::to_string(o).unwrap()).collect();
        std::fs::write(&yaml, docs.join("---\n")).unwrap();
        let _ = read_dump(&[yaml], Default::default());
    }
}

#[test]
fn real_world_dump_oddities() {
    let dir = tempfile::tempdir().unwrap();
    // Names with dots, empty or missing status, size "", "0", "8417k", CRLF, an unrelated object.
    let text = "apiVersion: v1\r\nkind: List\r\nitems:\r\n\
- apiVersion: k3s.cattle.io/v1\r\n  kind: ETCDSnapshotFile\r\n  metadata: {name: local-a.b.c-123-abcdef}\r\n  spec: {snapshotName: a.b.c-123}\r\n  status: {size: \"\"}\r\n\
- apiVersion: k3s.cattle.io/v1\r\n  kind: ETCDSnapshotFile\r\n  metadata: {name: local-x-0-aaaaaa}\r\n  spec: {snapshotName: x}\r\n\
- apiVersion: k3s.cattle.io/v1\r\n  kind: ETCDSnapshotFile\r\n  metadata: {name: local-y-0-bbbbbb}\r\n  spec: {snapshotName: y}\r\n  status: {size: \"0\"}\r\n\
- apiVersion: k3s.cattle.io/v1\r\n  kind: ETCDSnapshotFile\r\n  metadata: {name: local-z-0-cccccc}\r\n  spec: {snapshotName: z}\r\n  status: {size: 8417k}\r\n\
- apiVersion: apps/v1\r\n  kind: Deployment\r\n  metadata: {name: coredns, namespace: kube-system}\r\n";
    let path = dir.path().join("odd.yaml");
    std::fs::write(&path, text).unwrap();
    let state = read_dump(&[path], Default::default()).unwrap();
    let files = state.snapshot_files.unwrap();
    let sizes: BTreeMap<&str, Result<i64, String>> = files
        .iter()
        .map(|f| (&*f.snapshot_name, f.size.clone()))
        .collect();
    assert_eq!(sizes["a.b.c-123"], Ok(0));
    assert_eq!(sizes["x"], Ok(0));
    assert_eq!(sizes["y"], Ok(0));
    assert_eq!(sizes["z"], Ok(8_417_000));
    assert!(
        state
            .notes
            .iter()
            .any(|n| n.contains("not used by k3sdoctor"))
    );
}
