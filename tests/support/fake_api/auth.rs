//! Bearer tokens, the three users of the wire samples, RBAC decisions and SelfSubjectAccessReview
//! (samples 055–069).
//!
//! * `admin-token` → `admin` (member of `system:masters`: everything, no RBAC reason).
//! * `viewer-token` → `viewer` (ClusterRole `read-only`: get/list/watch on everything).
//! * `nobody-token` → `nobody` (authenticated, no bindings).
//! * tokens added by [`super::FakeApi::add_rbac_user`] → that user, authorised by exactly the
//!   rules of its ClusterRoles/Roles (`rbac.rs`).
//! * no `Authorization` header → `system:anonymous` (403, not 401: sample 064).
//! * any other token → 401 (sample 063).

use super::rbac::RbacUser;
use super::resources::RequestInfo;
use super::status::{self, Reply};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::Arc;

/// Which user a kubeconfig authenticates as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    Admin,
    ReadOnly,
    Nobody,
}

impl Role {
    pub(crate) fn token(self) -> &'static str {
        match self {
            Role::Admin => "admin-token",
            Role::ReadOnly => "viewer-token",
            Role::Nobody => "nobody-token",
        }
    }

    pub(crate) fn user_name(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::ReadOnly => "viewer",
            Role::Nobody => "nobody",
        }
    }
}

/// The tokens of the three built-in users.
pub(crate) const BUILTIN_TOKENS: [&str; 3] = ["admin-token", "viewer-token", "nobody-token"];

/// Who sent a request.
#[derive(Clone, Debug)]
pub(crate) enum Identity {
    User(Role),
    /// A user added with `add_rbac_user`.
    Rbac(Arc<RbacUser>),
    Anonymous,
}

impl Identity {
    pub(super) fn name(&self) -> &str {
        match self {
            Identity::User(role) => role.user_name(),
            Identity::Rbac(user) => &user.name,
            Identity::Anonymous => "system:anonymous",
        }
    }
}

/// Authenticate from the `Authorization` header (`rbac_users` by token); `Err` is the 401.
pub(crate) fn authenticate(
    header: Option<&str>,
    rbac_users: &HashMap<String, Arc<RbacUser>>,
) -> Result<Identity, Reply> {
    let Some(header) = header else {
        return Ok(Identity::Anonymous);
    };
    let token = header.strip_prefix("Bearer ").map(str::trim);
    match token {
        Some("admin-token") => Ok(Identity::User(Role::Admin)),
        Some("viewer-token") => Ok(Identity::User(Role::ReadOnly)),
        Some("nobody-token") => Ok(Identity::User(Role::Nobody)),
        Some(token) => match rbac_users.get(token) {
            Some(user) => Ok(Identity::Rbac(user.clone())),
            None => Err(status::unauthorized()),
        },
        None => Err(status::unauthorized()),
    }
}

/// An RBAC decision: allowed, with the reason an SSAR would report (`None` for system:masters).
pub(crate) struct Decision {
    pub allowed: bool,
    pub reason: Option<String>,
}

fn allowed_by(binding: &str, role: &str, subject: &str) -> Decision {
    Decision {
        allowed: true,
        reason: Some(format!(
            "RBAC: allowed by ClusterRoleBinding \"{binding}\" of ClusterRole \"{role}\" to {subject}"
        )),
    }
}

const AUTHENTICATED: &str = "Group \"system:authenticated\"";

fn is_discovery_path(path: &str) -> bool {
    let path = path.trim_end_matches('/');
    ["/api", "/apis", "/openapi"]
        .iter()
        .any(|p| path == *p || path.starts_with(&format!("{p}/")))
}

fn is_public_info_path(path: &str) -> bool {
    matches!(
        path.trim_end_matches('/'),
        "/version" | "/healthz" | "/livez" | "/readyz"
    )
}

