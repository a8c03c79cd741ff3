//! A bound on the connections one client opens: each holds one of a fixed number of permits
//! for as long as it is open, and a new one waits for a permit. hyper's pool has no such
//! bound (it opens a connection whenever a request finds none idle, including in the instant
//! between one request's end and its connection's return to the pool), so without it a
//! Rancher's shared client would open more connections, and TLS handshakes, than `--parallel`.
//! Over HTTP/2 it opens one, which carries every request.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::future::BoxFuture;
use http::Uri;
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::client::legacy::connect::{Connected, Connection};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tower::{BoxError, ServiceExt};

/// `inner`'s connections, at most as many open at once as `permits` holds.
#[derive(Clone)]
pub(super) struct GatedConnector<C> {
    pub inner: C,
    pub permits: Arc<Semaphore>,
}

impl<C> tower::Service<Uri> for GatedConnector<C>
where
    C: tower::Service<Uri> + Clone + Send + 'static,
    C::Future: Send,
    C::Response: Send,
    C::Error: Into<BoxError>,
{
    type Response = Gated<C::Response>;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Gated<C::Response>, BoxError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        // Readiness is the permit's, awaited in `call`: hyper's pool cannot wait on it here.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let (permits, inner) = (self.permits.clone(), self.inner.clone());
        Box::pin(async move {
            let permit = permits.acquire_owned().await?;
            let io = inner.oneshot(uri).await.map_err(Into::into)?;
            Ok(Gated {
                io,
                _permit: permit,
            })
        })
    }
}

/// A connection and the permit it holds until it is closed.
pub(super) struct Gated<T> {
    io: T,
    _permit: OwnedSemaphorePermit,
}

impl<T: Connection> Connection for Gated<T> {
    fn connected(&self) -> Connected {
        self.io.connected()
    }
}

impl<T: Read + Unpin> Read for Gated<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: Write + Unpin> Write for Gated<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }
}

/// The client of one Rancher: kube's stack (its base URL, credentials and extra headers, its
/// TLS from the kubeconfig, kubectl's timeouts) over a pool of at most `permits` connections.
/// Where Rancher speaks HTTP/2 (its dynamiclistener offers h2 by ALPN) every cluster's
/// requests share one connection; kube's own connector offers http/1.1 only, one request per
/// connection at a time.
/// `speaks_h2` is set when a connection negotiates h2. With `h2_only` the client speaks HTTP/2
/// without waiting for the answer to its offer, so that requests sent together wait for its
/// one connection instead of each opening another: for a Rancher known to speak it. Each h2
/// connection lets Rancher send `window` bytes ahead of what was read (`unread_window`).
pub(super) fn gated_client(
    config: &kube::Config,
    permits: Arc<Semaphore>,
    speaks_h2: Arc<AtomicBool>,
    h2_only: bool,
    window: u32,
) -> Result<kube::Client, kube::Error> {
    use kube::client::ConfigExt;
    let mut tcp = hyper_util::client::legacy::connect::HttpConnector::new();
    tcp.enforce_http(false);
    let gated = GatedConnector {
        inner: tcp,
        permits,
    };
    let mut connector = hyper_timeout::TimeoutConnector::new(offering_h2(config, gated)?);
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    connector.set_reset_reader_on_write(config.reset_reader_on_write);
    let connector = NegotiationWatch {
        inner: connector,
        speaks_h2,
    };
    let pool = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .http2_only(h2_only)
        .http2_initial_connection_window_size(window)
        .timer(hyper_util::rt::TokioTimer::new())
        .http2_keep_alive_interval(keep_alive_interval(config.read_timeout))
        .http2_keep_alive_while_idle(true)
        .build(connector);
    let service = tower::ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .map_err(BoxError::from)
        .service(pool);
    Ok(kube::Client::new(service, config.default_namespace.clone()))
}

/// A connector that notes when one of its connections negotiated h2.
#[derive(Clone)]
struct NegotiationWatch<C> {
    inner: C,
    speaks_h2: Arc<AtomicBool>,
}

impl<C> tower::Service<Uri> for NegotiationWatch<C>
where
    C: tower::Service<Uri>,
    C::Future: Send + 'static,
    C::Response: Connection,
    C::Error: Into<BoxError>,
{
    type Response = C::Response;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<C::Response, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let (connecting, speaks_h2) = (self.inner.call(uri), self.speaks_h2.clone());
        Box::pin(async move {
            let connection = connecting.await.map_err(Into::into)?;
            if connection.connected().is_negotiated_h2() {
                speaks_h2.store(true, Ordering::Relaxed);
            }
            Ok(connection)
        })
    }
}

/// kube's TLS for `config` (its CA, client certificate and tls-server-name, as
/// `rustls_https_connector_with_connector` builds it) offering h2 before http/1.1.
fn offering_h2<H>(
    config: &kube::Config,
    tcp: H,
) -> Result<hyper_rustls::HttpsConnector<H>, kube::Error> {
    use kube::client::ConfigExt;
    let tls = config.rustls_client_config()?;
    let mut builder = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http();
    if let Some(name) = &config.tls_server_name {
        let name = rustls::pki_types::ServerName::try_from(name.clone()).map_err(|e| {
            kube::Error::RustlsTls(kube::client::RustlsTlsError::InvalidServerName(e))
        })?;
        builder =
            builder.with_server_name_resolver(hyper_rustls::FixedServerNameResolver::new(name));
    }
    Ok(builder.enable_http1().enable_http2().wrap_connector(tcp))
}

/// How often an HTTP/2 connection is pinged, idle or not: often enough that the connection's
/// read timeout (the request timeout) never ends a healthy connection that is only quiet, which
/// would fail every cluster's requests on it at once. Each request keeps its own timeout
/// (`rancher_pool`'s route), and a peer that stops answering pings is dropped.
pub(super) fn keep_alive_interval(read_timeout: Option<Duration>) -> Duration {
    const LONGEST: Duration = Duration::from_secs(30);
    read_timeout.map_or(LONGEST, |limit| {
        (limit / 3).clamp(Duration::from_secs(1), LONGEST)
    })
}

#[cfg(test)]
mod tests;
