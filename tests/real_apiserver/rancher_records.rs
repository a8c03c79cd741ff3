//! The Rancher test bed's oracles without a cluster: wrangler's SafeConcatName, each Rancher
//! line's record names and fields, and how the proxy's log tells GET from LIST and WATCH.

use base64::Engine;
use serde_json::{Value, json};

use crate::support::rancher::proxy::RequestRecord;
use crate::support::rancher::records::{
    self, Rancher, SNAPSHOT_NAME, metadata_base64, quantity_i64, restore_modes, safe_concat_name,
    safe_snapshot_name, sanitized,
};

#[test]
fn safe_concat_name_keeps_short_names_and_cuts_long_ones_as_wrangler_does() {
    // Expected values computed independently (Python hashlib) from wrangler's rule.
    let file = "etcd-snapshot-ip-10-0-0-11-1796110945";
    assert_eq!(
        safe_concat_name(&["prod", file, "local"]),
        "prod-etcd-snapshot-ip-10-0-0-11-1796110945-local"
    );
    // 70 characters, the 57th a digit: cut at 57 plus 5 hex.
    let long = "etcd-snapshot-server-with-a-rather-long-hostname-1796110945";
    let name = safe_concat_name(&["prod", long, "local"]);
    assert_eq!(
        name,
        "prod-etcd-snapshot-server-with-a-rather-long-hostname-179-21746"
    );
    assert_eq!(name.len(), 63);
    // The 57th a '-': cut at 56 plus 6 hex, so the name does not end in "--".
    let dash = format!("etcd-snapshot-{}-1796110945", "a".repeat(37));
    assert_eq!(
        safe_concat_name(&["prod", &dash, "local"]),
        "prod-etcd-snapshot-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-57a6a2"
    );
    // 63 characters exactly stay whole; 64 are cut.
    let exact = "a".repeat(63);
    assert_eq!(safe_concat_name(&[&exact]), exact);
    assert_eq!(safe_concat_name(&[&"a".repeat(64)]).len(), 63);
}

#[test]
fn snapshot_record_names_follow_each_rancher_line() {
    assert_eq!(
        sanitized("etcd-snapshot_Node 1.zip"),
        "etcd-snapshot-node-1.zip"
    );
    let file = "etcd-snapshot-ip-10-0-0-11-1796110945";
    let location = format!("file:///var/lib/rancher/k3s/server/db/snapshots/{file}");
    let base = safe_snapshot_name(file, "ip-10-0-0-11", &location, false, 1796110945);
    assert_eq!(
        safe_concat_name(&["prod", &base]),
        "prod-local-etcd-snapshot-ip-10-0-0-11-1796110945-6fd1e5"
    );
    // Not a DNS-1123 subdomain: 2.14 names it after the node's short name and the time.
    let weird = "etcd_snapshot_weird";
    let base = safe_snapshot_name(
        weird,
        "ip-10-0-0-11.example.com",
        &format!("file:///x/{weird}"),
        false,
        1796110945,
    );
    assert_eq!(
        safe_concat_name(&["prod", &base]),
        "prod-local-etcd-snapshot-ip-10-0-0-11-1796110945-83b89c"
    );
    assert_eq!(
        Rancher::parse("v2.10.3"),
        Some(Rancher {
            minor: 10,
            patch: 3
        })
    );
    assert_eq!(
        Rancher::parse("v2.11.2-rc1"),
        Some(Rancher {
            minor: 11,
            patch: 2
        })
    );
    assert_eq!(Rancher::parse("v3.0.0"), None);
    assert!(
        !Rancher {
            minor: 10,
            patch: 3
        }
        .lowercases_node_names()
    );
    assert!(
        Rancher {
            minor: 10,
            patch: 4
        }
        .lowercases_node_names()
    );
}

