//! One client per Rancher, shared by every cluster reached through it: one connection pool
//! (one TLS handshake per connection, not one per cluster and request), and the Rancher
//! context's credential resolved once (its exec plugin run once, its token refreshed once for
//! all). Each cluster's requests keep their own path, `/k8s/clusters/<id>/…`, on that pool.
//!
//! Rancher speaks HTTP/2, and then one connection carries every cluster's requests: one TLS
//! handshake per Rancher, and one more per 250 requests in flight beyond the first 250 (the
//! streams Rancher's Go server allows on a connection) once it is known to speak it. Over HTTP/1.1 (a proxy in front of Rancher that offers no h2) a
//! connection carries one request at a time. Either way at most [`REQUESTS_PER_CLUSTER`] ×
//! `--parallel` requests are sent at once, each holding its place until its answer's body has
//! been read, and as many connections are open at most (`gated_connector`), so a Rancher sees
//! no more TLS handshakes than that while none is closed under a request that was cut off.
//!
//! Each request keeps its own request timeout here: for its answer's head, and between the
//! parts of its body. On a shared HTTP/2 connection the connection's read timeout no longer
//! tells one request's silence, as the other clusters' answers keep the connection busy.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::future::BoxFuture;
use http::{Request, Response, Uri};
use hyper::body::{Body as HttpBody, Bytes, Frame, SizeHint};
use kube::client::Body;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tower::BoxError;

use super::client_builder::{base_client, client_error, connection_for, settle_config, token_on};
use super::credential_refresh::RefreshingToken;
use super::gated_connector::gated_client;
use super::plugin_credential::use_plugin_credential;
use super::rancher_proxy::proxy_url;
use super::shared_serving::SharedServing;
use super::unread_window::connection_window;
use super::{Connection, Prepared};
use crate::input::ReadError;
use crate::input::read_error::causes::ClusterSilent;

/// The requests one cluster's check sends at once (its reads of locks, snapshots, Nodes and
/// the control plane go out together). With one request per HTTP/1.1 connection, a bound of
/// `--parallel` alone let a fleet of 500 at the default `--parallel 16` send 16 requests at
/// a time where it had sent a few per cluster: 2.2× slower than a client per cluster.
pub(crate) const REQUESTS_PER_CLUSTER: usize = 8;

/// The streams one HTTP/2 connection to Rancher carries at once: Go's HTTP/2 server allows
/// 250 (`http2.Server.MaxConcurrentStreams`' default), which Rancher keeps. Past that a client
/// queues its requests, so a fleet with more in flight spreads them over more connections.
const STREAMS_PER_CONNECTION: usize = 250;

/// The client of one Rancher, at its origin (`https://H`), and the bound on the requests
/// it has in flight.
#[derive(Clone)]
pub(crate) struct RancherPool {
    client: kube::Client,
    /// Whether `client`'s connection to Rancher negotiated h2.
    speaks_h2: Arc<AtomicBool>,
    /// More clients, for more connections, once Rancher is known to speak HTTP/2.
    spares: Option<Arc<SpareClients>>,
    /// Which client the next cluster's requests go out on.
    next: Arc<AtomicUsize>,
    in_flight: Arc<Semaphore>,
    /// The plugin's token, when it expires: each cluster's connection keeps it for its peers.
    refresh: Option<RefreshingToken>,
    /// Rancher's serving certificate, which every cluster's connection is served.
    serving: Arc<SharedServing>,
}

/// The requests in flight, and the connections open, for `parallel` clusters checked at once.
fn bound(parallel: usize) -> usize {
    parallel.max(1).saturating_mul(REQUESTS_PER_CLUSTER)
}

