//! replicatedhq/troubleshoot (`kubectl support-bundle`): `cluster-resources/<kind>/<ns>.json`
//! per-namespace Lists, `nodes.json`, custom resources as a bare JSON array (YAML sequence
//! before v0.76.0, a `.yaml` symlink twin from v0.133.0), and `<kind>-errors.json` when the
//! collector could not list a kind (`pkg/collect/cluster_resources.go`).

use serde_json::Value;

use super::Source;
use super::tree::Tree;

const SNAPSHOT_FILES: &str = "cluster-resources/custom-resources/etcdsnapshotfiles.k3s.cattle.io";

pub fn read(tree: &Tree, root: &str, source: &mut Source) {
    let kinds: [(&str, &str, &'static str, &'static str); 4] = [
        ("leases", "kube-system", "coordination.k8s.io/v1", "Lease"),
        ("configmaps", "kube-system", "v1", "ConfigMap"),
        ("endpoints", "default", "v1", "Endpoints"),
        (
            "endpointslices",
            "default",
            "discovery.k8s.io/v1",
            "EndpointSlice",
        ),
    ];
    for (folder, namespace, api_version, kind) in kinds {
        let file = format!("cluster-resources/{folder}/{namespace}");
        let found = source.take(
            tree,
            root,
            &[format!("{file}.json"), format!("{file}.yaml")],
            (api_version, kind),
            false,
        );
        // The apiserver-endpoints check words its own "not read" for a dump.
        if !found && matches!(kind, "Lease" | "ConfigMap") {
            let why = errors(tree, root, folder).unwrap_or_else(|| {
                "not in the bundle: troubleshoot collects Leases and ConfigMaps from v0.70.3 on, and a spec \
                 that narrows namespaces leaves kube-system out"
                    .to_string()
            });
            source.gap(
                kind,
                &format!("{file}.json"),
                &why,
                "collect again with troubleshoot v0.70.3 or later, with kube-system in the namespaces and RBAC to list it",
            );
        }
    }
    if !source.take(
        tree,
        root,
        &["cluster-resources/nodes.json".to_string()],
        ("v1", "Node"),
        false,
    ) {
        let why = errors(tree, root, "nodes").unwrap_or_else(|| "not in the bundle".to_string());
        source.gap(
            "Node",
            "cluster-resources/nodes.json",
            &why,
            "collect again with RBAC to list nodes",
        );
    }
    if !source.take(
        tree,
        root,
        &[
            format!("{SNAPSHOT_FILES}.json"),
            format!("{SNAPSHOT_FILES}.yaml"),
        ],
        ("k3s.cattle.io/v1", "ETCDSnapshotFile"),
        false,
    ) {
        let why = errors(tree, root, "custom-resources").unwrap_or_else(|| {
            "not in the bundle: the CRD is not installed (k3s before v1.26.15/1.27.12/1.28.8/1.29.3), or the \
             collector could not list it"
                .to_string()
        });
        source.gap(
            "ETCDSnapshotFile",
            &format!("{SNAPSHOT_FILES}.json"),
            &why,
            "add `kubectl get etcdsnapshotfiles -o yaml` from the cluster",
        );
    }
    if let Some(version) = tree
        .files
        .get(&format!("{root}cluster-info/cluster_version.json"))
        .and_then(|b| serde_json::from_slice::<Value>(b).ok())
        .and_then(|v| Some(v.get("string")?.as_str()?.to_string()))
    {
        source.notes.push(format!(
            "the bundle's API server reported version {version}"
        ));
    }
}

/// What `cluster-resources/<folder>-errors.json` says: the collector tried the kind and the
/// API server refused (RBAC) or failed.
fn errors(tree: &Tree, root: &str, folder: &str) -> Option<String> {
    let candidates = [
        format!("{root}cluster-resources/{folder}-errors.json"),
        format!("{root}cluster-resources/{folder}/{folder}-errors.json"),
    ];
    let bytes = candidates.iter().find_map(|c| tree.files.get(c))?;
    let messages: Vec<String> = serde_json::from_slice::<Value>(bytes)
        .ok()?
        .as_array()?
        .iter()
        .filter_map(|m| m.as_str().map(str::to_string))
        .collect();
    let first = messages.first()?;
    let more = match messages.len() {
        1 => String::new(),
        n => format!(" and {} more", n - 1),
    };
    Some(format!(
        "the collector could not list {folder}: {first}{more} ({folder}-errors.json)"
    ))
}