#[test]
fn snapshot_file_fields_map_as_rancher_maps_them() {
    assert_eq!(metadata_base64(&Value::Null), "bnVsbA==");
    let meta = json!({"b": "<x>", "a": "1"});
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(metadata_base64(&meta))
        .expect("base64");
    assert_eq!(
        String::from_utf8_lossy(&decoded),
        r#"{"a":"1","b":"\u003cx\u003e"}"#
    );
    assert_eq!(quantity_i64("6160230"), Some(6160230));
    assert_eq!(quantity_i64("6077k"), Some(6077000));
    assert_eq!(quantity_i64("5Mi"), Some(5 << 20));
    assert_eq!(quantity_i64("1.5Gi"), None);
    // The sim's extra-metadata payload is a truncated gzip stream: Rancher offers only "none".
    let sim = json!({"provisioning-cluster-spec": "H4sIAAAAAAAA/6pWSs7PS8tMB9GpxcWZ+XlKVkq5iXmZSgq1AAAAAP//AQAA//8="});
    assert_eq!(restore_modes(&sim), "none");
    assert_eq!(restore_modes(&Value::Null), "none");
    let spec = |json: &str| {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(json.as_bytes()).expect("gzip");
        let b64 = base64::engine::general_purpose::STANDARD.encode(gz.finish().expect("gzip"));
        json!({"provisioning-cluster-spec": b64})
    };
    assert_eq!(
        restore_modes(&spec(r#"{"kubernetesVersion":"v1.29.4+k3s1"}"#)),
        "none,kubernetesVersion"
    );
    assert_eq!(
        restore_modes(&spec(
            r#"{"kubernetesVersion":"v1.29.4+k3s1","rkeConfig":{}}"#
        )),
        "none,kubernetesVersion,all"
    );
}

#[test]
fn request_records_tell_get_from_list_and_watch() {
    let verb = |method: &str, path: &str, watch: bool| {
        RequestRecord {
            cluster: "local".into(),
            method: method.into(),
            path: path.into(),
            watch,
            status: 200,
        }
        .verb()
    };
    let v3 = "/apis/management.cattle.io/v3";
    assert_eq!(
        verb("GET", &format!("{v3}/settings/server-version"), false),
        "get"
    );
    assert_eq!(verb("GET", &format!("{v3}/clusters"), false), "list");
    assert_eq!(
        verb(
            "GET",
            "/apis/rke.cattle.io/v1/namespaces/fleet-default/etcdsnapshots?labelSelector=a%3Db",
            false
        ),
        "list"
    );
    assert_eq!(
        verb(
            "GET",
            "/apis/rke.cattle.io/v1/namespaces/fleet-default/rkecontrolplanes/prod",
            false
        ),
        "get"
    );
    assert_eq!(
        verb("GET", "/api/v1/namespaces/fleet-default", false),
        "get"
    );
    assert_eq!(verb("GET", "/api/v1/namespaces", false), "list");
    assert_eq!(verb("GET", "/api/v1/nodes?watch=true", true), "watch");
    assert_eq!(verb("PATCH", "/api/v1/nodes/a", false), "patch");
}

#[test]
fn records_follow_each_line_from_the_same_downstream_state() {
    let esf = |name: &str, file: &str, node: &str| {
        json!({"metadata": {"name": name},
            "spec": {"snapshotName": file, "nodeName": node,
                "location": format!("file:///var/lib/rancher/k3s/server/db/snapshots/{file}")},
            "status": {"creationTime": "2026-12-01T07:42:25Z", "readyToUse": true, "size": "6077k"}})
    };
    let files = [
        esf("local-a-111111", "etcd-snapshot-n1-1", "n1"),
        esf("local-b-222222", "etcd-snapshot-n1-2", "n1"),
        esf("local-c-333333", "etcd-snapshot-n2-3", "n2"),
    ];
    let entry = json!({"name": "etcd-snapshot-n1-1", "location": "file:///x", "nodeName": "N1",
        "createdAt": "2026-12-01T07:42:25Z", "size": 123, "status": "successful", "metadata": "e30="});
    let s3 = json!({"name": "On_Demand", "nodeName": "s3", "createdAt": "2026-12-01T07:42:25Z",
        "size": 9, "status": "successful", "s3Config": {"bucket": "b", "endpoint": "s3.example"}});
    let configmap: serde_json::Map<String, Value> = [
        (
            "local-etcd-snapshot-n1-1".to_string(),
            json!(entry.to_string()),
        ),
        ("s3-On_Demand".to_string(), json!(s3.to_string())),
    ]
    .into_iter()
    .collect();
    let machine_ids = [("n1".to_string(), "m1".to_string())].into_iter().collect();
    let source = records::Source {
        cluster: "prod",
        namespace: "fleet-default",
        snapshot_files: &files,
        configmap: &configmap,
        machine_ids: &machine_ids,
    };
    // 2.10: n2 has no Machine, so no object; b has no entry, so it is missing and has no size.
    let v210 = records::records(
        Rancher {
            minor: 10,
            patch: 8,
        },
        &source,
    );
    let names: Vec<&str> = v210.iter().map(|r| r.name()).collect();
    assert_eq!(
        names,
        [
            "prod-etcd-snapshot-n1-1-local",
            "prod-etcd-snapshot-n1-2-local",
            "prod-on-demand-s3"
        ]
    );
    let (a, b, s3) = (&v210[0], &v210[1], &v210[2]);
    assert_eq!(a.status, None);
    assert_eq!(a.object["snapshotFile"]["size"], 123);
    assert_eq!(
        a.object["snapshotFile"]["nodeName"], "n1",
        "lower-cased from 2.10.4"
    );
    assert_eq!(
        a.object["metadata"]["labels"][records::NODE_NAME_LABEL],
        "n1"
    );
    assert_eq!(
        a.object["metadata"]["labels"][records::MACHINE_ID_LABEL],
        "m1"
    );
    assert_eq!(b.status, Some(json!({"missing": true})));
    assert_eq!(b.object["snapshotFile"].get("size"), None);
    assert_eq!(
        b.object["metadata"]["annotations"].get(records::RECONCILED),
        None
    );
    assert_eq!(s3.object["metadata"]["annotations"][records::STORAGE], "s3");
    assert_eq!(
        s3.object["metadata"]["labels"][records::NODE_NAME_LABEL],
        "s3"
    );
    assert_eq!(
        s3.object["snapshotFile"]["s3"],
        json!({"bucket": "b", "endpoint": "s3.example"})
    );
    let early = records::records(
        Rancher {
            minor: 10,
            patch: 3,
        },
        &source,
    );
    assert_eq!(early[0].object["snapshotFile"]["nodeName"], "N1");

    // 2.11: from the ETCDSnapshotFiles only, keyed by their names; still no object without a
    // Machine.
    let v211 = records::records(
        Rancher {
            minor: 11,
            patch: 4,
        },
        &source,
    );
    assert_eq!(v211.len(), 2);
    let a = &v211[0].object;
    assert_eq!(a["metadata"]["name"], "prod-etcd-snapshot-n1-1-local");
    assert_eq!(
        a["metadata"]["annotations"][SNAPSHOT_NAME],
        "local-a-111111"
    );
    assert_eq!(
        a["metadata"]["annotations"].get(records::SNAPSHOT_FILE_NAME),
        None
    );
    assert_eq!(a["snapshotFile"]["size"], 6077000);
    assert_eq!(a["snapshotFile"]["metadata"], "bnVsbA==");
    assert_eq!(a["snapshotFile"]["status"], "successful");

    // 2.14: the new names and the restore modes.
    let v214 = records::records(
        Rancher {
            minor: 14,
            patch: 0,
        },
        &source,
    );
    let a = &v214[0].object;
    assert!(
        a["metadata"]["name"]
            .as_str()
            .is_some_and(|n| n.starts_with("prod-local-etcd-snapshot-n1-1-"))
    );
    assert_eq!(
        a["metadata"]["annotations"][records::SNAPSHOT_FILE_NAME],
        "etcd-snapshot-n1-1"
    );
    assert_eq!(a["metadata"]["annotations"][records::RESTORE_MODES], "none");
}