impl RancherPool {
    /// Runs the credential plugin of `prepared` (a Rancher context) once and builds the
    /// shared client; at most [`REQUESTS_PER_CLUSTER`] × `parallel` requests go out at once.
    pub(crate) async fn new(
        prepared: &Prepared,
        parallel: usize,
    ) -> Result<RancherPool, ReadError> {
        let origin = origin_of(&prepared.server).ok_or_else(|| {
            ReadError::new(format!(
                "{} is no Rancher URL (https://<rancher>/k8s/clusters/<id>)",
                prepared.server
            ))
        })?;
        let mut config = prepared.config.clone();
        let refresh = use_plugin_credential(&mut config, prepared.plugin_timeout)
            .await
            .map_err(|e| match &prepared.context {
                Some(context) => ReadError::new(format!("context {context}: {}", e.message)),
                None => e,
            })?;
        config.cluster_url = origin;
        settle_config(&mut config, prepared.request_timeout)?;
        let speaks_h2 = Arc::new(AtomicBool::new(false));
        let (client, spares) = match config.proxy_url {
            // kube's own stack, which knows the proxies; it bounds the requests in flight,
            // not the connections.
            Some(_) => (base_client(config, refresh.clone())?, None),
            None => {
                let connections = Arc::new(Semaphore::new(bound(parallel)));
                let clients = bound(parallel).div_ceil(STREAMS_PER_CONNECTION);
                let window = connection_window(clients);
                let client = gated_client(
                    &config,
                    connections.clone(),
                    speaks_h2.clone(),
                    false,
                    window,
                )
                .map_err(|e| client_error(&prepared.server, &e))?;
                let spares = SpareClients {
                    count: clients - 1,
                    window,
                    config,
                    connections,
                    refresh: refresh.clone(),
                    built: OnceLock::new(),
                };
                (token_on(client, refresh.clone()), Some(Arc::new(spares)))
            }
        };
        Ok(RancherPool {
            client,
            speaks_h2,
            spares,
            next: Arc::default(),
            in_flight: Arc::new(Semaphore::new(bound(parallel))),
            refresh,
            serving: Arc::default(),
        })
    }

    /// A connection to the cluster at `prepared`'s server (`https://H/…/k8s/clusters/<id>`,
    /// the same `H` as the pool's) over the
    /// shared pool. Until the cluster first answers, its requests wait at most `first_answer`
    /// from now: Rancher takes 20–40 s to say that a cluster's agent is disconnected.
    pub(crate) fn connect(
        &self,
        prepared: &Prepared,
        first_answer: Option<Duration>,
    ) -> Result<Connection, ReadError> {
        let path = http::Uri::try_from(prepared.server.as_str())
            .map(|uri| uri.path().trim_end_matches('/').to_string())
            .map_err(|_| ReadError::new(format!("{} is not a URL", prepared.server)))?;
        let route = ClusterRoute {
            client: self.next_client(),
            pool: self.clone(),
            path: Arc::from(path),
            request_timeout: prepared.request_timeout,
            first_answer: first_answer.map(|limit| {
                Arc::new(FirstAnswer {
                    limit,
                    deadline: tokio::time::Instant::now() + limit,
                    answered: AtomicBool::new(false),
                })
            }),
        };
        let namespace = route.client.default_namespace().to_string();
        let client = kube::Client::new(route, namespace);
        let mut config = prepared.config.clone();
        settle_config(&mut config, prepared.request_timeout)?;
        let mut conn = connection_for(
            config,
            prepared.context.clone(),
            prepared.request_timeout,
            self.refresh.clone(),
            client,
        );
        conn.notice = prepared.notice.clone();
        conn.user = prepared.user.clone();
        conn.serving_certificate = Some(self.serving.clone());
        Ok(conn)
    }
}

impl RancherPool {
    /// The client for the next cluster: the first one, or over HTTP/2 each in turn.
    fn next_client(&self) -> kube::Client {
        let spares = match &self.spares {
            Some(spares) if spares.count > 0 && self.speaks_h2.load(Ordering::Relaxed) => {
                spares.clients()
            }
            _ => return self.client.clone(),
        };
        let turn = self.next.fetch_add(1, Ordering::Relaxed) % (spares.len() + 1);
        spares.get(turn).unwrap_or(&self.client).clone()
    }
}

/// The clients beyond the first for a fleet with more requests in flight than one HTTP/2
/// connection carries, built once Rancher is known to speak HTTP/2 (`h2_only`, so that each
/// opens one connection however many requests it is sent at once).
struct SpareClients {
    count: usize,
    /// Each connection's receive window, the same as the first client's.
    window: u32,
    config: kube::Config,
    connections: Arc<Semaphore>,
    refresh: Option<RefreshingToken>,
    built: OnceLock<Vec<kube::Client>>,
}

impl SpareClients {
    fn clients(&self) -> &[kube::Client] {
        self.built.get_or_init(|| {
            // The first client was built from the same configuration, so none fails here.
            (0..self.count)
                .filter_map(|_| {
                    let speaks_h2 = Arc::new(AtomicBool::new(true));
                    gated_client(
                        &self.config,
                        self.connections.clone(),
                        speaks_h2,
                        true,
                        self.window,
                    )
                    .ok()
                })
                .map(|client| token_on(client, self.refresh.clone()))
                .collect()
        })
    }
}

