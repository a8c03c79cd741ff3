//! Rancher ≤2.10's records (rancher/rancher v2.10.8): `plansecret` makes local objects from each
//! machine's `etcd-snapshot list` (here: the ETCDSnapshotFiles of nodes that have a Machine),
//! `snapshotbackpopulate` fills them from the `<prog>-etcd-snapshots` ConfigMap (size, status
//! and metadata come only from there), marks those without an entry `status.missing`, and
//! makes the S3 objects from ConfigMap entries alone.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::records::{
    CLUSTER_NAME_LABEL, MACHINE_ID_LABEL, NODE_NAME_LABEL, RECONCILED, Rancher, Record,
    SNAPSHOT_FILE_NAME, STORAGE, Source, put_str, safe_concat_name, sanitized,
};

pub(super) fn records(rancher: Rancher, source: &Source) -> Vec<Record> {
    let generated = from_configmap(rancher, source);
    let mut out = Vec::new();
    for esf in source.snapshot_files {
        let spec = &esf["spec"];
        if spec["s3"].is_object() {
            continue;
        }
        let file_name = spec["snapshotName"].as_str().unwrap_or_default();
        let node = spec["nodeName"].as_str().unwrap_or_default();
        // plansecret runs per Machine: a node without one gets no object.
        let Some(machine_id) = source.machine_ids.get(node) else {
            continue;
        };
        let mut file = Map::new();
        put_str(&mut file, "name", file_name);
        put_str(
            &mut file,
            "location",
            spec["location"].as_str().unwrap_or_default(),
        );
        put_str(&mut file, "nodeName", node);
        // plansecret names it without sanitising; only snapshotbackpopulate's names are.
        let mut object = json!({
            "apiVersion": "rke.cattle.io/v1",
            "kind": "ETCDSnapshot",
            "metadata": {
                "name": safe_concat_name(&[source.cluster, file_name, "local"]),
                "namespace": source.namespace,
                "labels": {CLUSTER_NAME_LABEL: source.cluster, MACHINE_ID_LABEL: machine_id},
                "annotations": {SNAPSHOT_FILE_NAME: file_name, STORAGE: "local"},
            },
            "spec": {"clusterName": source.cluster},
            "snapshotFile": file,
        });
        let status = match generated.get(&format!("{file_name}local")) {
            Some(from_cm) => {
                fill_from_configmap(&mut object, from_cm);
                None
            }
            None => Some(json!({"missing": true})),
        };
        out.push(Record { object, status });
    }
    for (key, object) in &generated {
        if key.ends_with("s3") && object["snapshotFile"]["s3"].is_object() {
            out.push(Record {
                object: object.clone(),
                status: None,
            });
        }
    }
    out.sort_by(|a, b| a.name().cmp(b.name()));
    out
}

/// `reconcileStringMaps` and the SnapshotFile replacement of the v2.10 handler: labels and
/// annotations only gain keys the object lacks; the file is the ConfigMap's, keeping the
/// object's metadata and message where the ConfigMap has none.
fn fill_from_configmap(object: &mut Value, from_cm: &Value) {
    for (field, keys) in [
        (
            "labels",
            &[CLUSTER_NAME_LABEL, NODE_NAME_LABEL, MACHINE_ID_LABEL][..],
        ),
        (
            "annotations",
            &[SNAPSHOT_FILE_NAME, STORAGE, RECONCILED][..],
        ),
    ] {
        for key in keys {
            let new = from_cm["metadata"][field][key].as_str().unwrap_or_default();
            let current = object["metadata"][field][key].as_str().unwrap_or_default();
            if current.is_empty() && !new.is_empty() {
                object["metadata"][field][key] = json!(new);
            }
        }
    }
    let original = object["snapshotFile"].clone();
    let mut file = from_cm["snapshotFile"].clone();
    for keep in ["metadata", "message"] {
        if file[keep].as_str().unwrap_or_default().is_empty() && original[keep].is_string() {
            file[keep] = original[keep].clone();
        }
    }
    object["snapshotFile"] = file;
}

/// `configMapToSnapshots`: one object per parsable ConfigMap value, keyed by file name and
/// storage.
fn from_configmap(rancher: Rancher, source: &Source) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for value in source.configmap.values() {
        let Some(entry) = value
            .as_str()
            .and_then(|text| serde_json::from_str::<Value>(text).ok())
        else {
            continue;
        };
        let file_name = entry["name"].as_str().unwrap_or_default();
        let mut node = entry["nodeName"].as_str().unwrap_or_default().to_string();
        if rancher.lowercases_node_names() {
            node = node.to_lowercase();
        }
        let s3 = entry["s3Config"].is_object();
        let storage = if s3 { "s3" } else { "local" };
        let mut file = Map::new();
        put_str(&mut file, "name", file_name);
        for key in ["location", "metadata", "message"] {
            put_str(&mut file, key, entry[key].as_str().unwrap_or_default());
        }
        put_str(&mut file, "nodeName", &node);
        put_str(
            &mut file,
            "createdAt",
            entry["createdAt"].as_str().unwrap_or_default(),
        );
        if let Some(size) = entry["size"].as_i64().filter(|s| *s != 0) {
            file.insert("size".into(), json!(size));
        }
        put_str(
            &mut file,
            "status",
            entry["status"].as_str().unwrap_or_default(),
        );
        let mut labels = json!({CLUSTER_NAME_LABEL: source.cluster, NODE_NAME_LABEL: node});
        if s3 {
            let c = &entry["s3Config"];
            let mut s3 = Map::new();
            for key in ["endpoint", "endpointCA", "bucket", "region", "folder"] {
                put_str(&mut s3, key, c[key].as_str().unwrap_or_default());
            }
            if c["skipSSLVerify"].as_bool() == Some(true) {
                s3.insert("skipSSLVerify".into(), json!(true));
            }
            file.insert("s3".into(), Value::Object(s3));
        } else if let Some(id) = source.machine_ids.get(&node) {
            labels[MACHINE_ID_LABEL] = json!(id);
        }
        let name = safe_concat_name(&[source.cluster, &sanitized(file_name), storage]);
        let object = json!({
            "apiVersion": "rke.cattle.io/v1",
            "kind": "ETCDSnapshot",
            "metadata": {
                "name": name,
                "namespace": source.namespace,
                "labels": labels,
                "annotations": {SNAPSHOT_FILE_NAME: file_name, STORAGE: storage, RECONCILED: "true"},
            },
            "spec": {"clusterName": source.cluster},
            "snapshotFile": file,
        });
        out.insert(format!("{file_name}{storage}"), object);
    }
    out
}
