//! Request dispatch: authentication, authorization, routing of paths to resources, GET of one
//! object and the request options shared by the verbs. LIST is in `list.rs`, PATCH in `patch.rs`,
//! create/update/delete in `writes.rs`.

use super::auth::{self, Identity, Role};
use super::json::{Layout, go_string_slice};
use super::rbac::RbacUser;
use super::resources::{self, RequestInfo, ResourceDef};
use super::state::State;
use super::status::{self, Cause, Reply, Result};
use super::store::Key;
use super::{managed_fields, writes};
use serde_json::Value;

/// The request body limit of kube-apiserver (3 MiB, sample 077).
pub(crate) const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

/// Decoded query parameters, in order.
#[derive(Clone, Debug, Default)]
pub(crate) struct Query(pub Vec<(String, String)>);

impl Query {
    pub(super) fn parse(raw: &str) -> Query {
        let decode = |s: &str| resources::percent_decode(&s.replace('+', " "));
        Query(
            raw.split('&')
                .filter(|p| !p.is_empty())
                .map(|p| match p.split_once('=') {
                    Some((k, v)) => (decode(k), decode(v)),
                    None => (decode(p), String::new()),
                })
                .collect(),
        )
    }

    pub(super) fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub(super) fn get_all(&self, name: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .collect()
    }
}

/// What the handlers see of an HTTP request.
pub(crate) struct Request {
    pub method: String,
    pub path: String,
    pub query: Query,
    pub user_agent: Option<String>,
    pub authorization: Option<String>,
    pub content_type: Option<String>,
    /// The `Accept` header: `as=PartialObjectMetadataList` asks a list for metadata only.
    pub accept: Option<String>,
    pub body: Vec<u8>,
    pub body_too_large: bool,
}

impl Request {
    /// `?pretty=true`, or a curl/Wget user agent (the apiserver indents for those).
    pub(super) fn pretty(&self) -> bool {
        self.query.get("pretty") == Some("true")
            || self
                .user_agent
                .as_deref()
                .is_some_and(|ua| ua.starts_with("curl") || ua.starts_with("Wget"))
    }

    pub(super) fn manager(&self) -> String {
        managed_fields::manager_name(self.query.get("fieldManager"), self.user_agent.as_deref())
    }
}

/// One request against one resource type.
pub(crate) struct Ctx<'a> {
    pub req: &'a Request,
    pub def: &'static ResourceDef,
    pub namespace: String,
    pub name: String,
}

impl Ctx<'_> {
    pub(super) fn key(&self, name: &str) -> Key {
        Key {
            resource: self.def.plural,
            namespace: self.namespace.clone(),
            name: name.to_string(),
        }
    }

    pub(super) fn reply(&self, code: u16, obj: &Value) -> Reply {
        Reply::json(code, obj, self.def.layout(), self.req.pretty())
    }
}

/// Everything after fault injection: authentication, authorization, routing.
pub(crate) fn handle(state: &mut State, req: &Request) -> Reply {
    let identity = match auth::authenticate(req.authorization.as_deref(), &state.rbac_users) {
        Ok(identity) => identity,
        Err(reply) => return reply,
    };
    let info = resources::request_info(&req.method, &req.path, &req.query);
    if !auth::authorize(&identity, &info).allowed {
        return auth::forbidden(&identity, &info);
    }
    if !info.is_resource_request {
        return non_resource(state, req, &info);
    }
    match resource(state, req, &info, &identity) {
        Ok(reply) | Err(reply) => reply,
    }
}

fn non_resource(state: &State, req: &Request, info: &RequestInfo) -> Reply {
    let parts: Vec<&str> = info
        .path
        .trim_matches('/')
        .split('/')
        .filter(|p| !p.is_empty())
        .collect();
    let doc = |kind: &'static str| {
        move |v: Value| Reply::json(200, &v, Layout::Builtin(kind), req.pretty())
    };
    if req.method != "GET" && req.method != "HEAD" {
        return status::text_not_found();
    }
    let crd = state.crd_installed;
    match parts.as_slice() {
        ["version"] => Reply::raw(
            200,
            "application/json",
            resources::version_body(&state.git_version).into_bytes(),
        ),
        ["metrics"] => Reply::raw(
            200,
            "text/plain; version=0.0.4; charset=utf-8",
            state.metrics.to_vec(),
        ),
        ["healthz" | "livez" | "readyz"] => {
            Reply::raw(200, "text/plain; charset=utf-8", b"ok".to_vec())
        }
        ["api"] => doc("APIVersions")(resources::api_versions(&state.address)),
        ["apis"] => doc("APIGroupList")(resources::api_group_list(crd)),
        ["apis", group] => {
            resources::api_group(group, crd).map_or_else(status::text_not_found, doc("APIGroup"))
        }
        ["api", version] => resources::discovery_resource_list("", version, true)
            .map_or_else(status::text_not_found, doc("APIResourceList")),
        ["apis", group, version] => resources::discovery_resource_list(group, version, crd)
            .map_or_else(status::text_not_found, doc("APIResourceList")),
        _ => status::text_not_found(),
    }
}

