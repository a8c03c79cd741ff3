//! The HTTP/1.1 server: an accept loop with hyper's `serve_connection` per socket (optionally
//! behind a rustls handshake, `tls.rs`), so a fault can drop a connection mid-request. Bodies up
//! to 2048 bytes carry `Content-Length`, larger ones are chunked, like the apiserver (README
//! "Other").

use super::RequestRecord;
use super::faults::{self, AfterCommit, FaultAction, ListLie};
use super::handlers::{self, MAX_BODY_BYTES, Query, Request};
use super::resources;
use super::state::State;
use super::status::{self, Reply};
use super::store::new_uid;
use http_body_util::BodyExt;
use hyper::body::{Body, Bytes, Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::sync::Notify;
use tokio_rustls::TlsAcceptor;

/// A response body sent in one piece, with or without a known length.
pub(crate) struct OneShotBody {
    data: Option<Bytes>,
    chunked: bool,
}

impl Body for OneShotBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.get_mut().data.take().map(|d| Ok(Frame::data(d))))
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        match (&self.data, self.chunked) {
            (_, true) => SizeHint::default(),
            (Some(d), false) => SizeHint::with_exact(d.len() as u64),
            (None, false) => SizeHint::with_exact(0),
        }
    }
}

/// A response body: one piece, or a watch's event lines as they happen.
pub(crate) enum FakeBody {
    OneShot(OneShotBody),
    Watch(tokio::sync::mpsc::Receiver<Bytes>),
}

impl Body for FakeBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            FakeBody::OneShot(body) => Pin::new(body).poll_frame(cx),
            FakeBody::Watch(lines) => lines.poll_recv(cx).map(|l| l.map(|d| Ok(Frame::data(d)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            FakeBody::OneShot(body) => body.is_end_stream(),
            FakeBody::Watch(_) => false,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            FakeBody::OneShot(body) => body.size_hint(),
            FakeBody::Watch(_) => SizeHint::default(),
        }
    }
}

/// A list reply's body with `lie` written into its `metadata`; `index` makes each endless
/// token new.
fn lie_about_paging(body: &[u8], lie: &ListLie, index: usize) -> Vec<u8> {
    let Ok(mut list) = serde_json::from_slice::<serde_json::Value>(body) else {
        return body.to_vec();
    };
    let metadata = &mut list["metadata"];
    match lie {
        ListLie::RemainingItemCount(n) => {
            metadata["remainingItemCount"] = (*n).into();
        }
        ListLie::SameContinue => metadata["continue"] = "the-same-token".into(),
        ListLie::EndlessContinue => metadata["continue"] = format!("token-{index}").into(),
    }
    serde_json::to_vec(&list).expect("a JSON value serialises")
}

/// `bytes` of a list that never closes, 64 KiB at a time, while the client reads.
fn stream_huge_body(bytes: u64) -> tokio::sync::mpsc::Receiver<Bytes> {
    let (send, chunks) = tokio::sync::mpsc::channel(4);
    tokio::spawn(async move {
        let head = br#"{"kind":"LeaseList","apiVersion":"coordination.k8s.io/v1","metadata":{"resourceVersion":"1"},"items":[],"padding":""#;
        if send.send(Bytes::from_static(head)).await.is_err() {
            return;
        }
        let chunk = Bytes::from(vec![b'x'; 64 * 1024]);
        let mut sent = head.len() as u64;
        while sent < bytes {
            if send.send(chunk.clone()).await.is_err() {
                return;
            }
            sent += chunk.len() as u64;
        }
    });
    chunks
}

