//! What Go's JSON decoding into the typed built-in structs does: type errors, MicroTime parsing
//! (Leases), dropped unknown fields and the empty fields `omitempty` leaves out. Failures are 400 on
//! POST/PUT and 422 on PATCH (samples 033–039).

use super::microtime;
use super::resources::ResourceDef;
use serde_json::{Map, Value};

const OBJECT_META_FIELDS: [&str; 15] = [
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_error(v: &Value, field: &str, go_type: &str) -> String {
    let shown = match v {
        Value::Number(n) => format!("number {n}"),
        other => json_type(other).to_string(),
    };
    format!("json: cannot unmarshal {shown} into Go struct field {field} of type {go_type}")
}

fn expect_string(v: &Value, field: &str) -> Result<(), String> {
    if v.is_string() || v.is_null() {
        Ok(())
    } else {
        Err(type_error(v, field, "string"))
    }
}

fn expect_int32(v: &Value, field: &str) -> Result<(), String> {
    match v {
        Value::Null => Ok(()),
        Value::Number(n) if n.as_i64().is_some_and(|i| i32::try_from(i).is_ok()) => Ok(()),
        other => Err(type_error(other, field, "int32")),
    }
}

fn expect_string_map(v: &Value, field: &str) -> Result<(), String> {
    match v {
        Value::Null => Ok(()),
        Value::Object(map) => map.values().try_for_each(|x| expect_string(x, field)),
        other => Err(type_error(other, field, "map[string]string")),
    }
}

/// Remove `null` members and the empty maps/lists Go's `omitempty` would drop.
fn drop_empty(map: &mut Map<String, Value>, omitempty: &[&str]) {
    map.retain(|k, v| match v {
        Value::Null => false,
        Value::Object(m) if m.is_empty() => !omitempty.contains(&k.as_str()),
        Value::Array(a) if a.is_empty() => !omitempty.contains(&k.as_str()),
        _ => true,
    });
}

fn decode_metadata(meta: &mut Value) -> Result<(), String> {
    let Some(map) = meta.as_object_mut() else {
        return if meta.is_null() {
            Ok(())
        } else {
            Err(type_error(meta, "ObjectMeta.metadata", "v1.ObjectMeta"))
        };
    };
    map.retain(|k, _| OBJECT_META_FIELDS.contains(&k.as_str()));
    for field in [
        "name",
        "generateName",
        "namespace",
        "uid",
        "resourceVersion",
    ] {
        if let Some(v) = map.get(field) {
            expect_string(v, &format!("ObjectMeta.metadata.{field}"))?;
        }
    }
    for field in ["labels", "annotations"] {
        if let Some(v) = map.get(field) {
            expect_string_map(v, &format!("ObjectMeta.metadata.{field}"))?;
        }
    }
    if let Some(v) = map.get("finalizers") {
        match v {
            Value::Null => {}
            Value::Array(items) => items
                .iter()
                .try_for_each(|i| expect_string(i, "ObjectMeta.metadata.finalizers"))?,
            other => {
                return Err(type_error(
                    other,
                    "ObjectMeta.metadata.finalizers",
                    "[]string",
                ));
            }
        }
    }
    drop_empty(
        map,
        &[
            "labels",
            "annotations",
            "finalizers",
            "ownerReferences",
            "managedFields",
        ],
    );
    Ok(())
}

/// Decode `obj` as the typed object of `def` would be decoded (custom resources are unstructured:
/// nothing to do here). `Err` is the Go decoding error text.
pub(crate) fn decode(def: &ResourceDef, obj: &mut Value) -> Result<(), String> {
    if def.custom {
        return Ok(());
    }
    let Some(map) = obj.as_object_mut() else {
        return Err(format!(
            "json: cannot unmarshal {} into Go value of type {}",
            json_type(obj),
            def.kind
        ));
    };
    if let Some(meta) = map.get_mut("metadata") {
        decode_metadata(meta)?;
    }
    match def.kind {
        "Lease" => {
            map.retain(|k, _| matches!(k.as_str(), "kind" | "apiVersion" | "metadata" | "spec"));
            let spec = map
                .entry("spec")
                .or_insert_with(|| Value::Object(Map::new()));
            if spec.is_null() {
                *spec = Value::Object(Map::new());
            }
            let Some(spec) = spec.as_object_mut() else {
                return Err(type_error(spec, "Lease.spec", "v1.LeaseSpec"));
            };
            spec.retain(|k, _| {
                matches!(
                    k.as_str(),
                    "holderIdentity"
                        | "leaseDurationSeconds"
                        | "acquireTime"
                        | "renewTime"
                        | "leaseTransitions"
                        | "strategy"
                        | "preferredHolder"
                )
            });
            for field in ["holderIdentity", "strategy", "preferredHolder"] {
                if let Some(v) = spec.get(field) {
                    expect_string(v, &format!("LeaseSpec.spec.{field}"))?;
                }
            }
            for field in ["leaseDurationSeconds", "leaseTransitions"] {
                if let Some(v) = spec.get(field) {
                    expect_int32(v, &format!("LeaseSpec.spec.{field}"))?;
                }
            }
            for field in ["acquireTime", "renewTime"] {
                match spec.get(field) {
                    Some(Value::String(s)) => {
                        let normalised = microtime::normalize_micro(s)?;
                        spec.insert(field.to_string(), Value::String(normalised));
                    }
                    Some(Value::Null) | None => {}
                    Some(other) => {
                        return Err(type_error(
                            other,
                            &format!("LeaseSpec.spec.{field}"),
                            "v1.MicroTime",
                        ));
                    }
                }
            }
            drop_empty(spec, &[]);
        }
        "ConfigMap" => {
            map.retain(|k, _| {
                matches!(
                    k.as_str(),
                    "kind" | "apiVersion" | "metadata" | "immutable" | "data" | "binaryData"
                )
            });
            if let Some(v) = map.get("data") {
                expect_string_map(v, "ConfigMap.data")?;
            }
            if let Some(v) = map.get("binaryData") {
                match v {
                    Value::Null => {}
                    Value::Object(entries) => {
                        for value in entries.values() {
                            let Some(s) = value.as_str() else {
                                return Err(type_error(value, "ConfigMap.binaryData", "[]uint8"));
                            };
                            decode_base64(s)?;
                        }
                    }
                    other => {
                        return Err(type_error(
                            other,
                            "ConfigMap.binaryData",
                            "map[string][]uint8",
                        ));
                    }
                }
            }
            drop_empty(map, &["data", "binaryData"]);
        }
        "Node" => {
            map.retain(|k, _| {
                matches!(
                    k.as_str(),
                    "kind" | "apiVersion" | "metadata" | "spec" | "status"
                )
            });
            for part in ["spec", "status"] {
                let v = map.entry(part).or_insert_with(|| Value::Object(Map::new()));
                if v.is_null() {
                    *v = Value::Object(Map::new());
                }
            }
        }
        _ => {}
    }
    Ok(())
}

pub(crate) fn decode_base64(s: &str) -> Result<Vec<u8>, String> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .map_err(|e| match e {
            base64::DecodeError::InvalidByte(at, _)
            | base64::DecodeError::InvalidLastSymbol(at, _) => {
                format!("illegal base64 data at input byte {at}")
            }
            _ => format!("illegal base64 data at input byte {}", s.len()),
        })
}
