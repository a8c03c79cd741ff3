//! The HTTP side of `serve`: `/metrics`, `/healthz`, `/readyz`, `/report`. Plain HTTP/1.1
//! (a Service scraped inside the cluster); every answer is built from what the watch loop
//! last published, so a scrape waits for the API server only while a bearer token it has not
//! seen for a while is reviewed (`monitor::access`). Connections: `monitor::listener`.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::service::service_fn;
use hyper_util::rt::TokioTimer;
use tokio::net::{TcpListener, TcpStream};

use super::Exporter;
use super::access::{Access, Refusal};
use super::listener::{
    Admission, CONNECTION_LIFETIME, Connection, HEADER_READ_TIMEOUT, OpenConnections,
};
use super::metrics::CONTENT_TYPE;
use super::request_head::{Prefixed, Waited, wait_for_head};

const TEXT: &str = "text/plain; charset=utf-8";

/// The `--listen` socket, or the refusal that names it (exit 2).
pub(crate) fn bind(address: std::net::SocketAddr) -> Result<TcpListener, crate::exit::Failure> {
    super::listener::bind(address).map_err(|e| {
        crate::exit::Failure::Refused(format!(
            "serve: cannot listen on {address}: {e}; choose another --listen address"
        ))
    })
}

/// Answers /metrics, /healthz, /readyz and /report from `exporter` on a task of its own, as
/// many connections at once as the open-file limit leaves room for.
pub(crate) fn spawn(
    listener: TcpListener,
    exporter: &Arc<Exporter>,
    access: &Arc<Access>,
) -> tokio::task::JoinHandle<()> {
    super::listener::raise_open_files_limit();
    let open_files = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|l| super::listener::open_files_limit(&l));
    tokio::spawn(serve(
        listener,
        exporter.clone(),
        access.clone(),
        super::listener::connection_limit(open_files),
    ))
}

/// Accepts connections until the task is dropped; each connection is served on its own task,
/// at most `limit` waiting for a request at once (`listener::OpenConnections`).
pub(crate) async fn serve(
    listener: TcpListener,
    exporter: Arc<Exporter>,
    access: Arc<Access>,
    limit: usize,
) {
    let mut open = OpenConnections::new(limit);
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of file descriptors and the like: the next accept may succeed.
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let mut waits = 0u32;
        let connection = loop {
            match open.admit(Instant::now()) {
                Admission::Serve(connection) => break connection,
                // The connections being closed or answered need this thread to finish.
                Admission::Full if waits < 100 => tokio::task::yield_now().await,
                Admission::Full => tokio::time::sleep(Duration::from_millis(10)).await,
            }
            waits += 1;
        };
        tokio::spawn(serve_connection(
            stream,
            connection,
            exporter.clone(),
            access.clone(),
        ));
    }
}

async fn serve_connection(
    stream: TcpStream,
    connection: Arc<Connection>,
    exporter: Arc<Exporter>,
    access: Arc<Access>,
) {
    let service = {
        let connection = connection.clone();
        service_fn(move |request| {
            let in_flight = InFlight::start(connection.clone());
            let (exporter, access) = (exporter.clone(), access.clone());
            async move {
                let response = answer(&request, &exporter, &access).await;
                Ok::<_, Infallible>(response.map(|body| Answer {
                    body,
                    _in_flight: in_flight,
                }))
            }
        })
    };
    let accepted = tokio::time::Instant::now();
    let head = match wait_for_head(&stream, &connection, accepted + HEADER_READ_TIMEOUT).await {
        Waited::Head(head) => head,
        Waited::Gone => {
            connection.end();
            return;
        }
    };
    connection.head_arrived();
    let served = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .serve_connection(Prefixed::new(head, stream), service);
    tokio::pin!(served);
    let lifetime = tokio::time::sleep_until(accepted + CONNECTION_LIFETIME);
    tokio::pin!(lifetime);
    // A client that goes away mid-answer is its own business.
    loop {
        tokio::select! {
            _ = served.as_mut() => break,
            () = &mut lifetime => {
                served.as_mut().graceful_shutdown();
                let _ = tokio::time::timeout(Duration::from_secs(5), served).await;
                break;
            }
            () = connection.asked_to_close() => {
                // Asked to make room. Under a flood of connections this task may not have
                // run since it was accepted: read what the client has sent first, and keep
                // a connection that turns out to hold a complete request.
                let received = connection.received();
                if tokio::time::timeout(Duration::ZERO, served.as_mut()).await.is_ok() {
                    break;
                }
                if connection.busy() || connection.received() != received {
                    connection.keep();
                    continue;
                }
                break;
            }
        }
    }
    connection.end();
}