/// Streams a watch: the replayed lines, then every later write it sees, until its timeout, the
/// client leaving (the receiver dropped) or the server stopping.
fn stream_watch(
    start: super::watch::WatchStart,
    (mut events, mut ends): WatchFeed,
) -> tokio::sync::mpsc::Receiver<Bytes> {
    use tokio::sync::broadcast::error::RecvError;
    let (send, lines) = tokio::sync::mpsc::channel(64);
    tokio::spawn(async move {
        for line in &start.initial {
            if send.send(Bytes::from(line.clone())).await.is_err() {
                return;
            }
        }
        if !start.follow {
            return;
        }
        let deadline = start.timeout.map(|t| tokio::time::Instant::now() + t);
        let timeout = async {
            match deadline {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(timeout);
        loop {
            let event = tokio::select! {
                _ = &mut timeout => return,
                // `end_watches`, or the server state gone.
                _ = ends.changed() => return,
                event = events.recv() => event,
            };
            match event {
                Ok(event) => {
                    if let Some(line) = start.line_for(&event)
                        && send.send(Bytes::from(line)).await.is_err()
                    {
                        return;
                    }
                }
                // Falling behind 1024 writes: end the watch, the client resumes or relists.
                Err(RecvError::Lagged(_)) | Err(RecvError::Closed) => return,
            }
        }
    });
    lines
}

/// Accept connections until `shutdown` is notified; with `tls`, each connection first completes
/// a TLS handshake (a failed handshake just closes that socket, before any request is logged).
pub(crate) async fn serve(
    listener: tokio::net::TcpListener,
    state: Arc<Mutex<State>>,
    shutdown: Arc<Notify>,
    tls: Option<TlsAcceptor>,
) {
    loop {
        let accepted = tokio::select! {
            _ = shutdown.notified() => break,
            accepted = listener.accept() => accepted,
        };
        let Ok((stream, _)) = accepted else { continue };
        let state = state.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            match tls {
                None => serve_connection(stream, state).await,
                Some(acceptor) => {
                    if let Ok(stream) = acceptor.accept(stream).await {
                        serve_connection(stream, state).await;
                    }
                }
            }
        });
    }
}

/// HTTP/1.1 on one (plain or TLS) connection until the client closes it or a fault drops it.
async fn serve_connection<S>(stream: S, state: Arc<Mutex<State>>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let kill = Arc::new(Notify::new());
    let kill_from_service = kill.clone();
    let service = service_fn(move |req| {
        let state = state.clone();
        let kill = kill_from_service.clone();
        async move { Ok::<_, Infallible>(respond(req, state, kill).await) }
    });
    let connection = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
    tokio::select! {
        _ = connection => {}
        // Dropping the connection future closes the socket without an answer.
        _ = kill.notified() => {}
    }
}

async fn read_body(mut body: Incoming) -> (Vec<u8>, bool) {
    let mut data = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else { break };
        if let Ok(chunk) = frame.into_data() {
            data.extend_from_slice(&chunk);
            if data.len() > MAX_BODY_BYTES {
                return (data, true);
            }
        }
    }
    (data, false)
}

