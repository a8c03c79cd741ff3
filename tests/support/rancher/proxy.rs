//! A stand-in for Rancher's Kubernetes proxy: HTTPS on 127.0.0.1 (a fresh rcgen certificate),
//! HTTP/2 to a client that offers h2 by ALPN and HTTP/1.1 otherwise, as Rancher's
//! dynamiclistener (`server/server.go` sets NextProtos to h2 and http/1.1), or HTTP/1.1 only
//! ([`RancherProxy::start_http1_only`]), as a load balancer in front of Rancher may;
//! routing `/k8s/clusters/<id>/<rest>` to the test apiserver registered for `<id>` with the
//! caller's Rancher token swapped for that apiserver's token of the same user, bodies streamed
//! both ways (WATCH and big LISTs). Per cluster id a fault switch, flipped at runtime, cuts
//! responses mid-body ([`Fault`]); every request is recorded ([`RequestRecord`]).
//!
//! What Rancher answers itself, read in rancher/rancher (main, 2026-08-21) and rancher/norman:
//! - no or an unknown token: `pkg/auth/requests/filter.go` → `util.ReturnHTTPError(rw, req, 401,
//!   ErrMustAuthenticate.Error())`: `application/json`,
//!   `{"type":"error","status":"401","message":"Unauthorized 401: must authenticate"}`;
//! - an unknown cluster id: `pkg/k8slookup/lookup.go` checks access with norman's `access.ByID`,
//!   whose store turns the apiserver's NotFound into `httperror.NewAPIErrorLong(404, "NotFound",
//!   msg)` (norman `store/proxy/error_wrapper.go`); `pkg/clusterrouter/router.go` `response()`
//!   writes the norman `APIError` struct with `json.NewEncoder` *after* `WriteHeader`, so the
//!   Content-Type it sets is lost and Go sniffs `text/plain; charset=utf-8`;
//! - a cluster whose agent is not connected: see [`Disconnected`].

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::json;
use tokio::sync::{oneshot, watch};
use tokio_rustls::{TlsAcceptor, TlsConnector};

use super::proxy_body::{self, Fault};
use super::proxy_tls::{self, upstream};
pub(crate) use super::request_log::RequestRecord;
use super::request_log::{is_watch, split_cluster};

pub(crate) type Body = BoxBody<Bytes, std::io::Error>;

/// How a disconnected cluster answers. rancher/rancher `pkg/clusterrouter/proxy/proxy_server.go`:
/// a dial error reaches `errorResponder.Error`, which writes status 500 and the error's text
/// (no Content-Type, so Go sniffs `text/plain; charset=utf-8`). Which text depends on the
/// transport Rancher holds for the cluster:
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Disconnected {
    /// A fresh transport: `pkg/dialer/factory.go` `ClusterDialer` finds no tunnel session,
    /// waits four jittered 5 s rounds (20–40 s: [`RancherProxy::register_disconnected_after`])
    /// and returns `ErrAgentDisconnected`, "cluster agent disconnected".
    AgentDisconnected,
    /// A transport cached while the agent was connected dials through rancher/remotedialer,
    /// whose `getDialer` fails with "failed to find Session for client <id>".
    NoSession,
}

/// A backend apiserver: its URL (`https://127.0.0.1:PORT`), the CA it is served with, and its
/// bearer token for each user name.
#[derive(Clone, Debug)]
pub(crate) struct Backend {
    pub server: String,
    pub ca_pem: String,
    pub tokens: HashMap<String, String>,
}

impl Backend {
    /// A fake API server (TLS) as the backend, `user` mapped to its admin.
    pub(crate) fn fake_admin(fake: &crate::support::fake_api::FakeApi, user: &str) -> Backend {
        let admin = crate::support::fake_api::Role::Admin.token();
        Backend {
            server: fake.url(),
            ca_pem: fake.ca_pem().unwrap_or_default().to_string(),
            tokens: HashMap::from([(user.to_string(), admin.to_string())]),
        }
    }
}

