//! The HTTP side of `serve`: `/metrics`, `/healthz`, `/readyz`, `/report`. Plain HTTP/1.1
//! (a Service scraped inside the cluster); every answer is built from what the watch loop
//! last published, so a scrape never waits for the API server.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use super::Exporter;
use super::metrics::CONTENT_TYPE;

const TEXT: &str = "text/plain; charset=utf-8";

/// How long a client may take to send a request's head, and how long a kept-alive connection
/// may sit idle before its next one (hyper times both from when it starts waiting for a head).
/// A scrape sends its head at once; Prometheus opens a new connection when the old was closed.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(5);

/// The longest a connection lives, so a client that never reads its answer cannot keep one
/// (hyper has no write timeout): then it is asked to close, and closed 5 s later.
pub const CONNECTION_LIFETIME: Duration = Duration::from_secs(60);

/// At most this many connections at once: past it, the oldest is closed to make room. An
/// answer is built from memory at once, so the oldest connection is one that sits idle or
/// never sent its request; a scrape is answered within milliseconds of connecting, however
/// many silent connections come before it, and the file descriptors they take are bounded,
/// so the watches keep theirs.
pub const MAX_CONNECTIONS: usize = 64;

/// Accepts connections until the task is dropped; each connection is served on its own task,
/// at most `limit` at once.
pub async fn serve(listener: TcpListener, exporter: Arc<Exporter>, limit: usize) {
    let mut open = OpenConnections::new(limit);
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of file descriptors and the like: the next accept may succeed.
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            continue;
        };
        let closed = open.admit();
        let exporter = exporter.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let answer = answer(&request, &exporter);
                async move { Ok::<_, Infallible>(answer) }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            // A client that goes away mid-answer is its own business.
            tokio::select! {
                _ = closed => {}
                ended = tokio::time::timeout(CONNECTION_LIFETIME, connection.as_mut()) => {
                    if ended.is_err() {
                        connection.as_mut().graceful_shutdown();
                        let _ = tokio::time::timeout(Duration::from_secs(5), connection).await;
                    }
                }
            }
        });
    }
}

/// The connections being served, oldest first, each with the means to close it.
struct OpenConnections {
    limit: usize,
    open: VecDeque<oneshot::Sender<()>>,
}

impl OpenConnections {
    fn new(limit: usize) -> OpenConnections {
        OpenConnections {
            limit: limit.max(1),
            open: VecDeque::new(),
        }
    }

    /// Makes room for one more connection (closing the oldest when at the limit); the
    /// returned receiver fires when this one is to be closed.
    fn admit(&mut self) -> oneshot::Receiver<()> {
        // A connection that ended dropped its receiver.
        self.open.retain(|close| !close.is_closed());
        while self.open.len() >= self.limit {
            if let Some(oldest) = self.open.pop_front() {
                let _ = oldest.send(());
            }
        }
        let (close, closed) = oneshot::channel();
        self.open.push_back(close);
        closed
    }
}

/// How many connections to serve at once with `open_files` file descriptors allowed (the
/// soft RLIMIT_NOFILE, when known): half of what the watches, the probe and the runtime leave,
/// at most [`MAX_CONNECTIONS`], at least 4.
pub fn connection_limit(open_files: Option<u64>) -> usize {
    /// The watches (a dozen connections), the probe, the runtime, stdio and a margin.
    const RESERVED: u64 = 48;
    match open_files {
        None => MAX_CONNECTIONS,
        Some(n) => usize::try_from(n.saturating_sub(RESERVED) / 2)
            .unwrap_or(MAX_CONNECTIONS)
            .clamp(4, MAX_CONNECTIONS),
    }
}

/// The soft limit on open files from `/proc/self/limits` (Linux), e.g.
/// `Max open files            1024                 1048576              files`.
pub fn open_files_limit(limits: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.trim_start_matches("Max open files")
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn answer(request: &Request<Incoming>, exporter: &Exporter) -> Response<Full<Bytes>> {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return reply(
            StatusCode::METHOD_NOT_ALLOWED,
            TEXT,
            "only GET and HEAD are served\n".into(),
        );
    }
    match request.uri().path() {
        "/metrics" => reply(
            StatusCode::OK,
            CONTENT_TYPE,
            exporter.metrics.encode(exporter.scrape_now()),
        ),
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

fn reply(status: StatusCode, content_type: &str, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    if let Ok(value) = header::HeaderValue::from_str(content_type) {
        response.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connection_cap_leaves_the_watches_their_file_descriptors() {
        assert_eq!(connection_limit(None), MAX_CONNECTIONS);
        assert_eq!(connection_limit(Some(1_048_576)), MAX_CONNECTIONS);
        assert_eq!(connection_limit(Some(128)), 40);
        assert_eq!(connection_limit(Some(64)), 8);
        assert_eq!(connection_limit(Some(16)), 4);
    }

    #[test]
    fn past_the_limit_the_oldest_connection_is_closed() {
        let mut open = OpenConnections::new(2);
        let mut first = open.admit();
        let mut second = open.admit();
        let mut third = open.admit();
        assert!(first.try_recv().is_ok(), "the oldest is told to close");
        assert!(second.try_recv().is_err());
        // One that ended by itself frees its place.
        drop(second);
        let mut fourth = open.admit();
        assert!(third.try_recv().is_err());
        assert!(fourth.try_recv().is_err());
    }

    #[test]
    fn the_soft_open_files_limit_is_read_from_proc() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max cpu time              unlimited            unlimited            seconds   \n\
                      Max open files            1024                 524288               files     \n";
        assert_eq!(open_files_limit(limits), Some(1024));
        assert_eq!(
            open_files_limit("Max open files  unlimited unlimited files"),
            None
        );
        assert_eq!(open_files_limit(""), None);
    }
}
