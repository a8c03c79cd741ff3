//! The write verbs: create (POST), update (PUT) and delete, plus the update half shared with
//! PATCH. Every step follows the order of kube-apiserver's generic registry store
//! (`k8s.io/apiserver/pkg/registry/generic/registry/store.go`): body limit, options, decoding,
//! existence, preconditions and resourceVersion, validation, then the write (or not, for
//! `dryRun=All`).

use super::handlers::{Ctx, check_body_size, dry_run};
use super::resources;
use super::state::State;
use super::status::{self, Cause, Reply, Result};
use super::store::{new_uid, random_suffix};
use super::{decode, managed_fields, microtime, validation};
use serde_json::{Value, json};

/// Parse a POST/PUT body into an object of `def`, fill `kind`/`apiVersion`, run the typed decoding.
fn decode_body(ctx: &Ctx) -> Result<Value> {
    let def = ctx.def;
    let mut obj: Value = serde_json::from_slice(&ctx.req.body).map_err(|e| {
        let summary: String = String::from_utf8_lossy(&ctx.req.body).chars().take(30).collect();
        status::bad_request(&format!(
            "the object provided is unrecognized (must be of type {}): couldn't get version/kind; json parse error: {e} ({summary})",
            def.kind
        ))
    })?;
    let Some(map) = obj.as_object_mut() else {
        return Err(status::bad_request(&format!(
            "the object provided is unrecognized (must be of type {})",
            def.kind
        )));
    };
    let api_version = def.api_version();
    match map.get("apiVersion").and_then(Value::as_str) {
        Some(v) if !v.is_empty() && v != api_version => {
            return Err(status::bad_request(&format!(
                "the API version in the data ({v}) does not match the expected API version ({api_version})"
            )));
        }
        _ => {}
    }
    match map.get("kind").and_then(Value::as_str) {
        Some(k) if !k.is_empty() && k != def.kind => {
            return Err(status::bad_request(&format!(
                "{k} in version \"{}\" cannot be handled as a {}: no kind \"{k}\" is registered for version \"{api_version}\" in scheme \"pkg/runtime/scheme.go:100\"",
                def.version, def.kind
            )));
        }
        _ => {}
    }
    map.insert("kind".into(), json!(def.kind));
    map.insert("apiVersion".into(), json!(api_version));
    if !map.get("metadata").is_some_and(Value::is_object) {
        map.insert("metadata".into(), json!({}));
    }
    let body_ns = obj["metadata"]["namespace"]
        .as_str()
        .unwrap_or("")
        .to_string();
    if def.namespaced {
        if !body_ns.is_empty() && body_ns != ctx.namespace {
            return Err(status::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        obj["metadata"]["namespace"] = json!(ctx.namespace);
    } else if let Some(meta) = obj["metadata"].as_object_mut() {
        meta.remove("namespace");
    }
    decode::decode(def, &mut obj).map_err(|e| {
        status::bad_request(&format!(
            "{} in version \"{}\" cannot be handled as a {}: {e}",
            def.kind, def.version, def.kind
        ))
    })?;
    if def.custom {
        super::crd::prune(&mut obj);
    }
    Ok(obj)
}

fn managed_base(obj: &Value, fallback: &Value) -> Value {
    match obj["metadata"].get("managedFields") {
        Some(Value::Array(a)) if !a.is_empty() => Value::Array(a.clone()),
        _ => fallback.clone(),
    }
}

pub(crate) fn create(state: &mut State, ctx: &Ctx) -> Result<Reply> {
    check_body_size(ctx.req)?;
    let dry = dry_run(&ctx.req.query.get_all("dryRun"), "CreateOptions")?;
    let obj = decode_body(ctx)?;
    create_object(state, ctx, obj, dry)
}

/// The create half shared by POST and PUT-creates (Leases, sample 046).
fn create_object(state: &mut State, ctx: &Ctx, mut obj: Value, dry: bool) -> Result<Reply> {
    let def = ctx.def;
    if def.namespaced && !resources::NAMESPACES.contains(&ctx.namespace.as_str()) {
        return Err(status::not_found("namespaces", "", &ctx.namespace));
    }
    let meta = obj["metadata"].as_object_mut().expect("metadata object");
    let generate = meta
        .get("generateName")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if meta
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .is_empty()
        && !generate.is_empty()
    {
        meta.insert(
            "name".into(),
            json!(format!("{generate}{}", random_suffix())),
        );
    }
    for field in [
        "resourceVersion",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "selfLink",
        "generation",
    ] {
        meta.remove(field);
    }
    meta.insert("uid".into(), json!(new_uid()));
    meta.insert("creationTimestamp".into(), json!(microtime::now_seconds()));
    if def.custom {
        meta.insert("generation".into(), json!(1));
    }
    let causes = validation::validate(def, &obj, None);
    let name = obj["metadata"]["name"].as_str().unwrap_or("").to_string();
    if !causes.is_empty() {
        return Err(status::invalid(def.kind, def.group, &name, &causes));
    }
    let key = ctx.key(&name);
    if state.store.get(&key).is_some() {
        return Err(status::already_exists(def, &name));
    }
    let base = managed_base(&obj, &json!([]));
    managed_fields::record_update(
        &Value::Null,
        &mut obj,
        &base,
        &ctx.req.manager(),
        &def.api_version(),
        def.custom,
    );
    if dry {
        return Ok(ctx.reply(201, &obj));
    }
    let stored = state.store.write(key, obj);
    Ok(ctx.reply(201, &stored))
}

pub(crate) fn update(state: &mut State, ctx: &Ctx) -> Result<Reply> {
    check_body_size(ctx.req)?;
    let dry = dry_run(&ctx.req.query.get_all("dryRun"), "UpdateOptions")?;
    let obj = decode_body(ctx)?;
    let body_name = obj["metadata"]["name"].as_str().unwrap_or("");
    if body_name != ctx.name {
        return Err(status::bad_request(&format!(
            "the name of the object ({body_name}) does not match the name on the URL ({})",
            ctx.name
        )));
    }
    let Some(old) = state.store.get(&ctx.key(&ctx.name)).cloned() else {
        if ctx.def.create_on_update {
            return create_object(state, ctx, obj, dry);
        }
        return Err(status::object_not_found(ctx.def, &ctx.name));
    };
    let (new_uid, old_uid) = (
        obj["metadata"]["uid"].as_str().unwrap_or(""),
        old["metadata"]["uid"].as_str().unwrap_or(""),
    );
    if !new_uid.is_empty() && new_uid != old_uid {
        let why = format!(
            "Precondition failed: UID in precondition: {new_uid}, UID in object meta: {old_uid}"
        );
        return Err(status::conflict(ctx.def, &ctx.name, &why));
    }
    let base = managed_base(&obj, &old["metadata"]["managedFields"]);
    commit_update(state, ctx, &old, obj, &base, dry)
}

/// The update half shared by PUT and PATCH: resourceVersion rules, validation, finalizers,
/// managedFields, no-op detection and the write.
pub(crate) fn commit_update(
    state: &mut State,
    ctx: &Ctx,
    old: &Value,
    mut obj: Value,
    base: &Value,
    dry: bool,
) -> Result<Reply> {
    let def = ctx.def;
    let old_rv = old["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let new_rv = obj["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("")
        .to_string();
    if new_rv.is_empty() {
        if !def.unconditional_update {
            let cause = Cause::new(
                "FieldValueInvalid",
                "metadata.resourceVersion",
                "Invalid value: 0x0: must be specified for an update",
            );
            return Err(status::invalid(def.plural, def.group, &ctx.name, &[cause]));
        }
    } else if new_rv != old_rv {
        return Err(status::conflict(def, &ctx.name, status::OPTIMISTIC_LOCK));
    }
    let meta = obj["metadata"].as_object_mut().expect("metadata object");
    meta.insert("resourceVersion".into(), json!(old_rv));
    for field in [
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
    ] {
        match old["metadata"].get(field) {
            Some(v) => meta.insert(field.into(), v.clone()),
            None => meta.remove(field),
        };
    }
    if def.kind == "Node" {
        obj["status"] = old["status"].clone();
    }
    let causes = validation::validate(def, &obj, Some(old));
    if !causes.is_empty() {
        return Err(status::invalid(def.kind, def.group, &ctx.name, &causes));
    }
    managed_fields::record_update(
        old,
        &mut obj,
        base,
        &ctx.req.manager(),
        &def.api_version(),
        def.custom,
    );
    if obj == *old {
        // A no-op update writes nothing and keeps the resourceVersion.
        return Ok(ctx.reply(200, old));
    }
    if def.custom {
        let content = |v: &Value| {
            let mut v = v.clone();
            v.as_object_mut().map(|m| m.remove("metadata"));
            v
        };
        if content(&obj) != content(old) {
            let generation = old["metadata"]["generation"].as_i64().unwrap_or(0);
            obj["metadata"]["generation"] = json!(generation + 1);
        }
    }
    let key = ctx.key(&ctx.name);
    let finalizers_left = obj["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| !f.is_empty());
    if !old["metadata"]["deletionTimestamp"].is_null() && !finalizers_left {
        // The last finalizer is gone: the object is deleted (sample 108 answers the final state).
        if !dry {
            state.store.delete(&key);
        }
        return Ok(ctx.reply(200, &obj));
    }
    if dry {
        return Ok(ctx.reply(200, &obj));
    }
    let stored = state.store.write(key, obj);
    Ok(ctx.reply(200, &stored))
}

pub(crate) fn delete(state: &mut State, ctx: &Ctx) -> Result<Reply> {
    let options: Value = if ctx.req.body.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        serde_json::from_slice(&ctx.req.body).map_err(|e| status::bad_request(&e.to_string()))?
    };
    let mut dry_values = ctx.req.query.get_all("dryRun");
    if let Some(list) = options["dryRun"].as_array() {
        dry_values.extend(list.iter().filter_map(|v| v.as_str().map(str::to_string)));
    }
    let dry = dry_run(&dry_values, "DeleteOptions")?;
    let key = ctx.key(&ctx.name);
    let mut obj = state
        .store
        .get(&key)
        .cloned()
        .ok_or_else(|| status::object_not_found(ctx.def, &ctx.name))?;
    let meta = obj["metadata"].clone();
    for (field, label) in [("uid", "UID"), ("resourceVersion", "ResourceVersion")] {
        if let Some(want) = options["preconditions"][field].as_str() {
            let have = meta[field].as_str().unwrap_or("");
            if want != have {
                let why = format!(
                    "Precondition failed: {label} in precondition: {want}, {label} in object meta: {have}"
                );
                return Err(status::conflict(ctx.def, &ctx.name, &why));
            }
        }
    }
    if meta["finalizers"].as_array().is_some_and(|f| !f.is_empty()) {
        // Finalizers pending: mark for deletion and answer the object (sample 105).
        if !meta["deletionTimestamp"].is_null() {
            return Ok(ctx.reply(200, &obj));
        }
        obj["metadata"]["deletionTimestamp"] = json!(microtime::now_seconds());
        obj["metadata"]["deletionGracePeriodSeconds"] = json!(0);
        if let Some(generation) = meta["generation"].as_i64().filter(|g| *g > 0) {
            obj["metadata"]["generation"] = json!(generation + 1);
        }
        if dry {
            return Ok(ctx.reply(200, &obj));
        }
        let stored = state.store.write(key, obj);
        return Ok(ctx.reply(200, &stored));
    }
    if !dry {
        state.store.delete(&key);
    }
    Ok(status::delete_success(
        ctx.def,
        &ctx.name,
        meta["uid"].as_str().unwrap_or(""),
    ))
}
