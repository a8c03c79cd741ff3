//! The snapshot ConfigMap controller that runs on the `<prog>-etcd` leader
//! (`pkg/etcd/snapshot_controller.go`): every ETCDSnapshotFile that qualifies gets an entry in
//! `<prog>-etcd-snapshots`, and the controller's finalizer on the CR. The entry format is
//! simplified here; only presence is compared.

use serde_json::{Value, json};

use crate::support::fake_api::FakeApi;

pub const FINALIZER: &str = "wrangler.cattle.io/managed-etcd-snapshots-controller";

/// `local-`/`s3-` + the file name with characters outside `[-._a-zA-Z0-9]` replaced by `_`.
pub fn data_key(cr: &Value) -> String {
    let prefix = if cr["spec"]["s3"].is_object() {
        "s3-"
    } else {
        "local-"
    };
    let name: String = cr["spec"]["snapshotName"]
        .as_str()
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-._".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{prefix}{name}")
}

pub fn sync(fake: &FakeApi, prog: &str, require_metadata: bool) {
    let name = format!("{prog}-etcd-snapshots");
    let mut cm = fake.get("ConfigMap", Some("kube-system"), &name).unwrap_or_else(|| {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "kube-system"}})
    });
    let mut changed = false;
    for mut cr in fake.list("ETCDSnapshotFile") {
        if cr["metadata"]["deletionTimestamp"].is_string() {
            continue;
        }
        let has_metadata = cr["spec"]["metadata"]
            .as_object()
            .is_some_and(|m| !m.is_empty());
        if require_metadata && !has_metadata {
            continue;
        }
        let key = data_key(&cr);
        let value = json!({
            "name": cr["spec"]["snapshotName"],
            "location": cr["spec"]["location"],
            "nodeName": cr["spec"]["nodeName"],
        })
        .to_string();
        if cm["data"][&key].as_str() != Some(value.as_str()) {
            cm["data"][&key] = json!(value);
            changed = true;
        }
        let finalizers = cr["metadata"]["finalizers"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if !finalizers.iter().any(|f| f == FINALIZER) {
            let mut with = finalizers;
            with.push(json!(FINALIZER));
            cr["metadata"]["finalizers"] = json!(with);
            let _ = fake.replace(cr);
        }
    }
    if changed {
        // A conflict is retried on the next pass, as the work queue would.
        let _ = fake.replace(cm);
    }
}
