use serde_json::json;

use super::*;

/// A local CR as k3s v1.29 writes it (`pkg/etcd/snapshot.go`).
fn local_cr() -> SnapshotFile {
    SnapshotFile::from_json(&json!({
        "apiVersion": "k3s.cattle.io/v1",
        "kind": "ETCDSnapshotFile",
        "metadata": {"name": "local-etcd-snapshot-server-1-1717156805-4056ed"},
        "spec": {
            "snapshotName": "etcd-snapshot-server-1-1717156805",
            "nodeName": "server-1",
            "location": "file:///var/lib/rancher/k3s/server/db/snapshots/etcd-snapshot-server-1-1717156805",
            "metadata": {"cluster": "prod-a", "note": "example"}
        },
        "status": {"creationTime": "2024-05-31T12:00:05Z", "readyToUse": true, "size": "8417312"}
    }))
}

/// Its S3 twin, as the same save uploads it.
fn s3_cr() -> SnapshotFile {
    SnapshotFile::from_json(&json!({
        "metadata": {"name": "s3-etcd-snapshot-server-1-1717156805-b84088"},
        "spec": {
            "snapshotName": "etcd-snapshot-server-1-1717156805",
            "nodeName": "server-1",
            "location": "s3://k3s-backups/cluster-a/etcd-snapshot-server-1-1717156805",
            "metadata": {"cluster": "prod-a", "note": "example"},
            "s3": {"endpoint": "s3.amazonaws.com", "bucket": "k3s-backups", "region": "us-east-1", "prefix": "cluster-a"}
        },
        "status": {"creationTime": "2024-05-31T12:00:05Z", "readyToUse": true, "size": 8417312}
    }))
}

#[test]
fn reproduces_the_local_value_of_facts_9_2() {
    assert_eq!(
        encode(&local_cr(), S3Shape::Embedded),
        r#"{"name":"etcd-snapshot-server-1-1717156805","location":"file:///var/lib/rancher/k3s/server/db/snapshots/etcd-snapshot-server-1-1717156805","metadata":"eyJjbHVzdGVyIjoicHJvZC1hIiwibm90ZSI6ImV4YW1wbGUifQ==","nodeName":"server-1","createdAt":"2024-05-31T12:00:05Z","size":8417312,"status":"successful","compressed":false}"#
    );
}

#[test]
fn reproduces_the_s3_value_of_facts_9_2() {
    assert_eq!(
        encode(&s3_cr(), S3Shape::Embedded),
        r#"{"name":"etcd-snapshot-server-1-1717156805","location":"s3://k3s-backups/cluster-a/etcd-snapshot-server-1-1717156805","metadata":"eyJjbHVzdGVyIjoicHJvZC1hIiwibm90ZSI6ImV4YW1wbGUifQ==","nodeName":"s3","createdAt":"2024-05-31T12:00:05Z","size":8417312,"status":"successful","s3Config":{"bucket":"k3s-backups","endpoint":"s3.amazonaws.com","folder":"cluster-a","region":"us-east-1","timeout":"0s"},"compressed":false}"#
    );
}