pub(super) struct Upstream {
    pub address: SocketAddr,
    pub authority: String,
    pub connector: TlsConnector,
    pub tokens: HashMap<String, String>,
    /// Connections to the backend that finished their last answer, reused as Rancher reuses
    /// its tunnel to a cluster's agent rather than dialling it per request.
    pub idle: Mutex<Vec<hyper::client::conn::http1::SendRequest<Incoming>>>,
}

enum Target {
    Backend(Arc<Upstream>),
    /// How, and after how long (Rancher's four jittered 5 s rounds take 20–40 s).
    Disconnected(Disconnected, std::time::Duration),
}

#[derive(Default)]
pub(super) struct Shared {
    targets: Mutex<HashMap<String, Target>>,
    faults: Mutex<HashMap<String, watch::Sender<Fault>>>,
    /// Rancher token → user name.
    users: Mutex<HashMap<String, String>>,
    log: Mutex<Vec<RequestRecord>>,
    /// TLS handshakes completed with clients (each a new client connection).
    handshakes: AtomicUsize,
}

impl Shared {
    fn fault(&self, cluster: &str) -> watch::Receiver<Fault> {
        let mut faults = self.faults.lock().expect("faults lock");
        faults
            .entry(cluster.to_string())
            .or_insert_with(|| watch::channel(Fault::Pass).0)
            .subscribe()
    }

    fn record(&self, record: RequestRecord) -> usize {
        let mut log = self.log.lock().expect("log lock");
        log.push(record);
        log.len() - 1
    }

    fn set_status(&self, index: usize, status: u16) {
        if let Some(r) = self.log.lock().expect("log lock").get_mut(index) {
            r.status = status;
        }
    }
}

