//! Responses, and the `Status` error bodies with the exact shapes kube-apiserver uses
//! (`k8s.io/apimachinery/pkg/api/errors`): see wire samples 007, 017, 021, 023, 031, 041–048,
//! 056–064, 072, 077, 113, 115.

use super::json::{self, Layout};
use super::resources::{ResourceDef, qualify};
use serde_json::{Map, Value, json};

/// A complete HTTP answer.
#[derive(Clone, Debug)]
pub(crate) struct Reply {
    pub status: u16,
    pub content_type: String,
    pub body: Vec<u8>,
    pub headers: Vec<(String, String)>,
    /// Close the connection after answering (413, sample 077).
    pub close: bool,
    /// Leave out the priority-and-fairness headers (the 401 has none, sample 063).
    pub no_flow_headers: bool,
    /// A watch to stream instead of `body`.
    pub watch: Option<Box<super::watch::WatchStart>>,
}

pub(crate) type Result<T> = std::result::Result<T, Reply>;

impl Reply {
    pub(super) fn json(status: u16, value: &Value, layout: Layout, pretty: bool) -> Reply {
        let body = if pretty {
            json::to_pretty(value, layout)
        } else {
            json::to_body(value, layout)
        };
        Reply::raw(status, "application/json", body.into_bytes())
    }

    pub(super) fn raw(status: u16, content_type: &str, body: Vec<u8>) -> Reply {
        Reply {
            status,
            content_type: content_type.to_string(),
            body,
            headers: Vec::new(),
            close: false,
            no_flow_headers: false,
            watch: None,
        }
    }

    fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }
}

/// One entry of `details.causes` (a Go `field.Error`).
#[derive(Clone, Debug)]
pub(crate) struct Cause {
    pub reason: &'static str,
    pub field: String,
    /// `ErrorBody()`: e.g. `Invalid value: "x": must be …`.
    pub body: String,
}

impl Cause {
    pub(super) fn new(
        reason: &'static str,
        field: impl Into<String>,
        body: impl Into<String>,
    ) -> Cause {
        Cause {
            reason,
            field: field.into(),
            body: body.into(),
        }
    }

    /// `field.Invalid(path, value, detail)` with a string value.
    pub(super) fn invalid(field: impl Into<String>, value: &str, detail: &str) -> Cause {
        Cause::new(
            "FieldValueInvalid",
            field,
            format!("Invalid value: {}: {detail}", json::go_quote(value)),
        )
    }

    pub(super) fn required(field: impl Into<String>, detail: &str) -> Cause {
        let body = if detail.is_empty() {
            "Required value".to_string()
        } else {
            format!("Required value: {detail}")
        };
        Cause::new("FieldValueRequired", field, body)
    }

    fn error_string(&self) -> String {
        format!("{}: {}", self.field, self.body)
    }
}

fn details(name: &str, group: &str, kind: &str, uid: Option<&str>, causes: &[Cause]) -> Value {
    let mut d = Map::new();
    for (key, value) in [
        ("name", name),
        ("group", group),
        ("kind", kind),
        ("uid", uid.unwrap_or("")),
    ] {
        if !value.is_empty() {
            d.insert(key.into(), json!(value));
        }
    }
    if !causes.is_empty() {
        let list: Vec<Value> = causes
            .iter()
            .map(|c| {
                let mut m = Map::new();
                m.insert("reason".into(), json!(c.reason));
                m.insert("message".into(), json!(c.body));
                if !c.field.is_empty() {
                    m.insert("field".into(), json!(c.field));
                }
                Value::Object(m)
            })
            .collect();
        d.insert("causes".into(), Value::Array(list));
    }
    Value::Object(d)
}

/// The `Status` object itself (also used for watch ERROR events later).
pub(crate) fn status_value(
    code: u16,
    reason: &str,
    message: &str,
    details: Option<Value>,
) -> Value {
    let mut s = Map::new();
    s.insert("kind".into(), json!("Status"));
    s.insert("apiVersion".into(), json!("v1"));
    s.insert("metadata".into(), json!({}));
    s.insert("status".into(), json!("Failure"));
    if !message.is_empty() {
        s.insert("message".into(), json!(message));
    }
    if !reason.is_empty() {
        s.insert("reason".into(), json!(reason));
    }
    if let Some(d) = details {
        s.insert("details".into(), d);
    }
    s.insert("code".into(), json!(code));
    Value::Object(s)
}

