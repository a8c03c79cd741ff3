//! One proxied request: on a connection to the backend apiserver that is idle (or a fresh TLS
//! one), the request streamed up, the response streamed down through a pump that obeys the
//! cluster's fault switch; the connection goes back to the idle ones once its answer ended.

use std::error::Error;
use std::io;
use std::os::fd::RawFd;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::{AUTHORIZATION, HOST, HeaderName};
use http_body_util::BodyExt;
use hyper::body::{Frame, Incoming};
use hyper::client::conn::http1::SendRequest;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::sync::{mpsc, watch};
use tokio_rustls::rustls::pki_types::ServerName;

use super::proxy::{Body, Upstream};

/// A cluster's fault switch. The two mid-body faults act on the next chunk of every response
/// of that cluster (responses already streaming included): its first half is sent, then
///
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    /// Bodies flow untouched.
    Pass,
    /// …once that half has been handed to the socket, the client connection is closed with a
    /// RST (SO_LINGER 0), as a load balancer or a crashing Rancher pod does. Over HTTP/2 the
    /// stream alone is reset (RST_STREAM INTERNAL_ERROR), as Go's reverse proxy resets it when
    /// the backend breaks off.
    ResetMidBody,
    /// …nothing more until the switch goes back to `Pass` (the rest then flows) or the client
    /// closes the connection; `ResetMidBody` meanwhile resets it.
    StallMidBody,
}

/// Headers that belong to one hop (RFC 9110 §7.6.1), never forwarded.
const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

fn hop_by_hop(name: &HeaderName) -> bool {
    HOP_BY_HOP.contains(&name.as_str())
}

type BoxError = Box<dyn Error + Send + Sync>;

/// Sends `req` (its path already stripped of the cluster prefix: `path`) to the backend as
/// the user whose backend token is `token`.
pub(super) async fn forward(
    upstream: &Arc<Upstream>,
    token: &str,
    path: &str,
    req: Request<Incoming>,
    fault: watch::Receiver<Fault>,
    client_fd: Option<RawFd>,
) -> Result<Response<Body>, BoxError> {
    let (parts, body) = req.into_parts();
    let mut request = Request::builder().method(parts.method).uri(path);
    for (name, value) in &parts.headers {
        if !hop_by_hop(name) && name != HOST && name != AUTHORIZATION {
            request = request.header(name, value);
        }
    }
    let request = request
        .header(HOST, &upstream.authority)
        .header(AUTHORIZATION, format!("Bearer {token}"))
        .body(body)?;
    let (response, sender) = send(upstream, request).await?;

    let (mut parts, body) = response.into_parts();
    let names: Vec<HeaderName> = parts.headers.keys().cloned().collect();
    for name in names.iter().filter(|n| hop_by_hop(n)) {
        parts.headers.remove(name);
    }
    let (frames, rx) = mpsc::channel(1);
    let (progress, progress_rx) = watch::channel(Progress::default());
    let upstream = upstream.clone();
    tokio::spawn(async move {
        if pump(body, frames, progress_rx, fault, client_fd).await == Pumped::Whole {
            give_back(&upstream, sender).await;
        }
    });
    let body = ChannelBody { rx, progress }.boxed();
    Ok(Response::from_parts(parts, body))
}

/// `request` on an idle connection to the backend, or on a new one when none is left that
/// takes it; and the connection, to give back once its answer has been read.
async fn send(
    upstream: &Upstream,
    mut request: Request<Incoming>,
) -> Result<(Response<Incoming>, SendRequest<Incoming>), BoxError> {
    loop {
        let idle = upstream.idle.lock().expect("idle lock").pop();
        let Some(mut sender) = idle else { break };
        if sender.ready().await.is_err() {
            continue;
        }
        match sender.try_send_request(request).await {
            Ok(response) => return Ok((response, sender)),
            Err(mut failed) => match failed.take_message() {
                // The backend had closed it before the request went out.
                Some(unsent) => request = unsent,
                None => return Err(failed.into_error().into()),
            },
        }
    }
    let tcp = tokio::net::TcpStream::connect(upstream.address).await?;
    let name = ServerName::try_from(upstream.address.ip().to_string())?;
    let tls = upstream.connector.connect(name, tcp).await?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake::<_, Incoming>(TokioIo::new(tls)).await?;
    tokio::spawn(connection);
    let response = sender.send_request(request).await?;
    Ok((response, sender))
}

/// Keeps `sender` for the next request once it can take one (its last answer read whole).
async fn give_back(upstream: &Upstream, mut sender: SendRequest<Incoming>) {
    let ready = tokio::time::timeout(std::time::Duration::from_secs(5), sender.ready()).await;
    if matches!(ready, Ok(Ok(()))) {
        upstream.idle.lock().expect("idle lock").push(sender);
    }
}