fn group_served(state: &State, info: &RequestInfo) -> bool {
    match info.api_prefix.as_str() {
        "api" => info.api_version == "v1",
        _ if state.rancher_management
            && matches!(
                (info.api_group.as_str(), info.api_version.as_str()),
                ("management.cattle.io", "v3") | ("provisioning.cattle.io", "v1")
            ) =>
        {
            true
        }
        _ => {
            // batch, helm.cattle.io and upgrade.cattle.io serve LIST and GET only for
            // packaged-charts and upgrade-plans; discovery does not list them.
            let packaged = match info.api_group.as_str() {
                // Likewise the webhook configurations, for admission-webhooks.
                "batch" | "admissionregistration.k8s.io" => true,
                "helm.cattle.io" => state.helm_crd_installed,
                "upgrade.cattle.io" => state.suc_crd_installed,
                _ => false,
            };
            info.api_version == "v1"
                && (packaged
                    || resources::served_groups(state.crd_installed)
                        .contains(&info.api_group.as_str()))
        }
    }
}

fn resource(
    state: &mut State,
    req: &Request,
    info: &RequestInfo,
    identity: &Identity,
) -> Result<Reply> {
    if info.api_group == "authentication.k8s.io" && info.resource == "tokenreviews" {
        return token_review(state, req, info);
    }
    if !group_served(state, info) {
        return Err(status::text_not_found());
    }
    if info.api_group == "authorization.k8s.io" && info.resource == "subjectaccessreviews" {
        return subject_access_review(state, req, info);
    }
    if info.api_group == "authorization.k8s.io" {
        if info.resource != "selfsubjectaccessreviews"
            || info.namespaced_path
            || !info.name.is_empty()
        {
            return Err(status::resource_not_found());
        }
        if req.method != "POST" {
            return Err(status::method_not_allowed(
                "the server does not allow this method on the requested resource",
            ));
        }
        let body: Value =
            serde_json::from_slice(&req.body).map_err(|e| status::bad_request(&e.to_string()))?;
        let review = auth::self_subject_access_review(identity, &body, &req.manager())?;
        return Ok(Reply::json(
            201,
            &review,
            Layout::Builtin("SelfSubjectAccessReview"),
            req.pretty(),
        ));
    }
    let def = resources::by_plural(&info.api_group, &info.api_version, &info.resource)
        .ok_or_else(status::resource_not_found)?;
    let path_name = info.path_name.clone();
    // `/api/v1/namespaces/NAME` is the Namespace itself: RequestInfoFactory takes NAME as the
    // namespace and the name alike.
    let namespace_itself = def.kind == "Namespace"
        && info.namespaced_path
        && !path_name.is_empty()
        && info.namespace == path_name;
    let wrong_scope = !namespace_itself
        && def.namespaced != info.namespaced_path
        && !(def.namespaced && path_name.is_empty());
    if wrong_scope || info.extra_parts {
        return Err(status::resource_not_found());
    }
    if !info.subresource.is_empty() {
        // No subresources are served; a custom resource answers like a missing object (sample 096).
        return Err(if def.custom {
            status::object_not_found(def, &path_name)
        } else {
            status::resource_not_found()
        });
    }
    let ctx = Ctx {
        req,
        def,
        namespace: if namespace_itself {
            String::new()
        } else {
            info.namespace.clone()
        },
        name: path_name,
    };
    let not_allowed = || {
        status::method_not_allowed(
            "the server does not allow this method on the requested resource",
        )
    };
    match (req.method.as_str(), ctx.name.is_empty()) {
        ("GET" | "HEAD", false) => get(state, &ctx),
        ("GET" | "HEAD", true) => super::list::list(state, &ctx),
        ("POST", true) if def.namespaced == info.namespaced_path => writes::create(state, &ctx),
        ("PUT", false) => writes::update(state, &ctx),
        ("PATCH", false) => super::patch::patch(state, &ctx),
        ("DELETE", false) => writes::delete(state, &ctx),
        _ => Err(not_allowed()),
    }
}

