//! Validation by the registry strategies (422 Invalid), with the apiserver's messages
//! (samples 031, 072–078, 098–100, 107).

use super::decode::decode_base64;
use super::json::go_quote;
use super::resources::ResourceDef;
use super::status::Cause;
use serde_json::{Map, Value};

/// The largest ConfigMap payload (`core.MaxSecretSize`), summed over data and binaryData values.
pub(crate) const CONFIGMAP_MAX_BYTES: usize = 1024 * 1024;

/// `NameIsDNSSubdomain` (Lease, ConfigMap, Node and custom resource names).
pub(crate) fn dns_subdomain_errors(name: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if name.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if !name.split('.').all(label_ok) {
        errs.push("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".to_string());
    }
    errs
}

fn metadata_causes(obj: &Value) -> Vec<Cause> {
    let name = obj["metadata"]["name"].as_str().unwrap_or("");
    if name.is_empty() {
        return vec![Cause::required(
            "metadata.name",
            "name or generateName is required",
        )];
    }
    dns_subdomain_errors(name)
        .into_iter()
        .map(|e| Cause::invalid("metadata.name", name, &e))
        .collect()
}

fn configmap_key_errors(key: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if key.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    if key.is_empty()
        || !key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b))
    {
        errs.push("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')".to_string());
    }
    match key {
        "." => errs.push("must not be '.'".to_string()),
        ".." => errs.push("must not be '..'".to_string()),
        k if k.starts_with("..") => errs.push("must not start with '..'".to_string()),
        _ => {}
    }
    errs
}

fn configmap_causes(obj: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut causes = Vec::new();
    let empty = Map::new();
    let data = obj["data"].as_object().unwrap_or(&empty);
    let binary = obj["binaryData"].as_object().unwrap_or(&empty);
    let mut total = 0usize;
    for (key, value) in data {
        for e in configmap_key_errors(key) {
            causes.push(Cause::invalid(format!("data[{key}]"), key, &e));
        }
        if binary.contains_key(key) {
            causes.push(Cause::invalid(
                format!("data[{key}]"),
                key,
                "duplicate of key present in binaryData",
            ));
        }
        total += value.as_str().map_or(0, str::len);
    }
    for (key, value) in binary {
        for e in configmap_key_errors(key) {
            causes.push(Cause::invalid(format!("binaryData[{key}]"), key, &e));
        }
        total += value
            .as_str()
            .and_then(|s| decode_base64(s).ok())
            .map_or(0, |b| b.len());
    }
    if total > CONFIGMAP_MAX_BYTES {
        causes.push(Cause::new(
            "FieldValueTooLong",
            "[]",
            format!("Too long: must have at most {CONFIGMAP_MAX_BYTES} bytes"),
        ));
    }
    if let Some(old) = old.filter(|o| o["immutable"] == Value::Bool(true)) {
        for field in ["data", "binaryData"] {
            if old[field] != obj[field] {
                causes.push(Cause::new(
                    "FieldValueForbidden",
                    field,
                    "Forbidden: field is immutable when `immutable` is set",
                ));
            }
        }
        if obj["immutable"] != Value::Bool(true) {
            causes.push(Cause::new(
                "FieldValueForbidden",
                "immutable",
                "Forbidden: field is immutable when `immutable` is set",
            ));
        }
    }
    causes
}

fn lease_causes(obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    if let Some(d) = obj["spec"]["leaseDurationSeconds"]
        .as_i64()
        .filter(|d| *d <= 0)
    {
        causes.push(Cause::new(
            "FieldValueInvalid",
            "spec.leaseDurationSeconds",
            format!("Invalid value: {d}: must be greater than 0"),
        ));
    }
    if let Some(t) = obj["spec"]["leaseTransitions"].as_i64().filter(|t| *t < 0) {
        causes.push(Cause::new(
            "FieldValueInvalid",
            "spec.leaseTransitions",
            format!("Invalid value: {t}: must to greater or equal than 0"),
        ));
    }
    causes
}