/// The running proxy; stopped (every connection dropped) when dropped.
pub(crate) struct RancherProxy {
    address: SocketAddr,
    ca_pem: String,
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl RancherProxy {
    /// A proxy that speaks HTTP/2 to clients that offer it, as Rancher does.
    pub(crate) fn start() -> RancherProxy {
        RancherProxy::offering(&[b"h2", b"http/1.1"])
    }

    /// A proxy that speaks HTTP/1.1 only, as a load balancer in front of Rancher may.
    pub(crate) fn start_http1_only() -> RancherProxy {
        RancherProxy::offering(&[b"http/1.1"])
    }

    fn offering(protocols: &[&[u8]]) -> RancherProxy {
        let (acceptor, ca_pem) = proxy_tls::self_signed(protocols);
        let listener =
            std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port for the proxy");
        listener.set_nonblocking(true).expect("non-blocking");
        let address = listener.local_addr().expect("the proxy's address");
        let shared = Arc::new(Shared::default());
        let (stop, stopped) = oneshot::channel();
        let thread = {
            let shared = shared.clone();
            std::thread::spawn(move || serve(listener, acceptor, shared, stopped))
        };
        RancherProxy {
            address,
            ca_pem,
            shared,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// `https://127.0.0.1:PORT`, Rancher's own URL.
    pub(crate) fn url(&self) -> String {
        format!("https://{}", self.address)
    }

    /// `https://127.0.0.1:PORT/k8s/clusters/<id>`, the server of a Rancher kubeconfig.
    pub(crate) fn cluster_url(&self, id: &str) -> String {
        format!("{}/k8s/clusters/{id}", self.url())
    }

    /// The proxy's self-signed certificate, PEM: it is its own CA.
    pub(crate) fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// A kubeconfig in `dir` whose one context, `local`, reaches this proxy's `local` with the
    /// credentials `plugin` prints, as a Rancher-generated one.
    pub(crate) fn local_kubeconfig(
        &self,
        dir: &std::path::Path,
        plugin: &crate::support::faults::exec_plugin::ExecPlugin,
    ) -> std::path::PathBuf {
        use base64::Engine as _;
        let ca = base64::engine::general_purpose::STANDARD.encode(self.ca_pem());
        let server = self.cluster_url("local");
        crate::support::faults::exec_plugin::write_kubeconfig(
            dir,
            "rancher.json",
            &[crate::support::faults::exec_plugin::PluginContext {
                name: "local",
                server: &server,
                ca_data: Some(&ca),
                plugin,
            }],
        )
    }

    /// Accepts `rancher_token` as user `user` on every cluster that has a token for that user.
    pub(crate) fn add_user(&self, user: &str, rancher_token: &str) {
        self.shared
            .users
            .lock()
            .expect("users lock")
            .insert(rancher_token.to_string(), user.to_string());
    }

    /// Routes `/k8s/clusters/<id>/…` to `backend` (replacing what `id` was).
    pub(crate) fn register(&self, id: &str, backend: &Backend) {
        let upstream = upstream(backend);
        self.set_target(id, Target::Backend(Arc::new(upstream)));
    }

    /// Makes `id` a cluster Rancher knows whose agent is not connected.
    pub(crate) fn register_disconnected(&self, id: &str, how: Disconnected) {
        self.register_disconnected_after(id, how, std::time::Duration::ZERO);
    }

    /// Like [`Self::register_disconnected`], each answer sent only after `delay`, as Rancher
    /// answers once its dialer has given up.
    pub(crate) fn register_disconnected_after(
        &self,
        id: &str,
        how: Disconnected,
        delay: std::time::Duration,
    ) {
        self.set_target(id, Target::Disconnected(how, delay));
    }

    /// The TLS handshakes clients completed with the proxy so far.
    pub(crate) fn handshakes(&self) -> usize {
        self.shared.handshakes.load(Ordering::Relaxed)
    }

    fn set_target(&self, id: &str, target: Target) {
        self.shared
            .targets
            .lock()
            .expect("targets lock")
            .insert(id.to_string(), target);
    }

    /// Flips the fault switch of cluster `id`; responses already streaming obey it from their
    /// next chunk on.
    pub(crate) fn set_fault(&self, id: &str, fault: Fault) {
        let mut faults = self.shared.faults.lock().expect("faults lock");
        faults
            .entry(id.to_string())
            .or_insert_with(|| watch::channel(Fault::Pass).0)
            .send_replace(fault);
    }

    /// Every request so far, in arrival order.
    pub(crate) fn requests(&self) -> Vec<RequestRecord> {
        self.shared.log.lock().expect("log lock").clone()
    }

    /// The requests to cluster `id`.
    pub(crate) fn requests_to(&self, id: &str) -> Vec<RequestRecord> {
        self.requests()
            .into_iter()
            .filter(|r| r.cluster == id)
            .collect()
    }

    pub(crate) fn clear_requests(&self) {
        self.shared.log.lock().expect("log lock").clear();
    }
}

impl Drop for RancherProxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn serve(
    listener: std::net::TcpListener,
    acceptor: TlsAcceptor,
    shared: Arc<Shared>,
    stopped: oneshot::Receiver<()>,
) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime for the Rancher proxy");
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
        let accept = async {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                tokio::spawn(connection(tcp, acceptor.clone(), shared.clone()));
            }
        };
        tokio::select! {
            _ = accept => {}
            _ = stopped => {}
        }
    });
    // Stalled responses wait forever by design; do not wait for them.
    runtime.shutdown_background();
}

