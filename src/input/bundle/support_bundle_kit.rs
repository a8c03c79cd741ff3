//! rancher/support-bundle-kit (Harvester, Longhorn): `yamls/cluster/<group/version>/<resource>.yaml`
//! and `yamls/namespaced/<ns>/<group/version>/<resource>.yaml`, one `kind: List` each, every
//! empty value written as the string `"null"` (`toObjCommon`, pkg/manager/collectors/common.go),
//! and no file at all for a kind with no objects.

use super::Source;
use super::tree::Tree;
use crate::model::kinds::{Kind, KindRow, Used};

/// The kinds k3sdoctor reads from it. It writes every cluster-scoped kind discovery lists
/// (`ResourcesForCluster`, pkg/manager/collectors/cluster.go), the webhook configurations
/// among them, and every kind of the namespaces it collects, Services and their endpoints too.
const KINDS: [Kind; 9] = [
    Kind::Node,
    Kind::SnapshotFile,
    Kind::Lease,
    Kind::ConfigMap,
    Kind::Endpoints,
    Kind::EndpointSlice,
    Kind::Service,
    Kind::ValidatingWebhookConfiguration,
    Kind::MutatingWebhookConfiguration,
];

/// (scope, namespace, resource) and the row of each kind read.
fn resources() -> impl Iterator<Item = (&'static str, &'static str, &'static str, &'static KindRow)>
{
    KINDS.into_iter().map(|kind| {
        let row = kind.row();
        let scope = if row.namespaced {
            "namespaced"
        } else {
            "cluster"
        };
        (scope, row.namespace(), row.plural, row)
    })
}

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
        // The webhooks' Services may be in any namespace collected.
        let in_namespace = |ns: &str, row: &KindRow| {
            ns == namespace || matches!(row.used, Used::Everywhere(_) | Used::All)
        };
        let Some((_, _, _, row)) = resources()
            .find(|(s, ns, r, row)| *s == scope && in_namespace(ns, row) && *r == resource)
        else {
            continue;
        };
        // The version folder is the server's preferred version: take the file where it is.
        if source.take(
            tree,
            "",
            std::slice::from_ref(&path),
            (row.api_version, row.name),
            true,
        ) {
            seen.push(row.kind);
        }
    }
    upgrade_plans(tree, &base, source);
    for (scope, namespace, resource, row) in resources() {
        let (api_version, kind) = (row.api_version, row.name);
        // No file is also what a cluster without webhooks gives: those checks word their own
        // "not in dump".
        let own_note = matches!(
            row.kind,
            Kind::Endpoints
                | Kind::EndpointSlice
                | Kind::Service
                | Kind::ValidatingWebhookConfiguration
                | Kind::MutatingWebhookConfiguration
        );
        if seen.contains(&row.kind) || own_note {
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

/// system-upgrade-controller's Plans (Harvester upgrades through it, in cattle-system), in
/// whichever namespace they are, and the Jobs and ConfigMaps of those namespaces beyond
/// kube-system, of which the dump reader keeps SUC's. No Plans file: none, or not listed; the
/// check says not in dump.
fn upgrade_plans(tree: &Tree, base: &str, source: &mut Source) {
    let plans = Kind::Plan.row();
    let suffix = format!("/{}/{}.yaml", plans.api_version, plans.plural);
    let found: Vec<(String, String)> = tree
        .files
        .keys()
        .filter_map(|path| {
            let namespace = path
                .strip_prefix(base)?
                .strip_prefix("namespaced/")?
                .strip_suffix(&suffix)?;
            (!namespace.contains('/')).then(|| (namespace.to_string(), path.clone()))
        })
        .collect();
    for (namespace, path) in found {
        source.take(tree, "", &[path], (plans.api_version, plans.name), true);
        if namespace == Kind::Job.row().namespace() {
            continue;
        }
        for kind in [Kind::Job, Kind::ConfigMap] {
            let row = kind.row();
            let path = format!(
                "{base}namespaced/{namespace}/{}/{}.yaml",
                row.api_version, row.plural
            );
            source.add_beside(tree, &path, (row.api_version, row.name), true);
        }
    }
}
