//! Asking the API server what this user may do (SelfSubjectAccessReview), so a repair stops
//! before its first write rather than halfway.

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use kube::api::{Api, PostParams};

use crate::distro::LOCK_NAMESPACE;
use crate::input::ReadError;
use crate::input::connect::Connection;

/// Whether `verb` on `resource` (in kube-system, optionally one named object) is allowed.
pub(crate) async fn may(
    conn: &Connection,
    group: &str,
    resource: &str,
    verb: &str,
    name: Option<&str>,
) -> Result<bool, ReadError> {
    may_in(conn, LOCK_NAMESPACE, group, resource, verb, name).await
}

/// [`may`] in `namespace`.
pub(crate) async fn may_in(
    conn: &Connection,
    namespace: &str,
    group: &str,
    resource: &str,
    verb: &str,
    name: Option<&str>,
) -> Result<bool, ReadError> {
    let api: Api<SelfSubjectAccessReview> = Api::all(conn.client.clone());
    let review = SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                group: Some(group.to_string()),
                resource: Some(resource.to_string()),
                verb: Some(verb.to_string()),
                namespace: Some(namespace.to_string()),
                name: name.map(str::to_string),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let answer = api
        .create(&PostParams::default(), &review)
        .await
        .map_err(|e| {
            ReadError::from_kube(
                &e,
                &format!("check permission to {verb} {resource}"),
                &conn.server,
            )
        })?;
    Ok(answer.status.is_some_and(|s| s.allowed))
}

/// The role that grants a write: `leases follow --fix` and the snapshot repairs run with the
/// repair role, `serve --heal` with the heal role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WriterRole {
    Repair,
    Heal,
}

impl WriterRole {
    /// What to do about a denied write, in words.
    pub(crate) fn advice(self) -> &'static str {
        match self {
            WriterRole::Repair => {
                "use a kubeconfig bound to the repair role (`k3sdoctor rbac repair` prints it)"
            }
            WriterRole::Heal => {
                "bind the heal role to serve's account (`k3sdoctor rbac heal` prints it)"
            }
        }
    }
}

/// The error for a denied review: names the permission, says nothing was written, and names
/// the role that grants it.
pub(crate) fn denied(verb: &str, shown_resource: &str, name: &str, role: WriterRole) -> ReadError {
    ReadError::new(format!(
        "not allowed to {verb} {shown_resource} \"{name}\" in kube-system (SelfSubjectAccessReview denied); nothing \
         was written; {}",
        role.advice()
    ))
}
