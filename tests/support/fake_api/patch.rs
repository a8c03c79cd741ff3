//! PATCH: JSON merge patch (RFC 7386), JSON patch (RFC 6902), strategic merge patch (treated as a
//! merge patch: the fake's types have no list merge keys that matter), samples 018–028, 037–039, 045.

use super::decode;
use super::handlers::{Ctx, MAX_BODY_BYTES, dry_run};
use super::json;
use super::state::State;
use super::status::{self, Cause, Reply, Result};
use super::writes::commit_update;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

type Touched = BTreeSet<Vec<String>>;

/// RFC 7386, recording which objects were descended into (Go re-encodes those with sorted keys).
fn merge(target: &mut Value, patch: &Value, path: &mut Vec<String>, touched: &mut Touched) {
    let Value::Object(patch_map) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    touched.insert(path.clone());
    let target_map = target.as_object_mut().expect("object");
    for (key, value) in patch_map {
        if value.is_null() {
            target_map.remove(key);
            continue;
        }
        let entry = target_map.entry(key.clone()).or_insert(Value::Null);
        path.push(key.clone());
        if value.is_object() && entry.is_object() {
            merge(entry, value, path, touched);
        } else {
            *entry = strip_nulls(value);
        }
        path.pop();
    }
}

fn strip_nulls(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, x)| !x.is_null())
                .map(|(k, x)| (k.clone(), strip_nulls(x)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn pointer_tokens(pointer: &str) -> std::result::Result<Vec<String>, ()> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    let rest = pointer.strip_prefix('/').ok_or(())?;
    Ok(rest
        .split('/')
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect())
}

/// Navigate to the parent container of `tokens`, marking the containers on the way as touched.
fn parent<'v>(
    doc: &'v mut Value,
    tokens: &[String],
    touched: &mut Touched,
) -> Option<&'v mut Value> {
    let mut node = doc;
    let mut path = Vec::new();
    touched.insert(path.clone());
    for token in &tokens[..tokens.len().saturating_sub(1)] {
        node = match node {
            Value::Object(map) => {
                path.push(token.clone());
                map.get_mut(token)?
            }
            Value::Array(items) => {
                path.push("*".into());
                items.get_mut(token.parse::<usize>().ok()?)?
            }
            _ => return None,
        };
        touched.insert(path.clone());
    }
    Some(node)
}

fn get_at<'v>(doc: &'v Value, tokens: &[String]) -> Option<&'v Value> {
    tokens.iter().try_fold(doc, |node, t| match node {
        Value::Object(map) => map.get(t),
        Value::Array(items) => items.get(t.parse::<usize>().ok()?),
        _ => None,
    })
}

fn remove_at(doc: &mut Value, tokens: &[String], touched: &mut Touched) -> Option<Value> {
    let last = tokens.last()?;
    match parent(doc, tokens, touched)? {
        Value::Object(map) => map.remove(last),
        Value::Array(items) => {
            let i = last.parse::<usize>().ok().filter(|i| *i < items.len())?;
            Some(items.remove(i))
        }
        _ => None,
    }
}

fn add_at(
    doc: &mut Value,
    tokens: &[String],
    value: Value,
    replace: bool,
    touched: &mut Touched,
) -> Option<()> {
    let Some(last) = tokens.last() else {
        *doc = value;
        return Some(());
    };
    match parent(doc, tokens, touched)? {
        Value::Object(map) => {
            if replace && !map.contains_key(last) {
                return None;
            }
            map.insert(last.clone(), value);
        }
        Value::Array(items) => {
            if last == "-" && !replace {
                items.push(value);
            } else {
                let i = last.parse::<usize>().ok()?;
                if replace {
                    *items.get_mut(i)? = value;
                } else if i <= items.len() {
                    items.insert(i, value);
                } else {
                    return None;
                }
            }
        }
        _ => return None,
    }
    Some(())
}