/// What RBAC in a k3s cluster with the sample's bindings would decide.
pub(crate) fn authorize(identity: &Identity, info: &RequestInfo) -> Decision {
    let denied = Decision {
        allowed: false,
        reason: None,
    };
    match identity {
        Identity::User(Role::Admin) => {
            return Decision {
                allowed: true,
                reason: None,
            };
        }
        Identity::User(_) | Identity::Rbac(_) => {}
        Identity::Anonymous => {
            return if !info.is_resource_request
                && info.verb == "get"
                && is_public_info_path(&info.path)
            {
                allowed_by(
                    "system:public-info-viewer",
                    "system:public-info-viewer",
                    "Group \"system:unauthenticated\"",
                )
            } else {
                denied
            };
        }
    }
    if !info.is_resource_request {
        if info.verb != "get" {
            return denied;
        }
        if is_public_info_path(&info.path) {
            return allowed_by(
                "system:public-info-viewer",
                "system:public-info-viewer",
                AUTHENTICATED,
            );
        }
        if is_discovery_path(&info.path) {
            return allowed_by("system:discovery", "system:discovery", AUTHENTICATED);
        }
    } else if info.api_group == "authorization.k8s.io"
        && matches!(
            info.resource.as_str(),
            "selfsubjectaccessreviews" | "selfsubjectrulesreviews"
        )
        && info.verb == "create"
    {
        return allowed_by("system:basic-user", "system:basic-user", AUTHENTICATED);
    }
    // The read-only role: reads of every resource, and its one nonResourceURLs rule
    // (deploy/base/serve-clusterrole.yaml).
    let read_only_allows = if info.is_resource_request {
        matches!(info.verb.as_str(), "get" | "list" | "watch")
    } else {
        info.path == "/metrics"
    };
    match identity {
        Identity::User(Role::ReadOnly) if read_only_allows => {
            allowed_by("viewer-read-only", "read-only", "User \"viewer\"")
        }
        Identity::Rbac(user) => match user.allows(info) {
            Some(source) => Decision {
                allowed: true,
                reason: Some(format!("RBAC: allowed by {source}")),
            },
            None => denied,
        },
        _ => denied,
    }
}

/// The 403 for a denied request, worded like `responsewriters.Forbidden`.
pub(crate) fn forbidden(identity: &Identity, info: &RequestInfo) -> Reply {
    let user = identity.name();
    if !info.is_resource_request {
        let why = format!(
            "User \"{user}\" cannot {} path \"{}\"",
            info.verb, info.path
        );
        return status::forbidden(None, "", &why);
    }
    let mut resource = info.resource.clone();
    if !info.subresource.is_empty() {
        resource = format!("{resource}/{}", info.subresource);
    }
    let scope = if info.namespace.is_empty() {
        "at the cluster scope".to_string()
    } else {
        format!("in the namespace \"{}\"", info.namespace)
    };
    let why = format!(
        "User \"{user}\" cannot {} resource \"{resource}\" in API group \"{}\" {scope}",
        info.verb, info.api_group
    );
    status::forbidden(Some((&info.resource, &info.api_group)), &info.name, &why)
}

/// Answer a SelfSubjectAccessReview POST body (always 201, samples 065–069).
pub(crate) fn self_subject_access_review(
    identity: &Identity,
    body: &Value,
    manager: &str,
) -> Result<Value, Reply> {
    let spec = body.get("spec").cloned().unwrap_or_else(|| json!({}));
    let mut echoed = Map::new();
    let info = if let Some(attrs) = spec.get("resourceAttributes").and_then(Value::as_object) {
        let field = |k: &str| {
            attrs
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let trimmed: Map<String, Value> = attrs
            .iter()
            .filter(|(_, v)| v.as_str() != Some(""))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        echoed.insert("resourceAttributes".into(), Value::Object(trimmed));
        RequestInfo {
            is_resource_request: true,
            verb: field("verb"),
            api_group: field("group"),
            api_version: field("version"),
            namespace: field("namespace"),
            resource: field("resource"),
            subresource: field("subresource"),
            name: field("name"),
            ..Default::default()
        }
    } else if let Some(attrs) = spec.get("nonResourceAttributes").and_then(Value::as_object) {
        echoed.insert("nonResourceAttributes".into(), Value::Object(attrs.clone()));
        RequestInfo {
            path: attrs
                .get("path")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            verb: attrs
                .get("verb")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            ..Default::default()
        }
    } else {
        let cause = status::Cause::invalid(
            "spec.resourceAttributes",
            "null",
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        );
        return Err(status::invalid(
            "SelfSubjectAccessReview",
            "authorization.k8s.io",
            "",
            &[cause],
        ));
    };
    let decision = authorize(identity, &info);
    let mut status = Map::new();
    status.insert("allowed".into(), json!(decision.allowed));
    if let Some(reason) = decision.reason {
        status.insert("reason".into(), json!(reason));
    }
    let spec = Value::Object(echoed);
    let fields = super::managed_fields::field_set_json(&json!({ "spec": spec }), false);
    Ok(json!({
        "kind": "SelfSubjectAccessReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {
            "creationTimestamp": null,
            "managedFields": [{
                "manager": manager,
                "operation": "Update",
                "apiVersion": "authorization.k8s.io/v1",
                "time": super::microtime::now_seconds(),
                "fieldsType": "FieldsV1",
                "fieldsV1": fields
            }]
        },
        "spec": spec,
        "status": status
    }))
}