/// Until a cluster has answered once, the time its requests may still wait.
struct FirstAnswer {
    limit: Duration,
    deadline: tokio::time::Instant,
    answered: AtomicBool,
}

/// One cluster's requests: its path in front of theirs, sent on the Rancher's pool.
#[derive(Clone)]
struct ClusterRoute {
    /// The pool's client this cluster's requests go out on.
    client: kube::Client,
    pool: RancherPool,
    path: Arc<str>,
    /// For the answer's head, and between the parts of its body (`None`: no limit).
    request_timeout: Option<Duration>,
    first_answer: Option<Arc<FirstAnswer>>,
}

impl tower::Service<Request<Body>> for ClusterRoute {
    type Response = Response<InFlight>;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Response<InFlight>, BoxError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        // The shared client queues requests itself (kube buffers every client's service).
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut request: Request<Body>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move {
            *request.uri_mut() = routed(&this.path, request.uri())?;
            let waiting = async {
                let permit = this.pool.in_flight.clone().acquire_owned().await?;
                let sent = this.client.send(request);
                let response = match this.request_timeout {
                    Some(limit) => tokio::time::timeout(limit, sent).await??,
                    None => sent.await?,
                };
                Ok::<_, BoxError>((permit, response))
            };
            let (permit, response) = match &this.first_answer {
                Some(first) if !first.answered.load(Ordering::Relaxed) => {
                    tokio::time::timeout_at(first.deadline, waiting)
                        .await
                        .map_err(|_| ClusterSilent { limit: first.limit })??
                }
                _ => waiting.await?,
            };
            if let Some(first) = &this.first_answer {
                first.answered.store(true, Ordering::Relaxed);
            }
            Ok(response.map(|body| InFlight {
                body,
                permit: Some(permit),
                silence: this.request_timeout.map(|limit| SilenceLimit {
                    limit,
                    timer: Box::pin(tokio::time::sleep(limit)),
                }),
            }))
        })
    }
}

/// `https://H` of a Rancher proxy URL `https://H[/prefix]/k8s/clusters/<id>`: the shared
/// client's base, under which each cluster's route is its server's whole path.
fn origin_of(server: &str) -> Option<Uri> {
    proxy_url(server)?;
    let uri = Uri::try_from(server).ok()?;
    Uri::builder()
        .scheme(uri.scheme()?.clone())
        .authority(uri.authority()?.clone())
        .path_and_query("/")
        .build()
        .ok()
}

/// `path` in front of the request's own path and query.
fn routed(path: &str, uri: &Uri) -> Result<Uri, BoxError> {
    let rest = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
    Ok(format!("{path}{rest}").parse::<Uri>()?)
}

/// An answer's body that holds its request's place among those in flight until it ends, and
/// fails when no part of it comes within the request timeout.
pub(crate) struct InFlight {
    body: Body,
    permit: Option<OwnedSemaphorePermit>,
    silence: Option<SilenceLimit>,
}

/// The longest wait for the next part of a body, and its timer, restarted by each part.
struct SilenceLimit {
    limit: Duration,
    timer: Pin<Box<tokio::time::Sleep>>,
}

impl SilenceLimit {
    fn restart(&mut self) {
        let next = tokio::time::Instant::now() + self.limit;
        self.timer.as_mut().reset(next);
    }

    /// The limit, once the body has been silent for that long.
    fn ran_out(&mut self, cx: &mut Context<'_>) -> Option<Duration> {
        self.timer
            .as_mut()
            .poll(cx)
            .is_ready()
            .then_some(self.limit)
    }
}

/// What a body that went silent fails with: a timed-out read, as the connection's own read
/// timeout says it over HTTP/1.1.
fn silent_body(limit: Duration) -> BoxError {
    Box::new(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!("no part of the answer within {limit:?} (the request timeout)"),
    ))
}

impl HttpBody for InFlight {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.body).poll_frame(cx);
        let silence = this.silence.as_mut();
        match &polled {
            Poll::Ready(None | Some(Err(_))) => this.permit = None,
            Poll::Ready(Some(Ok(_))) => silence.into_iter().for_each(SilenceLimit::restart),
            Poll::Pending => {
                if let Some(limit) = silence.and_then(|s| s.ran_out(cx)) {
                    this.permit = None;
                    return Poll::Ready(Some(Err(silent_body(limit))));
                }
            }
        }
        polled.map_err(|e| Box::new(e) as BoxError)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests;