fn header(req: &hyper::Request<Incoming>, name: &str) -> Option<String> {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

async fn respond(
    req: hyper::Request<Incoming>,
    state: Arc<Mutex<State>>,
    kill: Arc<Notify>,
) -> hyper::Response<FakeBody> {
    let method = req.method().as_str().to_string();
    let path = req.uri().path().to_string();
    let raw_query = req.uri().query().unwrap_or("").to_string();
    let user_agent = header(&req, "user-agent");
    let authorization = header(&req, "authorization");
    let content_type = header(&req, "content-type");
    let accept = header(&req, "accept");
    let (body, body_too_large) = read_body(req.into_body()).await;
    let request = Request {
        method: method.clone(),
        path: path.clone(),
        query: Query::parse(&raw_query),
        user_agent: user_agent.clone(),
        authorization: authorization.clone(),
        content_type,
        accept: accept.clone(),
        body,
        body_too_large,
    };
    let target = if raw_query.is_empty() {
        path.clone()
    } else {
        format!("{path}?{raw_query}")
    };
    let (index, fault) = {
        let mut st = state.lock().expect("fake api state");
        st.requests.push(RequestRecord {
            method: method.clone(),
            path: path.clone(),
            query: raw_query.clone(),
            user_agent,
            accept,
            authorization: authorization.clone(),
            body: String::from_utf8_lossy(&request.body).into_owned(),
            status: 0,
        });
        let index = st.requests.len() - 1;
        let fault = faults::take_matching(&mut st.faults, &method, &target);
        (index, fault)
    };
    let (reply, feed) = match fault {
        Some(FaultAction::DropConnection) => {
            kill.notify_one();
            // Never answers: the connection task drops the socket.
            std::future::pending::<(Reply, Option<WatchFeed>)>().await
        }
        Some(FaultAction::Status(code)) => {
            let info = resources::request_info(&method, &path, &request.query);
            let def = resources::by_plural(&info.api_group, &info.api_version, &info.resource);
            (
                status::for_code(code, def.map(|d| (d, info.name.as_str()))),
                None,
            )
        }
        Some(FaultAction::Raw {
            status,
            content_type,
            body,
        }) => (Reply::raw(status, &content_type, body), None),
        Some(FaultAction::Delay(delay)) => {
            tokio::time::sleep(delay).await;
            handle(&state, &request)
        }
        Some(FaultAction::LyingList(lie)) => {
            let mut request = request;
            request.query.0.retain(|(k, _)| k != "continue");
            let (mut reply, feed) = handle(&state, &request);
            reply.body = lie_about_paging(&reply.body, &lie, index);
            (reply, feed)
        }
        Some(FaultAction::HugeBody(bytes)) => {
            state.lock().expect("fake api state").requests[index].status = 200;
            return hyper::Response::builder()
                .status(200)
                .header("Content-Type", "application/json")
                .body(FakeBody::Watch(stream_huge_body(bytes)))
                .expect("valid response");
        }
        Some(FaultAction::AfterCommit(lost)) => {
            let (handled, _) = handle(&state, &request);
            state.lock().expect("fake api state").requests[index].status = handled.status;
            match lost {
                AfterCommit::Status(code) => {
                    let info = resources::request_info(&method, &path, &request.query);
                    let def =
                        resources::by_plural(&info.api_group, &info.api_version, &info.resource);
                    (
                        status::for_code(code, def.map(|d| (d, info.name.as_str()))),
                        None,
                    )
                }
                AfterCommit::Reset => {
                    kill.notify_one();
                    std::future::pending::<(Reply, Option<WatchFeed>)>().await
                }
                AfterCommit::Hang => std::future::pending::<(Reply, Option<WatchFeed>)>().await,
            }
        }
        None => handle(&state, &request),
    };
    let ahead = {
        let mut st = state.lock().expect("fake api state");
        st.requests[index].status = reply.status;
        st.clock_ahead
    };
    into_response(reply, feed, authorization.is_none(), ahead)
}

/// Answers under the state lock; a watch subscribes to later writes under the same lock, so
/// no write falls between the events it replays and the ones it follows.
fn handle(state: &Mutex<State>, request: &Request) -> (Reply, Option<WatchFeed>) {
    let mut st = state.lock().expect("fake api state");
    let reply = handlers::handle(&mut st, request);
    let feed = reply.watch.is_some().then(|| {
        let mut ends = st.watch_ends.subscribe();
        ends.mark_unchanged();
        (st.store.subscribe(), ends)
    });
    (reply, feed)
}

/// Later writes, and the signal of `end_watches`.
type WatchFeed = (
    tokio::sync::broadcast::Receiver<super::store::WatchEvent>,
    tokio::sync::watch::Receiver<u64>,
);

fn into_response(
    mut reply: Reply,
    feed: Option<WatchFeed>,
    anonymous: bool,
    clock_ahead: jiff::SignedDuration,
) -> hyper::Response<FakeBody> {
    let mut builder = hyper::Response::builder()
        .status(reply.status)
        .header("Audit-Id", new_uid())
        .header("Cache-Control", "no-cache, private")
        // Like the real server (every wire sample has one); clients may read it as the server's clock.
        .header(
            "Date",
            jiff::fmt::rfc2822::DateTimePrinter::new()
                .timestamp_to_rfc9110_string(&(jiff::Timestamp::now() + clock_ahead))
                .unwrap_or_default(),
        )
        .header("Content-Type", reply.content_type.as_str());
    for (name, value) in &reply.headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    if !reply.no_flow_headers {
        let (flow_schema, priority_level) = if anonymous {
            (
                "29d5c78e-e8c4-4efe-a40b-547adb145945",
                "5acc88ba-6d7c-485e-a694-1905149ccddf",
            )
        } else {
            (
                "3013996f-e5d6-4e4d-a719-e780ee64d31c",
                "fdcf479a-9933-42a2-bf25-d405d777b4c8",
            )
        };
        builder = builder
            .header("X-Kubernetes-Pf-Flowschema-Uid", flow_schema)
            .header("X-Kubernetes-Pf-Prioritylevel-Uid", priority_level);
    }
    if reply.close {
        builder = builder.header("Connection", "close");
    }
    if let (Some(start), Some(feed)) = (reply.watch.take(), feed) {
        let lines = stream_watch(*start, feed);
        return builder
            .body(FakeBody::Watch(lines))
            .expect("valid response");
    }
    let chunked = reply.body.len() > 2048;
    let body = OneShotBody {
        data: Some(Bytes::from(reply.body)),
        chunked,
    };
    builder
        .body(FakeBody::OneShot(body))
        .expect("valid response")
}