pub(crate) fn failure(code: u16, reason: &str, message: &str, details: Option<Value>) -> Reply {
    Reply::json(
        code,
        &status_value(code, reason, message, details),
        Layout::Builtin("Status"),
        false,
    )
}

/// `<plural>[.<group>] "<name>" not found` (samples 041–045, 047).
pub(crate) fn not_found(plural: &str, group: &str, name: &str) -> Reply {
    let message = format!(
        "{} {} not found",
        qualify(plural, group),
        json::go_quote(name)
    );
    failure(
        404,
        "NotFound",
        &message,
        Some(details(name, group, plural, None, &[])),
    )
}

pub(crate) fn object_not_found(def: &ResourceDef, name: &str) -> Reply {
    not_found(def.plural, def.group, name)
}

/// An unknown resource inside a served group/version (sample 007).
pub(crate) fn resource_not_found() -> Reply {
    failure(
        404,
        "NotFound",
        "the server could not find the requested resource",
        Some(json!({})),
    )
}

/// A group/version that is not served at all, e.g. the CRD is not installed (samples 004–006).
pub(crate) fn text_not_found() -> Reply {
    Reply::raw(
        404,
        "text/plain; charset=utf-8",
        b"404 page not found\n".to_vec(),
    )
    .header("X-Content-Type-Options", "nosniff")
}

pub(crate) fn already_exists(def: &ResourceDef, name: &str) -> Reply {
    let message = format!(
        "{} {} already exists",
        def.qualified_resource(),
        json::go_quote(name)
    );
    failure(
        409,
        "AlreadyExists",
        &message,
        Some(details(name, def.group, def.plural, None, &[])),
    )
}

pub(crate) const OPTIMISTIC_LOCK: &str =
    "the object has been modified; please apply your changes to the latest version and try again";

/// `Operation cannot be fulfilled on …` (samples 017, 019, 052).
pub(crate) fn conflict(def: &ResourceDef, name: &str, why: &str) -> Reply {
    let message = format!(
        "Operation cannot be fulfilled on {} {}: {why}",
        def.qualified_resource(),
        json::go_quote(name)
    );
    failure(
        409,
        "Conflict",
        &message,
        Some(details(name, def.group, def.plural, None, &[])),
    )
}

/// 403 (samples 056–064). `resource_group` is `None` for non-resource requests.
pub(crate) fn forbidden(qualified: Option<(&str, &str)>, name: &str, why: &str) -> Reply {
    let (message, details) = match qualified {
        None => (format!("forbidden: {why}"), json!({})),
        Some((plural, group)) => {
            let qualified = qualify(plural, group);
            let message = if name.is_empty() {
                format!("{qualified} is forbidden: {why}")
            } else {
                format!("{qualified} {} is forbidden: {why}", json::go_quote(name))
            };
            (message, details(name, group, plural, None, &[]))
        }
    };
    failure(403, "Forbidden", &message, Some(details)).header("X-Content-Type-Options", "nosniff")
}

/// 401 for an unknown bearer token (sample 063): no details, no flow-control headers.
pub(crate) fn unauthorized() -> Reply {
    let mut reply = failure(401, "Unauthorized", "Unauthorized", None);
    reply.no_flow_headers = true;
    reply
}

/// 400 without details (samples 032, 033, 113, 121).
pub(crate) fn bad_request(message: &str) -> Reply {
    failure(400, "BadRequest", message, None)
}

/// 422 Invalid (`errors.NewInvalid`): `<Kind>[.<group>] "<name>" is invalid: <aggregate>`.
/// `kind` is what goes into `details.kind` (usually the Kind, but the resource plural for the
/// missing-resourceVersion error, sample 031).
pub(crate) fn invalid(kind: &str, group: &str, name: &str, causes: &[Cause]) -> Reply {
    let mut seen: Vec<String> = Vec::new();
    for cause in causes {
        let text = cause.error_string();
        if !seen.contains(&text) {
            seen.push(text);
        }
    }
    let aggregate = if seen.len() == 1 {
        seen[0].clone()
    } else {
        format!("[{}]", seen.join(", "))
    };
    let message = format!(
        "{} {} is invalid: {aggregate}",
        qualify(kind, group),
        json::go_quote(name)
    );
    failure(
        422,
        "Invalid",
        &message,
        Some(details(name, group, kind, None, causes)),
    )
}

