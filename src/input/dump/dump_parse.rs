//! The parts of reading dump text that do not depend on how objects are handed over
//! ([`super::object_stream`]): YAML documents, an object's key and whether k3sdoctor uses it,
//! and undoing what a collector did to the objects it wrote.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::yaml_depth::{MAX_FLOW_NESTING, too_deep};
use crate::input::ReadError;
use crate::model::kinds::Kind;

pub(crate) use crate::input::files::DUMP_HINT;

/// The documents of a YAML dump, a YAML sequence's items each one document.
pub(crate) fn parse_yaml(text: &str, file: &str) -> Result<Vec<Value>, ReadError> {
    let bad = |e: &dyn std::fmt::Display| {
        ReadError::new(format!("cannot parse dump file {file}: {e}; {DUMP_HINT}"))
    };
    not_too_deep(text, file)?;
    let docs = yaml_values(text).map_err(|e| bad(&e))?;
    if docs.is_empty() && !text.trim().is_empty() {
        return Err(bad(&"no documents found"));
    }
    Ok(docs)
}

/// Refuses YAML whose `[` and `{` nest deeper than any Kubernetes object, before a parser
/// spends time quadratic in the depth on it.
pub(super) fn not_too_deep(text: &str, file: &str) -> Result<(), ReadError> {
    match too_deep(text) {
        Some(line) => Err(ReadError::new(format!(
            "cannot parse dump file {file}: [ and {{ nest more than {MAX_FLOW_NESTING} deep at line \
             {line}, deeper than any Kubernetes object; {DUMP_HINT}"
        ))),
        None => Ok(()),
    }
}

/// The documents of YAML text, built whole; a YAML sequence's items each one document.
pub(crate) fn yaml_values(text: &str) -> Result<Vec<Value>, serde_yaml_ng::Error> {
    let mut docs = Vec::new();
    for doc in serde_yaml_ng::Deserializer::from_str(text) {
        // A YAML sequence of objects: troubleshoot's custom resources before v0.76.0.
        match Value::deserialize(doc)? {
            Value::Null => {}
            Value::Array(items) => docs.extend(items),
            other => docs.push(other),
        }
    }
    Ok(docs)
}

/// (kind, namespace, name) of an object, if it has them.
pub(crate) fn object_key(object: &Value) -> Option<(String, String, String)> {
    fields_key(object.as_object()?)
}

/// [`object_key`] of an object's fields.
pub(crate) fn fields_key(object: &Map<String, Value>) -> Option<(String, String, String)> {
    let kind = object.get("kind")?.as_str()?;
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let meta = object.get("metadata")?;
    let name = meta.get("name")?.as_str()?;
    let namespace = meta
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    // A Secret and its metadata-only form (`PartialObjectMetadataList` items) are one object.
    if matches!(
        (api_version, kind),
        ("v1", "Secret") | ("meta.k8s.io/v1", "PartialObjectMetadata")
    ) {
        return Some(("Secret".into(), namespace.to_string(), name.to_string()));
    }
    let known = Kind::of(api_version, kind).is_some();
    Some((
        if known {
            kind.to_string()
        } else {
            format!("{api_version}/{kind}")
        },
        namespace.to_string(),
        name.to_string(),
    ))
}

pub(crate) fn is_relevant((kind, namespace, name): &(String, String, String)) -> bool {
    Kind::named(kind).is_some_and(|kind| kind.row().uses(namespace, name))
}

/// Drops a Secret's `data` and `stringData` the moment it is parsed, before anything keeps,
/// compares or reports the object: k3sdoctor reads the metadata of Secrets and nothing else,
/// so their values can reach no note, error or output.
pub(crate) fn drop_secret_data(object: &mut Value) {
    if object.get("kind").and_then(Value::as_str) != Some("Secret") {
        return;
    }
    if let Some(map) = object.as_object_mut() {
        map.remove("data");
        map.remove("stringData");
    }
}

