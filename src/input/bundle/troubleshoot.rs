//! replicatedhq/troubleshoot (`kubectl support-bundle`): `cluster-resources/<kind>/<ns>.json`
//! per-namespace Lists, `nodes.json`, custom resources as a bare JSON array (YAML sequence
//! before v0.76.0, a `.yaml` symlink twin from v0.133.0) written only when there are some,
//! and `<kind>-errors.json` when the collector could not list a kind: an object keyed by
//! namespace (or by CRD name in `custom-resources/custom-resources-errors.json`), an array for
//! cluster-scoped kinds (`pkg/collect/cluster_resources.go`, `marshalErrors` in util.go).

use serde_json::Value;

use super::Source;
use super::tree::Tree;

const SNAPSHOT_FILES: &str = "cluster-resources/custom-resources/etcdsnapshotfiles.k3s.cattle.io";
const SNAPSHOT_CRD: &str = "etcdsnapshotfiles.k3s.cattle.io";

pub(super) fn read(tree: &Tree, root: &str, source: &mut Source) {
    let kinds: [(&str, &str, &'static str, &'static str); 6] = [
        ("leases", "kube-system", "coordination.k8s.io/v1", "Lease"),
        ("configmaps", "kube-system", "v1", "ConfigMap"),
        ("endpoints", "default", "v1", "Endpoints"),
        (
            "endpointslices",
            "default",
            "discovery.k8s.io/v1",
            "EndpointSlice",
        ),
        // packaged-charts: helm-controller's Jobs, and the HelmCharts as a namespaced custom
        // resource (a folder per CRD, a file per namespace: `crsV1`'s `<crd>/<ns>` in
        // `pkg/collect/cluster_resources.go`); absent, the check says not in dump.
        ("jobs", "kube-system", "batch/v1", "Job"),
        (
            "custom-resources/helmcharts.helm.cattle.io",
            "kube-system",
            "helm.cattle.io/v1",
            "HelmChart",
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
            let why = errors(tree, root, folder, namespace).unwrap_or_else(|| {
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
        let why =
            errors(tree, root, "nodes", "").unwrap_or_else(|| "not in the bundle".to_string());
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
        snapshot_files_absent(tree, root, source);
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

/// No ETCDSnapshotFile file: troubleshoot writes none for a custom resource without objects,
/// so the CRD list (`custom-resource-definitions.json`) and the errors tell "none", "no CRD"
/// and "could not list" apart.
fn snapshot_files_absent(tree: &Tree, root: &str, source: &mut Source) {
    if let Some(why) = errors(tree, root, "custom-resources", SNAPSHOT_CRD) {
        source.gap(
            "ETCDSnapshotFile",
            &format!("{SNAPSHOT_FILES}.json"),
            &why,
            "collect again with RBAC to list etcdsnapshotfiles.k3s.cattle.io",
        );
        return;
    }
    let names: Option<Vec<String>> = tree
        .files
        .get(&format!(
            "{root}cluster-resources/custom-resource-definitions.json"
        ))
        .and_then(|b| serde_json::from_slice::<Value>(b).ok())
        .map(|crds| {
            crds.get("items")
                .unwrap_or(&crds)
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| Some(c.pointer("/metadata/name")?.as_str()?.to_string()))
                .collect()
        });
    match names {
        // Listed and found none: the collector writes no file for an empty list.
        Some(names) if names.iter().any(|n| n == SNAPSHOT_CRD) => {
            source.complete.push("ETCDSnapshotFile");
        }
        Some(_) => source.snapshot_crd_missing = true,
        None => source.gap(
            "ETCDSnapshotFile",
            &format!("{SNAPSHOT_FILES}.json"),
            "not in the bundle, and no custom-resource-definitions.json to tell whether there are none or no CRD",
            "add `kubectl get etcdsnapshotfiles -o yaml` from the cluster",
        ),
    }
}

/// What `cluster-resources/<folder>-errors.json` says about `key` (a namespace, a CRD name;
/// `""` for a cluster-scoped kind): the collector tried the kind and the API server refused
/// (RBAC) or failed.
fn errors(tree: &Tree, root: &str, folder: &str, key: &str) -> Option<String> {
    let candidates = [
        format!("cluster-resources/{folder}-errors.json"),
        format!("cluster-resources/{folder}/{folder}-errors.json"),
    ];
    let (file, bytes) = candidates
        .iter()
        .find_map(|c| Some((c, tree.files.get(&format!("{root}{c}"))?)))?;
    let value: Value = serde_json::from_slice(bytes).ok()?;
    let messages: Vec<&str> = match &value {
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        Value::Object(by_key) => by_key
            .get(key)
            .and_then(Value::as_str)
            .into_iter()
            .collect(),
        _ => Vec::new(),
    };
    let first = messages.first()?;
    let more = match messages.len() {
        1 => String::new(),
        n => format!(" and {} more", n - 1),
    };
    Some(format!(
        "the collector could not list {folder}: {first}{more} ({file})"
    ))
}
