//! A simplified `metadata.managedFields` bookkeeping, close to what the apiserver records for
//! `Update` operations (samples 010, 049, 081, 091, 104): the writing manager (the `fieldManager`
//! parameter, else the User-Agent up to the first `/`) owns every field it changed; other managers
//! lose the fields it changed. Server-side apply is not implemented.

use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};

type Path = Vec<String>;

const TRACKED_METADATA: [&str; 4] = ["labels", "annotations", "finalizers", "ownerReferences"];

/// Whether the FieldsV1 node at `path` carries a `"."` entry (maps, pointer structs, everything in
/// a custom resource; not the top-level `spec`/`status` structs of built-in types).
fn needs_dot(path: &[String], custom: bool) -> bool {
    let p: Vec<&str> = path.iter().map(String::as_str).collect();
    match p.as_slice() {
        ["f:metadata"] => false,
        _ if custom => true,
        ["f:spec"] | ["f:status"] => false,
        ["f:status", "f:nodeInfo" | "f:daemonEndpoints"] => false,
        _ => true,
    }
}

fn collect(v: &Value, path: Path, custom: bool, out: &mut BTreeMap<Path, Value>) {
    match v {
        Value::Object(map) => {
            if needs_dot(&path, custom) {
                out.insert([path.clone(), vec![".".into()]].concat(), Value::Null);
            } else if map.is_empty() {
                out.insert(path.clone(), json!({}));
            }
            for (k, child) in map {
                collect(
                    child,
                    [path.clone(), vec![format!("f:{k}")]].concat(),
                    custom,
                    out,
                );
            }
        }
        Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => {
            out.insert([path.clone(), vec![".".into()]].concat(), Value::Null);
            for item in items {
                out.insert(
                    [path.clone(), vec![format!("v:{item}")]].concat(),
                    Value::Null,
                );
            }
        }
        other => {
            out.insert(path, other.clone());
        }
    }
}

/// Every field a manager could own in `obj`, with its value.
fn leaves(obj: &Value, custom: bool) -> BTreeMap<Path, Value> {
    let mut out = BTreeMap::new();
    let Some(map) = obj.as_object() else {
        return out;
    };
    for (k, v) in map {
        match k.as_str() {
            "kind" | "apiVersion" => {}
            "metadata" => {
                for field in TRACKED_METADATA {
                    if let Some(child) = v.get(field) {
                        collect(
                            child,
                            vec!["f:metadata".into(), format!("f:{field}")],
                            custom,
                            &mut out,
                        );
                    }
                }
            }
            _ => collect(v, vec![format!("f:{k}")], custom, &mut out),
        }
    }
    out
}

fn to_tree(paths: &BTreeSet<Path>) -> Value {
    let mut root = Map::new();
    for path in paths {
        let mut node = &mut root;
        for part in path {
            node = node
                .entry(part.clone())
                .or_insert_with(|| json!({}))
                .as_object_mut()
                .expect("object");
        }
    }
    Value::Object(root)
}

fn from_tree(v: &Value, path: Path, out: &mut BTreeSet<Path>) {
    match v.as_object() {
        Some(map) if !map.is_empty() => {
            for (k, child) in map {
                from_tree(child, [path.clone(), vec![k.clone()]].concat(), out);
            }
        }
        _ => {
            if !path.is_empty() {
                out.insert(path);
            }
        }
    }
}

/// FieldsV1 of all fields in `obj` (e.g. for a SelfSubjectAccessReview answer).
pub(crate) fn field_set_json(obj: &Value, custom: bool) -> Value {
    to_tree(&leaves(obj, custom).into_keys().collect())
}

/// The manager name for a request: `fieldManager`, else the User-Agent up to the first `/`.
pub(crate) fn manager_name(field_manager: Option<&str>, user_agent: Option<&str>) -> String {
    if let Some(m) = field_manager.filter(|m| !m.is_empty()) {
        return m.to_string();
    }
    match user_agent {
        Some(ua) if !ua.is_empty() => ua.split('/').next().unwrap_or(ua).to_string(),
        _ => "unknown".to_string(),
    }
}

/// Record an `Update` by `manager` that turned `old` (`Value::Null` for a create) into `new`.
/// `base` is the managedFields list to start from; the result is written into `new`.
pub(crate) fn record_update(
    old: &Value,
    new: &mut Value,
    base: &Value,
    manager: &str,
    api_version: &str,
    custom: bool,
) {
    let before = leaves(old, custom);
    let after = leaves(new, custom);
    let changed: BTreeSet<Path> = after
        .iter()
        .filter(|(p, v)| before.get(*p) != Some(*v))
        .map(|(p, _)| p.clone())
        .collect();
    let removed: BTreeSet<Path> = before
        .keys()
        .filter(|p| !after.contains_key(*p))
        .cloned()
        .collect();
    let mut entries: Vec<Value> = base.as_array().cloned().unwrap_or_default();
    if !changed.is_empty() || !removed.is_empty() {
        let mut found = false;
        let mut kept = Vec::new();
        for mut entry in entries {
            let mut set = BTreeSet::new();
            from_tree(&entry["fieldsV1"], Vec::new(), &mut set);
            let mine = entry["manager"] == manager
                && entry["operation"] == "Update"
                && entry.get("subresource").is_none();
            set.retain(|p| !removed.contains(p) && (mine || !changed.contains(p)));
            if mine {
                found = true;
                set.extend(changed.iter().cloned());
                entry["time"] = json!(super::microtime::now_seconds());
            }
            if !set.is_empty() {
                entry["fieldsV1"] = to_tree(&set);
                kept.push(entry);
            }
        }
        if !found && !changed.is_empty() {
            kept.push(json!({
                "manager": manager,
                "operation": "Update",
                "apiVersion": api_version,
                "time": super::microtime::now_seconds(),
                "fieldsType": "FieldsV1",
                "fieldsV1": to_tree(&changed),
            }));
        }
        entries = kept;
    }
    let meta = new["metadata"].as_object_mut().expect("metadata object");
    if entries.is_empty() {
        meta.remove("managedFields");
    } else {
        meta.insert("managedFields".into(), Value::Array(entries));
    }
}