#[test]
fn legacy_s3_config_shape() {
    let value = encode(&s3_cr(), S3Shape::Legacy);
    assert!(
        value.contains(r#""s3Config":{"endpoint":"s3.amazonaws.com","bucket":"k3s-backups","region":"us-east-1","folder":"cluster-a"}"#),
        "{value}"
    );
}

#[test]
fn failed_snapshot_carries_a_base64_message_and_no_size() {
    let failed = SnapshotFile::from_json(&json!({
        "spec": {"snapshotName": "on-demand-server-1-1717156900.zip", "nodeName": "server-1", "location": "file:///x"},
        "status": {"creationTime": "2024-05-31T12:01:40Z", "readyToUse": false, "size": "0",
                   "error": {"time": "2024-05-31T12:01:45Z", "message": "context deadline exceeded"}}
    }));
    assert_eq!(
        encode(&failed, S3Shape::Embedded),
        r#"{"name":"on-demand-server-1-1717156900.zip","location":"file:///x","message":"Y29udGV4dCBkZWFkbGluZSBleGNlZWRlZA==","nodeName":"server-1","createdAt":"2024-05-31T12:01:45Z","status":"failed","compressed":true}"#
    );
    let no_message =
        SnapshotFile::from_json(&json!({"spec": {"snapshotName": "x"}, "status": {"error": {}}}));
    let decoded = decode(&encode(&no_message, S3Shape::Embedded)).unwrap();
    assert_eq!(decoded.message.as_deref(), Some("etcd snapshot failed"));
}

#[test]
fn metadata_is_escaped_like_go_before_base64() {
    let cr = SnapshotFile::from_json(&json!({
        "spec": {"snapshotName": "x", "metadata": {"k": "<a&b> \u{2028} \"q\" é\n"}},
        "status": {"readyToUse": true}
    }));
    let entry = decode(&encode(&cr, S3Shape::Embedded)).unwrap();
    let raw = String::from_utf8(
        BASE64
            .decode(
                serde_json::from_str::<Value>(&encode(&cr, S3Shape::Embedded)).unwrap()["metadata"]
                    .as_str()
                    .unwrap(),
            )
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        raw,
        "{\"k\":\"\\u003ca\\u0026b\\u003e \\u2028 \\\"q\\\" é\\n\"}"
    );
    assert_eq!(
        entry.metadata.unwrap().unwrap()["k"],
        "<a&b> \u{2028} \"q\" é\n"
    );
}

#[test]
fn decode_then_compare_round_trips() {
    for (cr, shape) in [
        (local_cr(), S3Shape::Embedded),
        (s3_cr(), S3Shape::Embedded),
        (s3_cr(), S3Shape::Legacy),
    ] {
        let value = encode(&cr, shape);
        let decoded = decode(&value).unwrap();
        assert!(decoded.unknown_fields.is_empty());
        let again = decode(&encode(&cr, shape)).unwrap();
        assert!(differences(&decoded, &again).is_empty());
    }
    // The two s3Config shapes mean the same thing.
    let legacy = decode(&encode(&s3_cr(), S3Shape::Legacy)).unwrap();
    let embedded = decode(&encode(&s3_cr(), S3Shape::Embedded)).unwrap();
    assert!(
        differences(&legacy, &embedded).is_empty(),
        "{:?}",
        differences(&legacy, &embedded)
    );
}

#[test]
fn decoder_is_tolerant_and_keeps_unknown_fields() {
    let entry = decode(
        r#"{"name":"n","size":5,"tokenHash":"abc","status":"successful","compressed":false}"#,
    )
    .unwrap();
    assert_eq!(entry.unknown_fields, ["tokenHash"]);
    assert_eq!(entry.size, 5);
    assert!(decode("not json").is_err());
    assert!(decode("[1]").is_err());
    let bad_meta = decode(r#"{"name":"n","metadata":"!!!"}"#).unwrap();
    assert!(bad_meta.metadata.unwrap().is_err());
}

#[test]
fn stale_fields_are_named() {
    let expected = decode(&encode(&local_cr(), S3Shape::Embedded)).unwrap();
    let mut found = expected.clone();
    found.size = 0;
    found.status = "failed".into();
    let fields: Vec<_> = differences(&expected, &found)
        .into_iter()
        .map(|d| d.field)
        .collect();
    assert_eq!(fields, ["size", "status"]);
}

#[test]
fn entries_round_trip_through_the_record_k3s_rebuilds() {
    for (cr, shape) in [
        (local_cr(), S3Shape::Embedded),
        (s3_cr(), S3Shape::Embedded),
        (s3_cr(), S3Shape::Legacy),
    ] {
        let value = encode(&cr, shape);
        let entry = decode(&value).unwrap();
        assert_eq!(
            entry.s3_shape(),
            if cr.is_s3() { shape } else { S3Shape::Embedded }
        );
        assert_eq!(encode(&entry.to_snapshot_file(), entry.s3_shape()), value);
    }
}

#[test]
fn an_empty_failure_message_is_omitted_like_go_does() {
    // Found by the property tests: base64("") is "", which omitempty drops.
    let cr = SnapshotFile::from_json(
        &json!({"spec": {"snapshotName": "x"}, "status": {"error": {"message": ""}}}),
    );
    assert_eq!(
        encode(&cr, S3Shape::Embedded),
        r#"{"name":"x","status":"failed","compressed":false}"#
    );
}