/// How a response body's pump ended: with the whole body passed on, or not (a fault, a client
/// that went away, an error), when the backend connection is not reused.
#[derive(Debug, PartialEq, Eq)]
enum Pumped {
    Whole,
    Cut,
}

/// How far hyper has taken the response body: frames taken, and whether it has asked for
/// more since the last one (it asks only after writing and flushing what it took).
#[derive(Clone, Copy, Debug, Default)]
struct Progress {
    taken: u64,
    hungry: bool,
}

type Item = Result<Frame<Bytes>, io::Error>;

struct ChannelBody {
    rx: mpsc::Receiver<Item>,
    progress: watch::Sender<Progress>,
}

impl hyper::body::Body for ChannelBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Item>> {
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(item)) => {
                self.progress.send_modify(|p| {
                    p.taken += 1;
                    p.hungry = false;
                });
                Poll::Ready(Some(item))
            }
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => {
                self.progress.send_modify(|p| p.hungry = true);
                Poll::Pending
            }
        }
    }
}

async fn pump(
    mut body: Incoming,
    frames: mpsc::Sender<Item>,
    mut progress: watch::Receiver<Progress>,
    mut fault: watch::Receiver<Fault>,
    client_fd: Option<RawFd>,
) -> Pumped {
    let mut sent = 0u64;
    loop {
        let next = tokio::select! {
            next = body.frame() => next,
            _ = frames.closed() => return Pumped::Cut,
        };
        let frame = match next {
            None => return Pumped::Whole,
            Some(Ok(frame)) => frame,
            Some(Err(e)) => {
                let _ = frames.send(Err(io::Error::other(e))).await;
                return Pumped::Cut;
            }
        };
        let mode = *fault.borrow_and_update();
        let data = match frame.into_data() {
            Ok(data) => data,
            Err(trailers) => {
                if frames.send(Ok(trailers)).await.is_err() {
                    return Pumped::Cut;
                }
                sent += 1;
                continue;
            }
        };
        if mode == Fault::Pass || data.is_empty() {
            if frames.send(Ok(Frame::data(data))).await.is_err() {
                return Pumped::Cut;
            }
            sent += 1;
            continue;
        }
        let tail = {
            let mut head = data;
            let tail = head.split_off(head.len().div_ceil(2));
            if frames.send(Ok(Frame::data(head))).await.is_err() {
                return Pumped::Cut;
            }
            sent += 1;
            tail
        };
        let mut mode = mode;
        while mode == Fault::StallMidBody {
            tokio::select! {
                changed = fault.changed() => {
                    if changed.is_err() {
                        return Pumped::Cut;
                    }
                    mode = *fault.borrow_and_update();
                }
                _ = frames.closed() => return Pumped::Cut,
            }
        }
        if mode == Fault::ResetMidBody {
            // Wait until hyper has written the half out, so the client sees head and part of
            // the body before the RST, not a RST racing the head.
            tokio::select! {
                _ = progress.wait_for(|p| p.taken >= sent && p.hungry) => {}
                _ = frames.closed() => return Pumped::Cut,
            }
            if let Some(client_fd) = client_fd {
                // hyper asks for more before it flushes, and a RST discards what the kernel has
                // not sent yet: wait until the client's kernel has acknowledged every byte.
                for _ in 0..400 {
                    if unacknowledged(client_fd) == 0 {
                        break;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                }
                reset_on_close(client_fd);
            }
            let _ = frames
                .send(Err(io::Error::new(
                    io::ErrorKind::ConnectionReset,
                    "fault: reset mid-body",
                )))
                .await;
            return Pumped::Cut;
        }
        if !tail.is_empty() {
            if frames.send(Ok(Frame::data(tail))).await.is_err() {
                return Pumped::Cut;
            }
            sent += 1;
        }
    }
}

/// Bytes written to the socket that the peer has not acknowledged yet (SIOCOUTQ); 0 on error.
fn unacknowledged(fd: RawFd) -> libc::c_int {
    let mut queued: libc::c_int = 0;
    // SAFETY: as in `reset_on_close`; TIOCOUTQ (= SIOCOUTQ) writes one c_int.
    let rc = unsafe { libc::ioctl(fd, libc::TIOCOUTQ, &mut queued) };
    if rc == 0 { queued } else { 0 }
}

/// SO_LINGER 0: the close that follows hyper's abort of the connection sends a RST, not a FIN.
fn reset_on_close(fd: RawFd) {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: `fd` is the connection's socket, open while hyper serves this response (the pump
    // is only reached from within it); setsockopt reads `linger` for its given size.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
}