/// support-bundle-kit rewrites the JSON text of every object before encoding it
/// (`toObjCommon` in pkg/manager/collectors/common.go): each `""` becomes `"null"`, and each
/// `"key":null,` (a letters-only key, followed by a comma) becomes `"key":"null",`, also inside
/// strings that hold JSON (annotations, ConfigMap values), where it reads `\"key\":null,`. A
/// released lock's holder thus reads `holderIdentity: "null"`. Dropping the `"null"` fields
/// gives back what the API server held (absent and empty read the same in every field
/// k3sdoctor uses), and embedded JSON gets its `null`s back.
pub(crate) fn drop_null_strings(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| v.as_str() != Some("null"));
            map.values_mut().for_each(drop_null_strings);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_null_strings),
        Value::String(text) if text.contains(":\"null\",") => {
            static EMBEDDED: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
                crate::const_regex::const_regex(r#"("[a-zA-Z]+":)"null","#)
            });
            *text = EMBEDDED.replace_all(text, "${1}null,").into_owned();
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::dump::object_stream::{AllObjects, Shape, read_objects};

    fn read(text: &str, file: &str, shape: Shape) -> Result<Vec<Value>, ReadError> {
        let mut all = AllObjects::default();
        read_objects(text, file, shape, &mut all)?;
        Ok(all.0)
    }

    fn docs(text: &str) -> Vec<Value> {
        read(text, "test.yaml", Shape::default()).unwrap()
    }

    fn assuming(api_version: &'static str, kind: &'static str) -> Shape {
        Shape {
            assume: Some((api_version, kind)),
            null_strings: false,
        }
    }

    #[test]
    fn reads_kubectl_lists_and_multi_document_yaml() {
        let yaml = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: a}\n---\n\
                    apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: k3s, namespace: kube-system}\n";
        let found = docs(yaml);
        assert_eq!(found.len(), 2);
        assert_eq!(object_key(&found[1]).unwrap().0, "Lease");
    }

    #[test]
    fn api_lists_give_their_items_a_kind() {
        let json = r#"{"kind":"LeaseList","apiVersion":"coordination.k8s.io/v1","items":[{"metadata":{"name":"k3s","namespace":"kube-system"}}]}"#;
        let found = docs(json);
        assert_eq!(
            object_key(&found[0]).unwrap(),
            ("Lease".into(), "kube-system".into(), "k3s".into())
        );
    }

    #[test]
    fn crlf_and_single_quoted_json_values_parse() {
        let yaml = "apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: k3s\r\n  namespace: kube-system\r\n  annotations:\r\n    control-plane.alpha.kubernetes.io/leader: '{\"holderIdentity\":\"a\"}'\r\n";
        let found = docs(yaml);
        assert_eq!(
            found[0]
                .pointer("/metadata/annotations/control-plane.alpha.kubernetes.io~1leader")
                .unwrap(),
            r#"{"holderIdentity":"a"}"#
        );
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(read("{not json", "x.json", Shape::default()).is_err());
        assert!(read("a: [unclosed", "x.yaml", Shape::default()).is_err());
        assert!(read("", "x.yaml", Shape::default()).unwrap().is_empty());
    }

    /// Adversarial nesting fails fast with the clear error. The times are
    /// printed for the report (`--nocapture`), not asserted. In a debug build on a loaded
    /// machine: 0.2 ms (flow, caught by the pre-scan), 0.3 ms (JSON, serde_json's own limit of
    /// 128), 0.8 s (block sequences: linear, stopped by serde_yaml_ng's recursion limit) and
    /// 1.9 s for a mebibyte of tokens at the deepest flow level allowed, where a flat
    /// one-level list of the same size takes 1.5 s: what is left is the parser's own speed.
    #[test]
    fn a_mebibyte_of_nesting_fails_fast_and_clearly() {
        let mib = 1 << 20;
        let cases = [
            ("yaml flow", format!("a: {}", "[".repeat(mib - 3))),
            ("yaml flow maps", format!("a: {}", "{a: ".repeat(mib / 4))),
            ("json", "[".repeat(mib)),
            ("yaml block", format!("a:\n{}", "- ".repeat(mib / 2))),
            // The worst the pre-scan lets through: every token at the deepest flow level.
            (
                "yaml flow at the limit",
                format!(
                    "a: {}{}",
                    "[".repeat(MAX_FLOW_NESTING),
                    "a, ".repeat(mib / 3)
                ),
            ),
        ];
        for (what, text) in cases {
            let started = std::time::Instant::now();
            let err = read(&text, "deep.yaml", Shape::default()).unwrap_err();
            eprintln!("{what}: {:?} for {} bytes", started.elapsed(), text.len());
            assert!(
                err.message
                    .starts_with("cannot parse dump file deep.yaml: "),
                "{what}: {}",
                err.message
            );
        }
    }

    #[test]
    fn yaml_sequences_and_kindless_lists_are_read() {
        let found = docs(
            "- apiVersion: k3s.cattle.io/v1\n  kind: ETCDSnapshotFile\n  metadata: {name: a}\n",
        );
        assert_eq!(object_key(&found[0]).unwrap().0, "ETCDSnapshotFile");
        let lease = assuming("coordination.k8s.io/v1", "Lease");
        let list = r#"{"metadata": {}, "items": [{"metadata": {"name": "k3s", "namespace": "kube-system"}}]}"#;
        let items = read(list, "x.json", lease).unwrap();
        assert_eq!(object_key(&items[0]).unwrap().0, "Lease");
        // A `kind: List` (support-bundle-kit, kubectl) whose items lack theirs.
        let list =
            r#"{"apiVersion": "v1", "kind": "List", "items": [{"metadata": {"name": "s1"}}]}"#;
        let items = read(list, "x.json", assuming("v1", "Node")).unwrap();
        assert_eq!(object_key(&items[0]).unwrap().0, "Node");
        let found = read(
            r#"{"kind": "ConfigMap", "metadata": {"name": "x"}}"#,
            "x.json",
            lease,
        )
        .unwrap();
        assert_eq!(
            found[0]["kind"], "ConfigMap",
            "a kind the object states wins"
        );
    }

    #[test]
    fn null_strings_are_dropped_everywhere() {
        let mut v = serde_json::json!({"spec": {"holderIdentity": "null", "leaseDurationSeconds": 15},
            "metadata": {"labels": {"a": "null", "b": "x"}}, "list": [{"c": "null"}, "null"]});
        drop_null_strings(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"spec": {"leaseDurationSeconds": 15},
            "metadata": {"labels": {"b": "x"}}, "list": [{}, "null"]})
        );
        // JSON held in a string (an annotation) gets its nulls back too.
        let mut embedded = serde_json::json!({"a": r#"{"holderIdentity":"null","x":1}"#});
        drop_null_strings(&mut embedded);
        assert_eq!(
            embedded,
            serde_json::json!({"a": r#"{"holderIdentity":null,"x":1}"#})
        );
    }
}
