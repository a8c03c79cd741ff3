//! The `ETCDSnapshotFile` CRD's structural schema (k3s `pkg/apis/k3s.cattle.io/v1/types.go`):
//! pruning of unknown fields (sample 101) and OpenAPI validation (samples 098–100).

use super::status::Cause;
use serde_json::{Map, Value};

const SPEC_FIELDS: [&str; 5] = ["snapshotName", "nodeName", "location", "metadata", "s3"];
const S3_FIELDS: [&str; 8] = [
    "endpoint",
    "endpointCA",
    "skipSSLVerify",
    "bucket",
    "bucketLookup",
    "region",
    "prefix",
    "insecure",
];
const STATUS_FIELDS: [&str; 4] = ["size", "creationTime", "readyToUse", "error"];
const ERROR_FIELDS: [&str; 2] = ["time", "message"];

/// The `x-kubernetes-int-or-string` Quantity pattern from the CRD (sample 098).
pub(crate) const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

fn prune_object(v: &mut Value, keep: &[&str]) {
    if let Some(map) = v.as_object_mut() {
        map.retain(|k, x| keep.contains(&k.as_str()) && !x.is_null());
    }
}

/// Drop unknown fields and nulls, like the apiextensions-apiserver's structural pruning.
pub(crate) fn prune(obj: &mut Value) {
    prune_object(obj, &["apiVersion", "kind", "metadata", "spec", "status"]);
    prune_object(&mut obj["spec"], &SPEC_FIELDS);
    if obj["spec"]["s3"].is_object() {
        prune_object(&mut obj["spec"]["s3"], &S3_FIELDS);
    }
    if obj["status"].is_object() {
        prune_object(&mut obj["status"], &STATUS_FIELDS);
        if obj["status"]["error"].is_object() {
            prune_object(&mut obj["status"]["error"], &ERROR_FIELDS);
        }
    }
}

fn openapi_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_cause(field: &str, v: &Value, expected: &str) -> Cause {
    let t = openapi_type(v);
    Cause::new(
        "FieldValueTypeInvalid",
        field,
        format!("Invalid value: \"{t}\": {field} in body must be of type {expected}: \"{t}\""),
    )
}

fn check_type(causes: &mut Vec<Cause>, field: &str, v: Option<&Value>, expected: &str) {
    if let Some(v) = v
        && openapi_type(v) != expected
    {
        causes.push(type_cause(field, v, expected));
    }
}

/// A hand-written matcher for [`QUANTITY_PATTERN`].
pub(crate) fn is_quantity(s: &str) -> bool {
    fn number(s: &str) -> Option<&str> {
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        let rest = &s[digits..];
        if let Some(after_dot) = rest.strip_prefix('.') {
            let frac = after_dot.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 && frac == 0 {
                return None;
            }
            return Some(&after_dot[frac..]);
        }
        if digits == 0 { None } else { Some(rest) }
    }
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let Some(rest) = number(s) else { return false };
    match rest {
        "" | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" | "n" | "u" | "m" | "k" | "M" | "G" | "T"
        | "P" | "E" => true,
        _ => match rest.strip_prefix(['e', 'E']) {
            Some(exp) => number(exp.strip_prefix(['+', '-']).unwrap_or(exp)) == Some(""),
            None => false,
        },
    }
}

/// OpenAPI validation errors for an `ETCDSnapshotFile`.
pub(crate) fn validate(obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let empty = Map::new();
    match obj.get("spec") {
        None => causes.push(Cause::required("spec", "")),
        Some(spec) if !spec.is_object() => causes.push(type_cause("spec", spec, "object")),
        Some(spec) => {
            let spec = spec.as_object().unwrap_or(&empty);
            for field in ["location", "nodeName", "snapshotName"] {
                let path = format!("spec.{field}");
                match spec.get(field) {
                    None => causes.push(Cause::required(path, "")),
                    v => check_type(&mut causes, &path, v, "string"),
                }
            }
            if let Some(meta) = spec.get("metadata") {
                match meta.as_object() {
                    Some(map) => {
                        for (k, v) in map {
                            check_type(
                                &mut causes,
                                &format!("spec.metadata.{k}"),
                                Some(v),
                                "string",
                            );
                        }
                    }
                    None => causes.push(type_cause("spec.metadata", meta, "object")),
                }
            }
            if let Some(s3) = spec.get("s3") {
                match s3.as_object() {
                    Some(map) => {
                        for (k, v) in map {
                            let expected = if k == "skipSSLVerify" || k == "insecure" {
                                "boolean"
                            } else {
                                "string"
                            };
                            check_type(&mut causes, &format!("spec.s3.{k}"), Some(v), expected);
                        }
                    }
                    None => causes.push(type_cause("spec.s3", s3, "object")),
                }
            }
        }
    }
    let Some(status) = obj.get("status") else {
        return causes;
    };
    let Some(status) = status.as_object() else {
        causes.push(type_cause("status", status, "object"));
        return causes;
    };
    match status.get("size") {
        Some(Value::String(s)) if !is_quantity(s) => causes.push(Cause::new(
            "FieldValueInvalid",
            "status.size",
            format!(
                "Invalid value: {}: status.size in body should match '{QUANTITY_PATTERN}'",
                super::json::go_quote(s)
            ),
        )),
        Some(v @ (Value::String(_) | Value::Null)) => {
            let _ = v;
        }
        Some(v) if openapi_type(v) == "integer" => {}
        Some(v) => {
            causes.push(type_cause("status.size", v, "integer,string"));
            causes.push(Cause::new(
                "FieldValueInvalid",
                "<nil>",
                "Invalid value: \"\": \"status.size\" must validate at least one schema (anyOf)",
            ));
            causes.push(type_cause("status.size", v, "integer"));
        }
        None => {}
    }
    check_type(
        &mut causes,
        "status.creationTime",
        status.get("creationTime"),
        "string",
    );
    check_type(
        &mut causes,
        "status.readyToUse",
        status.get("readyToUse"),
        "boolean",
    );
    if let Some(error) = status.get("error") {
        match error.as_object() {
            Some(map) => {
                check_type(&mut causes, "status.error.time", map.get("time"), "string");
                check_type(
                    &mut causes,
                    "status.error.message",
                    map.get("message"),
                    "string",
                );
            }
            None => causes.push(type_cause("status.error", error, "object")),
        }
    }
    causes
}
