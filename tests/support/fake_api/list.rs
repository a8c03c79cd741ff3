//! LIST: limit/continue paging exactly like the etcd3 storage (`GetList`), resourceVersion
//! semantics, label and field selectors (samples 013, 110–126).

use super::handlers::Ctx;
use super::json::escape_into;
use super::selectors::{FieldSelector, LabelSelector};
use super::state::State;
use super::status::{self, Reply, Result};
use super::store::Snapshot;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value, json};

const EXPIRED_CONTINUE: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

/// `{"v":"meta.k8s.io/v1","rv":<rv>,"start":"<key>\u0000"}`, base64url without padding.
pub(crate) fn encode_continue(rv: i64, start: &str) -> String {
    let mut quoted = String::new();
    escape_into(&mut quoted, start);
    URL_SAFE_NO_PAD.encode(format!(
        "{{\"v\":\"meta.k8s.io/v1\",\"rv\":{rv},\"start\":{quoted}}}"
    ))
}

/// Go's `base64.RawURLEncoding.DecodeString` error offsets.
fn decode_base64_url(token: &str) -> std::result::Result<Vec<u8>, String> {
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::URL_SAFE,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_allow_trailing_bits(true)
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::RequireNone),
    );
    engine.decode(token).map_err(|e| {
        let at = match e {
            base64::DecodeError::InvalidByte(at, _)
            | base64::DecodeError::InvalidLastSymbol(at, _) => at,
            base64::DecodeError::InvalidPadding => token.find('=').unwrap_or(token.len()),
            _ => token.len().saturating_sub(1),
        };
        format!("illegal base64 data at input byte {at}")
    })
}

/// `(rv, start key)` from a continue token, or the message of the 400 (sample 113).
fn decode_continue(token: &str) -> std::result::Result<(i64, String), String> {
    let invalid = |why: String| format!("invalid continue token: continue key is not valid: {why}");
    let data = decode_base64_url(token).map_err(invalid)?;
    let parsed: Value = serde_json::from_slice(&data).map_err(|e| invalid(e.to_string()))?;
    if parsed["v"] != "meta.k8s.io/v1" {
        let v = parsed["v"].as_str().unwrap_or("");
        return Err(invalid(format!(
            "server does not recognize this encoded version \"{v}\""
        )));
    }
    let rv = parsed["rv"].as_i64().unwrap_or(0);
    if rv == 0 {
        return Err(invalid(
            "incorrect encoded start resourceVersion (version meta.k8s.io/v1)".into(),
        ));
    }
    let start = parsed["start"].as_str().unwrap_or("").to_string();
    if start.is_empty() {
        return Err(invalid(
            "encoded start key empty (version meta.k8s.io/v1)".into(),
        ));
    }
    if start.split('/').any(|p| p == ".." || p == ".")
        || start.starts_with('/')
        || start.contains("//")
    {
        return Err(invalid(start));
    }
    Ok((rv, start))
}

/// The etcd key of an object relative to the list prefix.
fn relative_key(item: &Snapshot, all_namespaces: bool) -> String {
    if all_namespaces {
        format!("{}/{}", item.key.namespace, item.key.name)
    } else {
        item.key.name.clone()
    }
}

