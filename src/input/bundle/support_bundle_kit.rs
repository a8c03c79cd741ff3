//! rancher/support-bundle-kit (Harvester, Longhorn): `yamls/cluster/<group/version>/<resource>.yaml`
//! and `yamls/namespaced/<ns>/<group/version>/<resource>.yaml`, one `kind: List` each, every
//! empty value written as the string `"null"` (`toObjCommon`, pkg/manager/collectors/common.go),
//! and no file at all for a kind with no objects.

use super::Source;
use super::tree::Tree;

/// (scope, namespace, resource) → (apiVersion, kind) of the objects k3sdoctor reads.
const RESOURCES: [(&str, &str, &str, &str, &str); 6] = [
    ("cluster", "", "nodes", "v1", "Node"),
    (
        "cluster",
        "",
        "etcdsnapshotfiles",
        "k3s.cattle.io/v1",
        "ETCDSnapshotFile",
    ),
    (
        "namespaced",
        "kube-system",
        "leases",
        "coordination.k8s.io/v1",
        "Lease",
    ),
    ("namespaced", "kube-system", "configmaps", "v1", "ConfigMap"),
    ("namespaced", "default", "endpoints", "v1", "Endpoints"),
    (
        "namespaced",
        "default",
        "endpointslices",
        "discovery.k8s.io/v1",
        "EndpointSlice",
    ),
];

pub(super) fn read(tree: &Tree, root: &str, source: &mut Source) {
    let base = format!("{root}yamls/");
    let paths: Vec<String> = tree
        .files
        .keys()
        .filter(|p| p.starts_with(&base))
        .cloned()
        .collect();
    let mut seen = Vec::new();
    for path in paths {
        let rel = &path[base.len()..];
        let parts: Vec<&str> = rel.split('/').collect();
        let Some(resource) = parts.last().and_then(|f| f.strip_suffix(".yaml")) else {
            continue;
        };
        let (scope, namespace) = match parts.first() {
            Some(&"namespaced") => ("namespaced", parts.get(1).copied().unwrap_or_default()),
            Some(&"cluster") => ("cluster", ""),
            _ => continue,
        };
        let Some((_, _, _, api_version, kind)) = RESOURCES
            .iter()
            .find(|(s, ns, r, _, _)| *s == scope && *ns == namespace && *r == resource)
        else {
            continue;
        };
        // The version folder is the server's preferred version: take the file where it is.
        if source.take(
            tree,
            "",
            std::slice::from_ref(&path),
            (api_version, kind),
            true,
        ) {
            seen.push(*kind);
        }
    }
    for (scope, namespace, resource, api_version, kind) in RESOURCES {
        if seen.contains(&kind) || matches!(kind, "Endpoints" | "EndpointSlice") {
            continue;
        }
        let folder = if scope == "cluster" {
            "yamls/cluster".to_string()
        } else {
            format!("yamls/namespaced/{namespace}")
        };
        source.gap(
            kind,
            &format!("{folder}/{api_version}/{resource}.yaml"),
            "not in the bundle: support-bundle-kit writes no file for a kind it found no objects of or could not list",
            &format!("add `kubectl get {resource} -o yaml{}` from the cluster", if namespace.is_empty() { String::new() } else { format!(" -n {namespace}") }),
        );
    }
}