fn get(state: &State, ctx: &Ctx) -> Result<Reply> {
    let obj = state
        .store
        .get(&ctx.key(&ctx.name))
        .ok_or_else(|| status::object_not_found(ctx.def, &ctx.name))?;
    Ok(ctx.reply(200, obj))
}

/// Validate `?dryRun=`: only `All` is accepted (sample 090). `options` is e.g. `CreateOptions`.
pub(crate) fn dry_run(values: &[String], options: &str) -> Result<bool> {
    if values.is_empty() {
        return Ok(false);
    }
    if values.iter().all(|v| v == "All") {
        return Ok(true);
    }
    let body = format!(
        "Unsupported value: {}: supported values: \"All\"",
        go_string_slice(values)
    );
    Err(status::invalid_options(
        options,
        Cause::new("FieldValueNotSupported", "dryRun", body),
    ))
}

pub(crate) fn check_body_size(req: &Request) -> Result<()> {
    if req.body_too_large || req.body.len() > MAX_BODY_BYTES {
        Err(status::entity_too_large())
    } else {
        Ok(())
    }
}

/// A SubjectAccessReview (POST, cluster-scoped): what RBAC decides for `spec.user` (one of
/// the built-in users or one added with `add_rbac_user`; anyone else has no roles), answered
/// like a SelfSubjectAccessReview for that user (always 201).
fn subject_access_review(state: &State, req: &Request, info: &RequestInfo) -> Result<Reply> {
    if info.namespaced_path || !info.name.is_empty() {
        return Err(status::resource_not_found());
    }
    if req.method != "POST" {
        return Err(status::method_not_allowed(
            "the server does not allow this method on the requested resource",
        ));
    }
    let body: Value =
        serde_json::from_slice(&req.body).map_err(|e| status::bad_request(&e.to_string()))?;
    let user = body["spec"]["user"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let identity = [Role::Admin, Role::ReadOnly, Role::Nobody]
        .into_iter()
        .find(|role| role.user_name() == user)
        .map(Identity::User)
        .or_else(|| {
            let known = state.rbac_users.values().find(|u| u.name == user).cloned();
            known.map(Identity::Rbac)
        })
        .unwrap_or_else(|| {
            Identity::Rbac(std::sync::Arc::new(RbacUser {
                name: user.clone(),
                roles: Vec::new(),
            }))
        });
    let mut review = auth::self_subject_access_review(&identity, &body, &req.manager())?;
    review["kind"] = Value::from("SubjectAccessReview");
    review["spec"]["user"] = Value::from(user);
    Ok(Reply::json(201, &review, Layout::Sorted, req.pretty()))
}

/// A TokenReview (POST, cluster-scoped): whether the token is one this server accepts, and
/// whose, as the API server's authenticator answers it (always 201).
fn token_review(state: &State, req: &Request, info: &RequestInfo) -> Result<Reply> {
    if info.namespaced_path || !info.name.is_empty() {
        return Err(status::resource_not_found());
    }
    if req.method != "POST" {
        return Err(status::method_not_allowed(
            "the server does not allow this method on the requested resource",
        ));
    }
    let body: Value =
        serde_json::from_slice(&req.body).map_err(|e| status::bad_request(&e.to_string()))?;
    let token = body["spec"]["token"].as_str().unwrap_or_default();
    let header = format!("Bearer {token}");
    let status = match auth::authenticate(Some(&header), &state.rbac_users) {
        Ok(identity) if !token.is_empty() => serde_json::json!({
            "authenticated": true,
            "user": {"username": identity.name(), "groups": ["system:authenticated"]}
        }),
        _ => serde_json::json!({"user": {}, "error": "invalid bearer token"}),
    };
    let review = serde_json::json!({
        "kind": "TokenReview",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"creationTimestamp": null},
        "spec": {"token": token},
        "status": status
    });
    Ok(Reply::json(201, &review, Layout::Sorted, req.pretty()))
}