async fn connection(tcp: tokio::net::TcpStream, acceptor: TlsAcceptor, shared: Arc<Shared>) {
    // The raw socket is what a mid-body reset acts on (SO_LINGER 0 before it is closed).
    let fd = tcp.as_raw_fd();
    let Ok(tls) = acceptor.accept(tcp).await else {
        return;
    };
    shared.handshakes.fetch_add(1, Ordering::Relaxed);
    let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
    // Over HTTP/2 a reset mid-body resets the one stream (hyper sends RST_STREAM when a body
    // fails), as Go's reverse proxy does; over HTTP/1.1 it resets the connection.
    let reset_fd = (!h2).then_some(fd);
    let service = hyper::service::service_fn(move |req| {
        let shared = shared.clone();
        async move { Ok::<_, Infallible>(handle(&shared, reset_fd, req).await) }
    });
    if h2 {
        // Go's HTTP/2 server allows 250 streams at once on a connection.
        let _ = hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
            .max_concurrent_streams(250)
            .serve_connection(TokioIo::new(tls), service)
            .await;
    } else {
        let _ = hyper::server::conn::http1::Builder::new()
            .serve_connection(TokioIo::new(tls), service)
            .await;
    }
}

async fn handle(shared: &Arc<Shared>, fd: Option<RawFd>, req: Request<Incoming>) -> Response<Body> {
    let (cluster, rest) = split_cluster(req.uri().path());
    let query = req
        .uri()
        .query()
        .map(|q| format!("?{q}"))
        .unwrap_or_default();
    let path = format!("{rest}{query}");
    let index = shared.record(RequestRecord {
        cluster: cluster.clone(),
        method: req.method().to_string(),
        watch: is_watch(&rest, &query),
        path: path.clone(),
        status: 0,
    });
    let response = route(shared, fd, &cluster, &path, req).await;
    shared.set_status(index, response.status().as_u16());
    response
}

async fn route(
    shared: &Arc<Shared>,
    fd: Option<RawFd>,
    cluster: &str,
    path: &str,
    req: Request<Incoming>,
) -> Response<Body> {
    let token = req
        .headers()
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default()
        .to_string();
    let Some(user) = shared
        .users
        .lock()
        .expect("users lock")
        .get(&token)
        .cloned()
    else {
        let body = json!({"type": "error", "status": "401",
            "message": "Unauthorized 401: must authenticate"});
        return answer(401, "application/json", format!("{body}\n"));
    };
    let target = match shared.targets.lock().expect("targets lock").get(cluster) {
        Some(Target::Backend(upstream)) => Ok(upstream.clone()),
        Some(Target::Disconnected(how, delay)) => Err(Some((*how, *delay))),
        None => Err(None),
    };
    let upstream = match target {
        Ok(upstream) => upstream,
        Err(Some((how, delay))) => {
            tokio::time::sleep(delay).await;
            let text = match how {
                Disconnected::AgentDisconnected => "cluster agent disconnected".to_string(),
                Disconnected::NoSession => format!("failed to find Session for client {cluster}"),
            };
            return answer(500, "text/plain; charset=utf-8", text);
        }
        Err(None) => {
            let message = if cluster.is_empty() {
                "failed to find cluster".to_string()
            } else {
                format!("clusters.management.cattle.io \"{cluster}\" not found")
            };
            let body = json!({"Code": {"Code": "NotFound", "Status": 404},
                "Message": message, "Cause": null, "FieldName": ""});
            return answer(404, "text/plain; charset=utf-8", format!("{body}\n"));
        }
    };
    let Some(backend_token) = upstream.tokens.get(&user).cloned() else {
        let body = json!({"type": "error", "status": "401",
            "message": "Unauthorized 401: must authenticate"});
        return answer(401, "application/json", format!("{body}\n"));
    };
    match proxy_body::forward(
        &upstream,
        &backend_token,
        path,
        req,
        shared.fault(cluster),
        fd,
    )
    .await
    {
        Ok(response) => response,
        Err(e) => answer(500, "text/plain; charset=utf-8", e.to_string()),
    }
}

/// A response Rancher writes itself.
fn answer(status: u16, content_type: &str, body: String) -> Response<Body> {
    Response::builder()
        .status(status)
        .header(http::header::CONTENT_TYPE, content_type)
        .body(
            Full::new(Bytes::from(body))
                .map_err(|never| match never {})
                .boxed(),
        )
        .expect("a well-formed response")
}