/// RFC 6902. `Err(())` for any failed operation (the apiserver answers them all alike, sample 021).
fn json_patch(
    doc: &mut Value,
    ops: &[Value],
    touched: &mut Touched,
) -> std::result::Result<(), ()> {
    for op in ops {
        let path = pointer_tokens(op["path"].as_str().ok_or(())?)?;
        let value = || op.get("value").cloned().ok_or(());
        match op["op"].as_str().ok_or(())? {
            "add" => add_at(doc, &path, value()?, false, touched).ok_or(())?,
            "replace" => add_at(doc, &path, value()?, true, touched).ok_or(())?,
            "remove" => remove_at(doc, &path, touched).map(drop).ok_or(())?,
            "test" => {
                if get_at(doc, &path) != Some(&value()?) {
                    return Err(());
                }
            }
            "copy" | "move" => {
                let from = pointer_tokens(op["from"].as_str().ok_or(())?)?;
                let moved = if op["op"] == "move" {
                    remove_at(doc, &from, touched).ok_or(())?
                } else {
                    get_at(doc, &from).cloned().ok_or(())?
                };
                add_at(doc, &path, moved, false, touched).ok_or(())?;
            }
            _ => return Err(()),
        }
    }
    Ok(())
}

pub(crate) fn patch(state: &mut State, ctx: &Ctx) -> Result<Reply> {
    let req = ctx.req;
    let content_type = req
        .content_type
        .as_deref()
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_string();
    match content_type.as_str() {
        "application/merge-patch+json" | "application/json-patch+json" => {}
        "application/strategic-merge-patch+json" if !ctx.def.custom => {}
        "application/strategic-merge-patch+json" => {
            return Err(status::unsupported_media_type(
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
            ));
        }
        "application/apply-patch+yaml" => {
            if req.query.get("fieldManager").is_none_or(str::is_empty) {
                let cause = Cause::required("fieldManager", "is required for apply patch");
                return Err(status::invalid_options("PatchOptions", cause));
            }
            // Server-side apply as a merge of the applied fields: enough for one writer (the
            // heal Lease's election); field ownership and apply conflicts are not simulated, so
            // elections between several writers are tested on the real API server only.
            if ctx.def.custom {
                return Err(status::unsupported_media_type(
                    "server-side apply is not implemented by the fake API server",
                ));
            }
        }
        _ => {
            return Err(status::unsupported_media_type(
                "415: Unsupported Media Type",
            ));
        }
    }
    let dry = dry_run(&req.query.get_all("dryRun"), "PatchOptions")?;
    if req.body_too_large || req.body.len() > MAX_BODY_BYTES {
        return Err(status::entity_too_large());
    }
    let key = ctx.key(&ctx.name);
    let old = state
        .store
        .get(&key)
        .cloned()
        .ok_or_else(|| status::object_not_found(ctx.def, &ctx.name))?;
    let mut patched = old.clone();
    let mut touched = Touched::new();
    if content_type == "application/json-patch+json" {
        let ops: Vec<Value> =
            serde_json::from_slice(&req.body).map_err(|e| status::bad_request(&e.to_string()))?;
        json_patch(&mut patched, &ops, &mut touched).map_err(|()| status::invalid_generic())?;
    } else {
        let patch: Value = serde_json::from_slice(&req.body)
            .map_err(|_| status::bad_request("Invalid JSON Patch"))?;
        merge(&mut patched, &patch, &mut Vec::new(), &mut touched);
    }
    if !patched.is_object() || !patched["metadata"].is_object() {
        return Err(status::bad_request(
            "the patched object is not a valid object",
        ));
    }
    let before_decoding = patched.clone();
    if let Err(e) = decode::decode(ctx.def, &mut patched) {
        // Decoding the patched document failed: 422 on field "patch" quoting the whole document
        // as Go's json-patch library re-encoded it (samples 037–039).
        let doc = json::to_compact_touched(&before_decoding, ctx.def.layout(), &touched);
        let cause = Cause::invalid("patch", &doc, &e);
        return Err(status::invalid("", "", "", &[cause]));
    }
    if ctx.def.custom {
        super::crd::prune(&mut patched);
    }
    let meta = patched["metadata"].as_object_mut().expect("metadata");
    if meta.get("name").and_then(Value::as_str) != Some(ctx.name.as_str()) {
        let name = meta
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        return Err(status::bad_request(&format!(
            "the name of the object ({name}) does not match the name on the URL ({})",
            ctx.name
        )));
    }
    if meta
        .get("resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .is_empty()
    {
        meta.insert(
            "resourceVersion".into(),
            old["metadata"]["resourceVersion"].clone(),
        );
    }
    let base = patched["metadata"]
        .get("managedFields")
        .cloned()
        .unwrap_or(Value::Array(Vec::new()));
    commit_update(state, ctx, &old, patched, &base, dry)
}