/// 422 with the generic message and empty details (json-patch failures, sample 021).
pub(crate) fn invalid_generic() -> Reply {
    failure(
        422,
        "Invalid",
        "the server rejected our request due to an error in our request",
        Some(json!({})),
    )
}

/// 422 about a request option (`dryRun`, `fieldManager`) on `<Verb>Options.meta.k8s.io` (026, 090).
pub(crate) fn invalid_options(options_kind: &str, cause: Cause) -> Reply {
    invalid(options_kind, "meta.k8s.io", "", &[cause])
}

/// 415 (sample 023).
pub(crate) fn unsupported_media_type(message: &str) -> Reply {
    failure(415, "UnsupportedMediaType", message, Some(json!({})))
}

/// 413 for a request body over 3 MiB (sample 077); the server closes the connection.
pub(crate) fn entity_too_large() -> Reply {
    let mut reply = failure(
        413,
        "RequestEntityTooLarge",
        "Request entity too large: limit is 3145728",
        None,
    );
    reply.close = true;
    reply
}

pub(crate) fn method_not_allowed(message: &str) -> Reply {
    failure(405, "MethodNotAllowed", message, Some(json!({})))
}

/// 410 Gone (samples 115, 132); `continue_token` goes into `Status.metadata.continue`.
pub(crate) fn expired(message: &str, continue_token: Option<&str>) -> Reply {
    let mut value = status_value(410, "Expired", message, None);
    if let Some(token) = continue_token {
        value["metadata"] = json!({"continue": token});
    }
    Reply::json(410, &value, Layout::Builtin("Status"), false)
}

/// DELETE answered with a success `Status` (samples 029, 088, 103).
pub(crate) fn delete_success(def: &ResourceDef, name: &str, uid: &str) -> Reply {
    let mut value = status_value(
        200,
        "",
        "",
        Some(details(name, def.group, def.plural, Some(uid), &[])),
    );
    let map = value.as_object_mut().expect("status object");
    map.insert("status".into(), json!("Success"));
    map.remove("code");
    Reply::json(200, &value, Layout::Builtin("Status"), false)
}

/// A realistic error body for a status code chosen by a fault (`FaultAction::Status`).
/// `resource` is the (plural, group, name) the request addressed, when it addressed one.
pub(crate) fn for_code(code: u16, resource: Option<(&ResourceDef, &str)>) -> Reply {
    let named = resource.filter(|(_, name)| !name.is_empty());
    match (code, named) {
        (400, _) => bad_request("the server rejected our request for an unknown reason"),
        (401, _) => unauthorized(),
        (403, Some((def, name))) => {
            forbidden(Some((def.plural, def.group)), name, "injected fault")
        }
        (403, None) => forbidden(None, "", "injected fault"),
        (404, Some((def, name))) => object_not_found(def, name),
        (404, None) => resource_not_found(),
        (405, _) => {
            method_not_allowed("the server does not allow this method on the requested resource")
        }
        (409, Some((def, name))) => conflict(def, name, OPTIMISTIC_LOCK),
        (409, None) => failure(
            409,
            "Conflict",
            "the server reported a conflict",
            Some(json!({})),
        ),
        (410, _) => expired(
            "The resourceVersion for the provided list is too old.",
            None,
        ),
        (413, _) => entity_too_large(),
        (415, _) => unsupported_media_type("415: Unsupported Media Type"),
        (422, _) => invalid_generic(),
        (429, _) => failure(
            429,
            "TooManyRequests",
            "Too many requests, please try again later.",
            Some(json!({"retryAfterSeconds": 1})),
        )
        .header("Retry-After", "1"),
        (500, _) => failure(
            500,
            "InternalError",
            "Internal error occurred: injected fault",
            Some(json!({"causes": [{"message": "injected fault"}]})),
        ),
        (503, _) => failure(
            503,
            "ServiceUnavailable",
            "the server is currently unable to handle the request",
            None,
        )
        .header("Retry-After", "1"),
        (504, _) => failure(
            504,
            "Timeout",
            "Timeout: request did not complete within requested timeout - context deadline exceeded",
            Some(json!({})),
        ),
        (code, _) => failure(
            code,
            "",
            &format!(
                "the server responded with the status code {code} but did not return more information"
            ),
            Some(json!({})),
        ),
    }
}