fn too_large(rv: u64, current: u64) -> Reply {
    let mut reply = status::failure(
        504,
        "Timeout",
        &format!("Too large resource version: {rv}, current: {current}"),
        Some(
            json!({"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}], "retryAfterSeconds": 1}),
        ),
    );
    reply.headers.push(("Retry-After".into(), "1".into()));
    reply
}

pub(crate) fn list(state: &State, ctx: &Ctx) -> Result<Reply> {
    let q = &ctx.req.query;
    let def = ctx.def;
    let labels = LabelSelector::parse(q.get("labelSelector").unwrap_or(""))
        .map_err(|e| status::bad_request(&e))?;
    let allowed: &[&str] = if def.kind == "Node" {
        &["metadata.name", "spec.unschedulable"]
    } else if def.kind == "Event" && def.group.is_empty() {
        // The fields kube-apiserver's core/v1 Event strategy selects on (a subset).
        &[
            "metadata.name",
            "metadata.namespace",
            "involvedObject.kind",
            "involvedObject.name",
            "involvedObject.namespace",
            "reason",
            "type",
            "source",
        ]
    } else {
        &["metadata.name", "metadata.namespace"]
    };
    let fields = FieldSelector::parse(q.get("fieldSelector").unwrap_or(""), allowed)
        .map_err(|e| status::bad_request(&e))?;
    if matches!(q.get("watch"), Some("true" | "1")) {
        let namespace =
            (def.namespaced && !ctx.namespace.is_empty()).then_some(ctx.namespace.as_str());
        return super::watch::watch(state, ctx, labels, fields, namespace);
    }
    let limit: i64 = match q.get("limit").filter(|l| !l.is_empty()) {
        None => 0,
        Some(l) => l.parse().map_err(|_| {
            status::bad_request(&format!(
                "strconv.ParseInt: parsing \"{l}\": invalid syntax"
            ))
        })?,
    };
    let rv_param = q.get("resourceVersion").unwrap_or("");
    let rv_match = q.get("resourceVersionMatch").unwrap_or("");
    let continue_token = q.get("continue").unwrap_or("");
    let current = state.store.current_rv();
    let parse_rv = |s: &str| {
        s.parse::<u64>()
            .map_err(|_| status::bad_request(&format!("invalid resource version: {s}")))
    };

    // Which revision to read, where to start, whether limit applies, watch-cache ordering.
    let mut start = String::new();
    let mut at: Option<u64> = None;
    let mut paging = limit > 0;
    let mut from_cache = false;
    if !continue_token.is_empty() {
        if !rv_param.is_empty() {
            return Err(status::bad_request(
                "specifying resource version is not allowed when using continue",
            ));
        }
        let (rv, key) = decode_continue(continue_token).map_err(|e| status::bad_request(&e))?;
        start = key;
        if rv > 0 {
            if (rv as u64) < state.store.compacted_rv() {
                let fresh = encode_continue(-1, &start);
                return Err(status::expired(EXPIRED_CONTINUE, Some(&fresh)));
            }
            at = Some(rv as u64);
        }
    } else if rv_match == "Exact" {
        let rv = parse_rv(rv_param)?;
        if rv > current {
            return Err(too_large(rv, current));
        }
        at = Some(rv);
    } else if rv_param == "0" {
        paging = false;
        from_cache = true;
    } else if !rv_param.is_empty() {
        let rv = parse_rv(rv_param)?;
        if rv > current {
            return Err(too_large(rv, current));
        }
        if limit > 0 && rv_match.is_empty() {
            at = Some(rv);
        }
    }
    let all_namespaces = def.namespaced && ctx.namespace.is_empty();
    let namespace = if def.namespaced && !all_namespaces {
        Some(ctx.namespace.as_str())
    } else {
        None
    };
    let mut items = state
        .store
        .snapshot(def.plural, namespace, at)
        .map_err(|()| {
            status::expired(
                "The resourceVersion for the provided list is too old.",
                None,
            )
        })?;
    let list_rv = at.unwrap_or(current);
    items.sort_by_key(|i| relative_key(i, all_namespaces));
    if from_cache {
        items.sort_by_key(|i| i.created);
    }
    let matches = |i: &Snapshot| {
        labels.matches(i.object["metadata"]["labels"].as_object()) && fields.matches(&i.object)
    };

    let mut page = Vec::new();
    let mut next: Option<String> = None;
    let mut remaining: Option<i64> = None;
    let single = fields.single_name().filter(|_| !all_namespaces);
    if let Some(name) = single {
        page.extend(items.iter().filter(|i| i.key.name == name && matches(i)));
    } else {
        let candidates: Vec<&Snapshot> = items
            .iter()
            .filter(|i| relative_key(i, all_namespaces) >= start)
            .collect();
        let mut last_key = None;
        let mut has_more = false;
        for item in &candidates {
            if paging && page.len() as i64 >= limit {
                has_more = true;
                break;
            }
            last_key = Some(relative_key(item, all_namespaces));
            if matches(item) {
                page.push(*item);
            }
        }
        if has_more {
            let last = last_key.unwrap_or_default();
            next = Some(encode_continue(list_rv as i64, &format!("{last}\u{0}")));
            if labels.is_empty() && fields.is_empty() {
                remaining = Some(candidates.len() as i64 - limit);
            }
        }
    }

    let mut metadata = Map::new();
    metadata.insert("resourceVersion".into(), json!(list_rv.to_string()));
    if let Some(token) = &next {
        metadata.insert("continue".into(), json!(token));
    } else if def.custom {
        metadata.insert("continue".into(), json!(""));
    }
    if let Some(n) = remaining {
        metadata.insert("remainingItemCount".into(), json!(n));
    }
    if metadata_only(ctx.req) {
        // kube-apiserver's answer to `as=PartialObjectMetadataList`: the metadata of each
        // object and nothing else, every item typed PartialObjectMetadata.
        let items: Vec<Value> = page
            .iter()
            .map(|i| {
                json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                       "metadata": i.object["metadata"].clone()})
            })
            .collect();
        let body = json!({
            "kind": "PartialObjectMetadataList",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": metadata,
            "items": items,
        });
        return Ok(Reply::json(200, &body, def.list_layout(), ctx.req.pretty()));
    }
    let rendered: Vec<Value> = page
        .iter()
        .map(|i| {
            let mut obj = i.object.clone();
            if !def.custom {
                let map = obj.as_object_mut().expect("object");
                map.remove("kind");
                map.remove("apiVersion");
            }
            obj
        })
        .collect();
    let body = json!({
        "kind": def.list_kind,
        "apiVersion": def.api_version(),
        "metadata": metadata,
        "items": rendered,
    });
    Ok(Reply::json(200, &body, def.list_layout(), ctx.req.pretty()))
}

/// Whether the request asks for a `PartialObjectMetadataList` (`Accept:
/// application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`).
fn metadata_only(req: &super::handlers::Request) -> bool {
    req.accept.as_deref().is_some_and(|accept| {
        accept.split(',').any(|media| {
            let params: Vec<&str> = media.split(';').map(str::trim).collect();
            params.contains(&"as=PartialObjectMetadataList")
                && params.contains(&"g=meta.k8s.io")
                && params.contains(&"v=v1")
        })
    })
}
