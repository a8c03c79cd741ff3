//! Rancher's management-cluster objects about a downstream cluster's etcd snapshots
//! (rancher/rancher `snapshotbackpopulate`, `plansecret`): its snapshot records, the clusters, CAPI Machines, the
//! control plane's restore state, the backpopulate Feature and Rancher's version. Parsed from
//! JSON tolerantly, as the downstream objects are.

pub(crate) mod machine_plan;
pub(crate) mod management;
pub(crate) mod rancher_version;
pub(crate) mod record_name;
pub(crate) mod snapshot_record;
pub(crate) mod view;

/// Where Rancher's records live for a v2prov cluster: the provisioning Cluster's namespace.
pub(crate) const DEFAULT_WORKSPACE: &str = "fleet-default";
/// The Feature that gates the 2.11+ backpopulate controller (default on, dynamic).
pub(crate) const BACKPOPULATE_FEATURE: &str = "v2prov-etcd-snapshot-backpopulate";
/// The Setting that holds Rancher's version.
pub(crate) const SERVER_VERSION_SETTING: &str = "server-version";
/// The annotation without which Rancher's snapshot controllers skip a cluster.
pub(crate) const ADMINISTRATED_ANNOTATION: &str = "provisioning.cattle.io/administrated";

fn text(v: &serde_json::Value, pointer: &str) -> Option<String> {
    v.pointer(pointer)
        .and_then(serde_json::Value::as_str)
        .map(str::to_string)
}

fn string_map(v: &serde_json::Value, pointer: &str) -> std::collections::BTreeMap<String, String> {
    v.pointer(pointer)
        .and_then(serde_json::Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}
