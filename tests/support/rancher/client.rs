//! A small HTTPS client for the Rancher proxy, independent of kube-rs and of k3sdoctor: one
//! request per connection, the response recorded as it streams in, so a test can watch a body
//! arrive, stall or break.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::rustls::{ClientConfig, RootCertStore, crypto::ring};

use super::proxy::RancherProxy;
use crate::support::wait::wait_for;

/// A response as far as it has arrived.
#[derive(Clone, Debug, Default)]
pub(crate) struct Streamed {
    /// 0 until the head arrived.
    pub status: u16,
    pub content_type: String,
    pub content_length: Option<usize>,
    pub body: Vec<u8>,
    /// `Some(Ok)` once the body ended cleanly, `Some(Err(why))` once the request failed.
    pub done: Option<Result<(), String>>,
}

impl Streamed {
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }
}

/// A request in flight; the thread running it ends with it.
#[derive(Clone)]
pub(crate) struct InFlight(Arc<Mutex<Streamed>>);

impl InFlight {
    pub(crate) fn now(&self) -> Streamed {
        self.0.lock().expect("streamed lock").clone()
    }

    /// Waits (bounded by `limit`) until `cond` holds of the response so far.
    pub(crate) fn until(&self, limit: Duration, cond: impl Fn(&Streamed) -> bool) -> Streamed {
        let reached = wait_for(limit, || cond(&self.now()));
        let now = self.now();
        assert!(reached, "the response never got there: {now:?}");
        now
    }

    /// Waits (bounded by `limit`) until the response is complete or failed.
    pub(crate) fn finished(&self, limit: Duration) -> Streamed {
        self.until(limit, |s| s.done.is_some())
    }
}

#[derive(Clone)]
pub(crate) struct RancherClient {
    connector: TlsConnector,
    address: String,
}

impl RancherClient {
    /// A client trusting the proxy's certificate.
    pub(crate) fn new(proxy: &RancherProxy) -> RancherClient {
        let mut roots = RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(proxy.ca_pem().as_bytes()) {
            roots.add(cert.expect("PEM")).expect("a CA rustls accepts");
        }
        let config = ClientConfig::builder_with_provider(Arc::new(ring::default_provider()))
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        RancherClient {
            connector: TlsConnector::from(Arc::new(config)),
            address: proxy.url().trim_start_matches("https://").to_string(),
        }
    }

    /// GET `path` (e.g. `/k8s/clusters/local/api/v1/namespaces`) with `token`; returns at
    /// once, the response streams into the [`InFlight`].
    pub(crate) fn start_get(&self, token: &str, path: &str) -> InFlight {
        let state = InFlight(Arc::new(Mutex::new(Streamed::default())));
        let (client, token, path, out) = (
            self.clone(),
            token.to_string(),
            path.to_string(),
            state.clone(),
        );
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime for the client");
            let result = runtime.block_on(client.get_into(&token, &path, &out));
            out.0.lock().expect("streamed lock").done = Some(result);
        });
        state
    }

    /// GET `path` to the end (bounded by a minute).
    pub(crate) fn get(&self, token: &str, path: &str) -> Streamed {
        self.start_get(token, path)
            .finished(Duration::from_secs(60))
    }

    async fn get_into(&self, token: &str, path: &str, out: &InFlight) -> Result<(), String> {
        let tcp = tokio::net::TcpStream::connect(&self.address)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let name = ServerName::try_from("127.0.0.1").expect("an IP server name");
        let tls = self
            .connector
            .connect(name, tcp)
            .await
            .map_err(|e| format!("TLS: {e}"))?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake::<_, Empty<Bytes>>(TokioIo::new(tls))
                .await
                .map_err(|e| format!("handshake: {e}"))?;
        tokio::spawn(connection);
        let request = http::Request::get(path)
            .header(http::header::HOST, &self.address)
            .header(http::header::AUTHORIZATION, format!("Bearer {token}"))
            .header(http::header::ACCEPT, "application/json")
            .body(Empty::new())
            .map_err(|e| e.to_string())?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| format!("request: {e}"))?;
        {
            let header = |name| {
                response
                    .headers()
                    .get(name)
                    .and_then(|v: &http::HeaderValue| v.to_str().ok())
                    .map(str::to_string)
            };
            let mut s = out.0.lock().expect("streamed lock");
            s.status = response.status().as_u16();
            s.content_type = header(http::header::CONTENT_TYPE).unwrap_or_default();
            s.content_length = header(http::header::CONTENT_LENGTH).and_then(|v| v.parse().ok());
        }
        let mut body = response.into_body();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| format!("body: {e:?}"))?;
            if let Ok(data) = frame.into_data() {
                out.0
                    .lock()
                    .expect("streamed lock")
                    .body
                    .extend_from_slice(&data);
            }
        }
        Ok(())
    }
}