/// A request being answered: the connection is not closed to make room until the answer has
/// been written (hyper drops the body then) or the connection has died.
struct InFlight(Arc<Connection>);

impl InFlight {
    fn start(connection: Arc<Connection>) -> InFlight {
        connection.request_started();
        InFlight(connection)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.request_finished(Instant::now());
    }
}

/// An answer's body, holding its request in flight until it has been written.
struct Answer {
    body: Full<Bytes>,
    _in_flight: InFlight,
}

impl Body for Answer {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

async fn answer(
    request: &Request<Incoming>,
    exporter: &Exporter,
    access: &Access,
) -> Response<Full<Bytes>> {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return reply(
            StatusCode::METHOD_NOT_ALLOWED,
            TEXT,
            "only GET and HEAD are served\n".into(),
        );
    }
    // What the cluster looks like is for callers the API server vouches for; whether the
    // process lives and has synced is for the kubelet's probes, which send no token.
    let protected = match request.uri().path() {
        "/metrics" => Some("/metrics"),
        "/report" => Some("/report"),
        _ => None,
    };
    if let Some(path) = protected {
        let authorization = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        if let Err(refused) = access.check(authorization, path).await {
            return refusal(refused);
        }
    }
    match request.uri().path() {
        "/metrics" => reply(StatusCode::OK, CONTENT_TYPE, exporter.encode_metrics()),
        "/healthz" => reply(StatusCode::OK, TEXT, "ok\n".into()),
        "/readyz" if exporter.ready() => reply(StatusCode::OK, TEXT, "ok\n".into()),
        "/readyz" => reply(
            StatusCode::SERVICE_UNAVAILABLE,
            TEXT,
            "not ready: a watch has not listed its objects yet (see k3sdoctor_watch_synced)\n"
                .into(),
        ),
        "/report" => match exporter.report() {
            Some(json) => reply(StatusCode::OK, "application/json", json),
            None => reply(
                StatusCode::SERVICE_UNAVAILABLE,
                TEXT,
                "no report yet: the watches have not listed their objects\n".into(),
            ),
        },
        _ => reply(
            StatusCode::NOT_FOUND,
            TEXT,
            "not found; try /metrics, /healthz, /readyz or /report\n".into(),
        ),
    }
}

fn refusal(refused: Refusal) -> Response<Full<Bytes>> {
    let (status, body) = match refused {
        Refusal::Unauthenticated(body) => (StatusCode::UNAUTHORIZED, body),
        Refusal::Forbidden(body) => (StatusCode::FORBIDDEN, body),
        Refusal::Unavailable(body) => (StatusCode::SERVICE_UNAVAILABLE, body),
        Refusal::TooMany(body) => (StatusCode::TOO_MANY_REQUESTS, body),
    };
    let mut response = reply(status, TEXT, body);
    if status == StatusCode::TOO_MANY_REQUESTS {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
    }
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer realm=\"k3sdoctor\""),
        );
    }
    response
}

fn reply(status: StatusCode, content_type: &str, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    if let Ok(value) = header::HeaderValue::from_str(content_type) {
        response.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    response
}
