//! Users authorised by RBAC `ClusterRole`/`Role` objects given as YAML
//! ([`super::FakeApi::add_rbac_user`]).
//!
//! Each role is treated as bound to the user alone: a ClusterRole by a ClusterRoleBinding named
//! `<user>-<role>`, a Role by a RoleBinding of the same name in the Role's namespace. Matching
//! follows `k8s.io/kubernetes/pkg/apis/rbac/v1/evaluation_helpers.go` (`RuleAllows`):
//! verb, API group, resource (`resource/subresource`, `*`, `*/subresource`) and resource name
//! (the request's name: the path's, or for list/watch an exact `metadata.name` field selector's,
//! as `RequestInfoFactory` sets it).

use super::json::go_quote;
use super::resources::RequestInfo;
use serde::Deserialize;
use serde_json::Value;

/// One `rules[]` entry of a (Cluster)Role.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct PolicyRule {
    pub verbs: Vec<String>,
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub resource_names: Vec<String>,
    #[serde(rename = "nonResourceURLs")]
    pub non_resource_urls: Vec<String>,
}

impl PolicyRule {
    /// `RuleAllows`: a resource request by the resource rules, a non-resource one by
    /// `nonResourceURLs` (exact, or a `*`-suffixed prefix).
    fn allows(&self, info: &RequestInfo) -> bool {
        let any_or = |list: &[String], wanted: &str| list.iter().any(|v| v == "*" || v == wanted);
        if !info.is_resource_request {
            return any_or(&self.verbs, &info.verb)
                && self.non_resource_urls.iter().any(|url| {
                    *url == info.path
                        || url
                            .strip_suffix('*')
                            .is_some_and(|prefix| info.path.starts_with(prefix))
                });
        }
        if !self.non_resource_urls.is_empty() {
            return false;
        }
        let combined = if info.subresource.is_empty() {
            info.resource.clone()
        } else {
            format!("{}/{}", info.resource, info.subresource)
        };
        let resource_matches = self.resources.iter().any(|r| {
            r == "*"
                || *r == combined
                || (!info.subresource.is_empty()
                    && r.strip_prefix("*/") == Some(info.subresource.as_str()))
        });
        // An empty name never matches a non-empty resourceNames list: list/watch (without a
        // metadata.name field selector), create and deletecollection are not restricted by name.
        let name_matches = self.resource_names.is_empty()
            || (!info.name.is_empty() && self.resource_names.contains(&info.name));
        any_or(&self.verbs, &info.verb)
            && any_or(&self.api_groups, &info.api_group)
            && resource_matches
            && name_matches
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
struct Metadata {
    name: String,
    namespace: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
struct RoleObject {
    metadata: Metadata,
    /// `null` in YAML (`rules:` with nothing after it) is an empty list.
    rules: Option<Vec<PolicyRule>>,
}

/// A role as bound to the user: `namespace` is `None` for a ClusterRole.
#[derive(Clone, Debug)]
pub(crate) struct BoundRole {
    pub name: String,
    pub namespace: Option<String>,
    pub rules: Vec<PolicyRule>,
}

/// A user known by token, with the roles bound to it.
#[derive(Clone, Debug)]
pub(crate) struct RbacUser {
    pub name: String,
    pub roles: Vec<BoundRole>,
}

impl RbacUser {
    /// Parse the YAML documents of `rbac_yaml` (panics on malformed input, like a rejected
    /// `kubectl apply` would fail loudly).
    pub(super) fn parse(user: &str, rbac_yaml: &str) -> RbacUser {
        let mut roles = Vec::new();
        for document in serde_yaml_ng::Deserializer::from_str(rbac_yaml) {
            let value = Value::deserialize(document)
                .unwrap_or_else(|e| panic!("add_rbac_user: invalid YAML: {e}"));
            collect_roles(value, &mut roles);
        }
        RbacUser {
            name: user.to_string(),
            roles,
        }
    }

    /// The first rule that allows `info`, described like the RBAC authorizer's reason
    /// (`ClusterRoleBinding "u-r" of ClusterRole "r" to User "u"`). ClusterRoles are visited
    /// first, then the Roles of the request's namespace, in document order.
    pub(super) fn allows(&self, info: &RequestInfo) -> Option<String> {
        let cluster = self.roles.iter().filter(|r| r.namespace.is_none());
        let local = self.roles.iter().filter(|r| {
            !info.namespace.is_empty() && r.namespace.as_deref() == Some(&info.namespace)
        });
        let role = cluster
            .chain(local)
            .find(|role| role.rules.iter().any(|rule| rule.allows(info)))?;
        let binding = format!("{}-{}", self.name, role.name);
        let subject = format!("User {}", go_quote(&self.name));
        Some(match &role.namespace {
            None => format!(
                "ClusterRoleBinding {} of ClusterRole {} to {subject}",
                go_quote(&binding),
                go_quote(&role.name)
            ),
            Some(ns) => format!(
                "RoleBinding {} of Role {} to {subject}",
                go_quote(&format!("{binding}/{ns}")),
                go_quote(&role.name)
            ),
        })
    }
}

fn collect_roles(value: Value, roles: &mut Vec<BoundRole>) {
    if value.is_null() {
        return; // an empty document (`---` at the start or end)
    }
    let kind = value["kind"].as_str().unwrap_or_default().to_string();
    let api_version = value["apiVersion"].as_str().unwrap_or_default().to_string();
    if kind == "List" && api_version == "v1" {
        if let Value::Array(items) = value["items"].clone() {
            for item in items {
                collect_roles(item, roles);
            }
        }
        return;
    }
    let namespaced = match kind.as_str() {
        "ClusterRole" => false,
        "Role" => true,
        _ => return, // RoleBinding, ClusterRoleBinding, ServiceAccount, ...
    };
    assert_eq!(
        api_version, "rbac.authorization.k8s.io/v1",
        "add_rbac_user: {kind} must have apiVersion rbac.authorization.k8s.io/v1"
    );
    let object: RoleObject = serde_json::from_value(value)
        .unwrap_or_else(|e| panic!("add_rbac_user: malformed {kind}: {e}"));
    let name = object.metadata.name;
    assert!(
        !name.is_empty(),
        "add_rbac_user: {kind} without metadata.name"
    );
    let rules = object.rules.unwrap_or_default();
    for (i, rule) in rules.iter().enumerate() {
        if let Err(why) = validate(rule, namespaced) {
            panic!("add_rbac_user: {kind} {name:?} is invalid: rules[{i}]: {why}");
        }
    }
    let namespace = namespaced.then(|| {
        object
            .metadata
            .namespace
            .filter(|ns| !ns.is_empty())
            .unwrap_or_else(|| "default".to_string())
    });
    roles.push(BoundRole {
        name,
        namespace,
        rules,
    });
}

/// `ValidatePolicyRule` of `pkg/apis/rbac/validation`.
fn validate(rule: &PolicyRule, namespaced: bool) -> Result<(), &'static str> {
    if rule.verbs.is_empty() {
        return Err("verbs: Required value: verbs must contain at least one value");
    }
    if !rule.non_resource_urls.is_empty() {
        if namespaced {
            return Err("nonResourceURLs: namespaced rules cannot apply to non-resource URLs");
        }
        if !rule.api_groups.is_empty()
            || !rule.resources.is_empty()
            || !rule.resource_names.is_empty()
        {
            return Err(
                "nonResourceURLs: rules cannot apply to both regular resources and non-resource URLs",
            );
        }
        return Ok(());
    }
    if rule.api_groups.is_empty() {
        return Err("apiGroups: Required value: resource rules must supply at least one api group");
    }
    if rule.resources.is_empty() {
        return Err("resources: Required value: resource rules must supply at least one resource");
    }
    Ok(())
}
