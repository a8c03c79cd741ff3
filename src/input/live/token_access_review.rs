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

/// Both reviews together answer within this, or the caller is told to try again.
const REVIEW_TIMEOUT: Duration = Duration::from_secs(5);

/// What the API server said about one token asking for one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
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
pub struct Reviewer {
    client: kube::Client,
}

impl Reviewer {
    pub fn new(client: kube::Client) -> Reviewer {
        Reviewer { client }
    }

    /// Whether `token` may `get` `path`; an error says why the API server could not tell.
    pub async fn review(&self, token: &str, path: &str) -> Result<Verdict, String> {
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
            .map_err(|e| format!("TokenReview failed: {}", one_line(&e.to_string())))?;
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
            .map_err(|e| format!("SubjectAccessReview failed: {}", one_line(&e.to_string())))?;
        if answer.status.is_some_and(|s| s.allowed) {
            Ok(Verdict::Allowed)
        } else {
            Ok(Verdict::Forbidden {
                user: user.username.unwrap_or_default(),
            })
        }
    }
}

/// An error's text on one line (a log line or a one-line HTTP body).
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
