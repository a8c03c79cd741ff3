//! serve's access reviews: who a bearer token belongs to (a TokenReview) and whether that user
//! may `get` a non-resource URL such as `/metrics` (a SubjectAccessReview), asked of the API
//! server as controller-runtime's metrics filter and kube-rbac-proxy ask it.

use std::time::Duration;

use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::Api;
use kube::api::PostParams;

use super::own_access_review::may_in;
use crate::input::ReadError;
use crate::input::connect::Connection;

/// Both reviews together answer within this, or the caller is told to try again.
const REVIEW_TIMEOUT: Duration = Duration::from_secs(5);

/// What the API server said about one token asking for one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    Allowed,
    /// No token, or one the API server does not accept.
    Unauthenticated,
    /// A valid token of `user`, who may not `get` the path.
    Forbidden {
        user: String,
    },
}

/// Asks the API server about the tokens sent to serve's endpoints (needs `create` on
/// tokenreviews and subjectaccessreviews: `k3sdoctor rbac serve`).
pub(crate) struct Reviewer {
    client: kube::Client,
    server: String,
}

impl Reviewer {
    pub(crate) fn new(client: kube::Client, server: &str) -> Reviewer {
        Reviewer {
            client,
            server: server.to_string(),
        }
    }

    /// Whether `token` may `get` `path`; an error says why the API server could not tell.
    pub(crate) async fn review(&self, token: &str, path: &str) -> Result<Verdict, String> {
        tokio::time::timeout(REVIEW_TIMEOUT, self.ask(token, path))
            .await
            .map_err(|_| {
                format!(
                    "the API server did not answer the review within {} s",
                    REVIEW_TIMEOUT.as_secs()
                )
            })?
    }

    async fn ask(&self, token: &str, path: &str) -> Result<Verdict, String> {
        let tokens: Api<TokenReview> = Api::all(self.client.clone());
        let review = TokenReview {
            // No audiences: the API server's own, which a service account token carries.
            spec: TokenReviewSpec {
                token: Some(token.to_string()),
                audiences: None,
            },
            ..TokenReview::default()
        };
        let answer = tokens
            .create(&PostParams::default(), &review)
            .await
            .map_err(|e| self.failed("tokenreviews.authentication.k8s.io", &e))?;
        let status = answer.status.unwrap_or_default();
        let Some(user) = status.user.filter(|_| status.authenticated == Some(true)) else {
            return Ok(Verdict::Unauthenticated);
        };
        let access: Api<SubjectAccessReview> = Api::all(self.client.clone());
        let review = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: user.username.clone(),
                uid: user.uid,
                groups: user.groups,
                extra: user.extra,
                non_resource_attributes: Some(NonResourceAttributes {
                    path: Some(path.to_string()),
                    verb: Some("get".into()),
                }),
                ..SubjectAccessReviewSpec::default()
            },
            ..SubjectAccessReview::default()
        };
        let answer = access
            .create(&PostParams::default(), &review)
            .await
            .map_err(|e| self.failed("subjectaccessreviews.authorization.k8s.io", &e))?;
        if answer.status.is_some_and(|s| s.allowed) {
            Ok(Verdict::Allowed)
        } else {
            Ok(Verdict::Forbidden {
                user: user.username.unwrap_or_default(),
            })
        }
    }
}

impl Reviewer {
    /// Why a review could not be asked, in one plain line: a refusal names the missing
    /// permission and the role that grants it (kube's own error text is a debug dump).
    fn failed(&self, resource: &str, error: &kube::Error) -> String {
        match error {
            kube::Error::Api(status) if status.code == 403 => format!(
                "serve's account may not create {resource} (403 Forbidden); bind it to the \
                 ClusterRole `k3sdoctor rbac serve` prints"
            ),
            _ => ReadError::from_kube(error, &format!("create {resource}"), &self.server).message,
        }
    }
}

/// What serve needs to check tokens, as (API group, resource) pairs to `create`.
const NEEDED: [(&str, &str); 2] = [
    ("authentication.k8s.io", "tokenreviews"),
    ("authorization.k8s.io", "subjectaccessreviews"),
];

/// Asked at start-up (SelfSubjectAccessReviews): the one-line warning when serve's account
/// may not create the reviews, which would otherwise first show as a 503 at every scrape.
/// `None` when it may, or when the API server could not say (the reviews then tell).
pub(crate) async fn review_rights_warning(conn: &Connection) -> Option<String> {
    let mut missing = Vec::new();
    for (group, resource) in NEEDED {
        if !may_in(conn, "", group, resource, "create", None)
            .await
            .ok()?
        {
            missing.push(format!("{resource}.{group}"));
        }
    }
    (!missing.is_empty()).then(|| {
        format!(
            "serve's account may not create {}, so /metrics and /report will answer 503 to every \
             bearer token; bind it to the ClusterRole `k3sdoctor rbac serve` prints, or pass \
             --metrics-auth none",
            missing.join(" or ")
        )
    })
}
