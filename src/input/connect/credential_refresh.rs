//! A plugin credential that expires (`status.expirationTimestamp`) is fetched again before a
//! request that would carry it stale, as client-go and kube do — but by running the plugin
//! through `credential_plugin::run`: off the runtime's thread, bounded, killed on timeout.
//! This matters to `serve`, which runs for days on a token that lives an hour; kube's own
//! refresh (`RefreshableToken::to_header`, kube-client 5 `src/client/auth/mod.rs`) ran the
//! plugin on the blocking pool without a limit.

use std::sync::Arc;
use std::time::Duration;

use std::task::{Context, Poll};

use futures::future::BoxFuture;
use http::header::AUTHORIZATION;
use http::{HeaderValue, Request, Response};
use jiff::{SignedDuration, Timestamp};
use kube::client::Body;
use kube::config::ExecConfig;
use tower::BoxError;

use super::credential_plugin::{self, PluginFailure};

/// kube's margin: a token that expires within a minute is fetched again first.
const REFRESH_BEFORE_EXPIRY: SignedDuration = SignedDuration::from_secs(60);

/// The `Authorization` header of every request, from the plugin's latest token.
#[derive(Clone)]
pub(super) struct RefreshingToken {
    exec: Arc<ExecConfig>,
    limit: Option<Duration>,
    current: Arc<tokio::sync::Mutex<Current>>,
}

struct Current {
    token: String,
    expires: Timestamp,
}

impl RefreshingToken {
    pub(super) fn new(
        exec: ExecConfig,
        limit: Option<Duration>,
        token: String,
        expires: Timestamp,
    ) -> Self {
        RefreshingToken {
            exec: Arc::new(exec),
            limit,
            current: Arc::new(tokio::sync::Mutex::new(Current { token, expires })),
        }
    }

    async fn header(&self) -> Result<HeaderValue, PluginFailure> {
        // One run at a time: concurrent requests wait for the same new token.
        let mut current = self.current.lock().await;
        if Timestamp::now() + REFRESH_BEFORE_EXPIRY >= current.expires {
            let status = credential_plugin::run(&self.exec, self.limit).await?;
            let name = credential_plugin::plugin_name(&self.exec);
            // No expiry any more: the token is kept; a bad one says so as a 401.
            let expires = status.expires().unwrap_or(Timestamp::MAX);
            let token = status.token.filter(|t| !t.is_empty()).ok_or_else(|| {
                PluginFailure::NoCredential {
                    name,
                    why: "printed no status.token when its token was refreshed".into(),
                }
            })?;
            current.token = token;
            current.expires = expires;
        }
        let mut value =
            HeaderValue::try_from(format!("Bearer {}", current.token)).map_err(|_| {
                PluginFailure::NoCredential {
                    name: credential_plugin::plugin_name(&self.exec),
                    why: "printed a token that is not a valid HTTP header value".into(),
                }
            })?;
        value.set_sensitive(true);
        Ok(value)
    }
}

/// The client's service: each request gets the current token, then goes through `client`,
/// a kube client without credentials of its own. Its errors pass through unchanged (kube
/// unwraps a `kube::Error` a service returns), and a failed refresh is the plugin's own error.
#[derive(Clone)]
pub(super) struct WithToken {
    pub client: kube::Client,
    pub token: RefreshingToken,
}

impl tower::Service<Request<Body>> for WithToken {
    type Response = Response<Body>;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Response<Body>, BoxError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        // `client` queues requests itself (kube buffers every client's service).
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut request: Request<Body>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move {
            let header = this.token.header().await?;
            request.headers_mut().insert(AUTHORIZATION, header);
            Ok(this.client.send(request).await?)
        })
    }
}
