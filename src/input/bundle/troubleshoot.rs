//! replicatedhq/troubleshoot (`kubectl support-bundle`): `cluster-resources/<kind>/<ns>.json`
//! per-namespace Lists, `nodes.json`, custom resources as a bare JSON array (YAML sequence
//! before v0.76.0, a `.yaml` symlink twin from v0.133.0) written only when there are some,
//! and `<kind>-errors.json` when the collector could not list a kind: an object keyed by
//! namespace (or by CRD name in `custom-resources/custom-resources-errors.json`), an array for
//! cluster-scoped kinds (`pkg/collect/cluster_resources.go`, `marshalErrors` in util.go).

use serde_json::Value;

use super::Source;
use super::tree::Tree;

use crate::model::kinds::{Kind, dump_command};

pub(super) fn read(tree: &Tree, root: &str, source: &mut Source) {
    upgrade_plans(tree, root, source);
    // packaged-charts reads helm-controller's Jobs and the HelmCharts, a namespaced custom
    // resource (a folder per CRD, a file per namespace: `crsV1`'s `<crd>/<ns>` in
    // `pkg/collect/cluster_resources.go`); absent, the check says not in dump.
    let kinds = [
        Kind::Lease,
        Kind::ConfigMap,
        Kind::Endpoints,
        Kind::EndpointSlice,
        Kind::Job,
        Kind::HelmChart,
    ];
    for kind in kinds {
        let row = kind.row();
        let (folder, namespace) = (row.troubleshoot_folder(), row.namespace());
        let (api_version, kind) = (row.api_version, row.name);
        let file = format!("cluster-resources/{folder}/{namespace}");
        let found = source.take(
            tree,
            root,
            &[format!("{file}.json"), format!("{file}.yaml")],
            (api_version, kind),
            false,
        );
        // The apiserver-endpoints check words its own "not read" for a dump.
        if !found && matches!(Kind::named(kind), Some(Kind::Lease | Kind::ConfigMap)) {
            let why = errors(tree, root, &folder, namespace).unwrap_or_else(|| {
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
        (Kind::Node.row().api_version, Kind::Node.name()),
        false,
    ) {
        let why =
            errors(tree, root, "nodes", "").unwrap_or_else(|| "not in the bundle".to_string());
        source.gap(
            Kind::Node.name(),
            "cluster-resources/nodes.json",
            &why,
            "collect again with RBAC to list nodes",
        );
    }
    let snapshot_files = snapshot_files_file();
    let row = Kind::SnapshotFile.row();
    if !source.take(
        tree,
        root,
        &[
            format!("{snapshot_files}.json"),
            format!("{snapshot_files}.yaml"),
        ],
        (row.api_version, row.name),
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
/// system-upgrade-controller's Plans (a file per namespace in the CRD's folder), and in each
/// of their namespaces beyond kube-system (read above) the Jobs and ConfigMaps there, of which
/// the dump reader keeps SUC's. No Plans folder: troubleshoot found none, or could not list
/// them; the check says not in dump.
fn upgrade_plans(tree: &Tree, root: &str, source: &mut Source) {
    let plans = Kind::Plan.row();
    let folder = format!("{root}cluster-resources/{}/", plans.troubleshoot_folder());
    let mut files: Vec<(String, String)> = tree
        .files
        .keys()
        .filter_map(|path| {
            let file = path.strip_prefix(&folder)?;
            let namespace = file
                .strip_suffix(".json")
                .or_else(|| file.strip_suffix(".yaml"))?;
            (!namespace.contains('/')).then(|| (namespace.to_string(), file.to_string()))
        })
        .collect();
    files.sort();
    // A `.yaml` twin of a `.json` file (troubleshoot v0.133.0 and later) is the same List.
    files.dedup_by(|a, b| a.0 == b.0);
    for (namespace, file) in files {
        let rel = format!("cluster-resources/{}/{file}", plans.troubleshoot_folder());
        source.take(tree, root, &[rel], (plans.api_version, plans.name), false);
        if namespace == Kind::Job.row().namespace() {
            continue;
        }
        for kind in [Kind::Job, Kind::ConfigMap] {
            let row = kind.row();
            for ext in ["json", "yaml"] {
                let path = format!("{root}cluster-resources/{}/{namespace}.{ext}", row.plural);
                if source.add_beside(tree, &path, (row.api_version, row.name), false) {
                    break;
                }
            }
        }
    }
}

fn snapshot_files_absent(tree: &Tree, root: &str, source: &mut Source) {
    let crd = Kind::SnapshotFile.row().resource();
    let file = format!("{}.json", snapshot_files_file());
    let kind = Kind::SnapshotFile.name();
    if let Some(why) = errors(tree, root, "custom-resources", &crd) {
        source.gap(
            kind,
            &file,
            &why,
            &format!("collect again with RBAC to list {crd}"),
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
        Some(names) if names.contains(&crd) => {
            source.complete.push(kind);
        }
        Some(_) => source.snapshot_crd_missing = true,
        None => source.gap(
            kind,
            &file,
            "not in the bundle, and no custom-resource-definitions.json to tell whether there are none or no CRD",
            &format!("add `{}` from the cluster", dump_command(&[Kind::SnapshotFile])),
        ),
    }
}

/// The ETCDSnapshotFiles' file, without its extension.
fn snapshot_files_file() -> String {
    format!(
        "cluster-resources/{}",
        Kind::SnapshotFile.row().troubleshoot_folder()
    )
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