/// The events.k8s.io/v1 create rules k3sdoctor's Events must pass
/// (k8s.io/kubernetes pkg/apis/core/validation/events.go, `ValidateEventCreate` for v1).
fn event_causes(obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let required = |field: &str| obj[field].as_str().is_none_or(str::is_empty);
    for field in [
        "eventTime",
        "reportingController",
        "reportingInstance",
        "action",
        "reason",
    ] {
        if required(field) {
            causes.push(Cause::new(
                "FieldValueRequired",
                field,
                "Required value".to_string(),
            ));
        }
    }
    if let Some(c) = obj["reportingController"]
        .as_str()
        .filter(|c| !c.is_empty() && !c.contains('/'))
    {
        causes.push(Cause::new(
            "FieldValueInvalid",
            "reportingController",
            format!(
                "Invalid value: {}: a qualified name must have a prefix",
                go_quote(c)
            ),
        ));
    }
    if obj["reportingInstance"]
        .as_str()
        .is_some_and(|i| i.len() > 128)
    {
        causes.push(Cause::new(
            "FieldValueInvalid",
            "reportingInstance",
            "can have at most 128 characters".to_string(),
        ));
    }
    if obj["note"].as_str().is_some_and(|n| n.len() > 1024) {
        causes.push(Cause::new(
            "FieldValueInvalid",
            "note",
            "can have at most 1024 characters".to_string(),
        ));
    }
    if !matches!(obj["type"].as_str(), Some("Normal" | "Warning")) {
        causes.push(Cause::new(
            "FieldValueInvalid",
            "type",
            "Unsupported value: type must be Normal or Warning".to_string(),
        ));
    }
    if obj["regarding"]["namespace"].as_str() != obj["metadata"]["namespace"].as_str() {
        causes.push(Cause::new(
            "FieldValueInvalid",
            "regarding.namespace",
            "does not match event.namespace".to_string(),
        ));
    }
    causes
}

/// New finalizers on an object that is being deleted (sample 107).
fn finalizer_causes(obj: &Value, old: &Value) -> Vec<Cause> {
    if old["metadata"]["deletionTimestamp"].is_null() {
        return Vec::new();
    }
    let names = |v: &Value| -> Vec<String> {
        v["metadata"]["finalizers"]
            .as_array()
            .map_or(Vec::new(), |a| {
                a.iter()
                    .filter_map(|f| f.as_str().map(str::to_string))
                    .collect()
            })
    };
    let before = names(old);
    let added: Vec<String> = names(obj)
        .into_iter()
        .filter(|f| !before.contains(f))
        .collect();
    if added.is_empty() {
        return Vec::new();
    }
    let body = format!(
        "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers {}",
        super::json::go_string_slice(&added)
    );
    vec![Cause::new(
        "FieldValueForbidden",
        "metadata.finalizers",
        body,
    )]
}

/// All validation errors for `obj` (a create when `old` is `None`).
pub(crate) fn validate(def: &ResourceDef, obj: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut causes = metadata_causes(obj);
    if let Some(old) = old {
        let finalizers = finalizer_causes(obj, old);
        if def.custom {
            // The custom-resource strategy runs the ObjectMeta update check twice (sample 107).
            causes.extend(finalizers.iter().cloned());
        }
        causes.extend(finalizers);
    }
    match def.kind {
        "Lease" => causes.extend(lease_causes(obj)),
        "ConfigMap" => causes.extend(configmap_causes(obj, old)),
        "ETCDSnapshotFile" => causes.extend(super::crd::validate(obj)),
        "Event" if !def.group.is_empty() => causes.extend(event_causes(obj)),
        _ => {}
    }
    causes
}

/// `Invalid value: <v>` as Go formats a JSON value in a field error.
pub(crate) fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => go_quote(s),
        other => other.to_string(),
    }
}
