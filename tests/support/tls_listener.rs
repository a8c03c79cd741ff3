//! A loopback TLS listener that only completes handshakes, presenting a certificate that
//! expires on a given day: a k3s server's apiserver address as the per-server certificate
//! check sees it (signed by the cluster's CA), or an intercepting proxy answering in its place
//! (self-signed). It sends nothing after the handshake.

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;

use super::test_ca::{TestCa, foreign_certificate};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

pub(crate) struct TlsListener {
    pub addr: SocketAddr,
    _runtime: tokio::runtime::Runtime,
}

impl TlsListener {
    /// Listens on `ip:port` (`port` 0 for any), presenting a certificate for `names` that `ca`
    /// signed, valid until `until` (to the second); `None` when the port is taken.
    pub(crate) fn start(
        ip: &str,
        port: u16,
        names: &[&str],
        until: jiff::Timestamp,
        ca: &TestCa,
    ) -> Option<TlsListener> {
        TlsListener::presenting(ip, port, ca.sign(names, until))
    }

    /// Like [`TlsListener::start`], presenting a self-signed certificate named `cn`: not the
    /// cluster's, as an intercepting proxy's.
    pub(crate) fn start_foreign(
        ip: &str,
        port: u16,
        cn: &str,
        names: &[&str],
        until: jiff::Timestamp,
    ) -> Option<TlsListener> {
        TlsListener::presenting(ip, port, foreign_certificate(cn, names, until))
    }

    fn presenting(
        ip: &str,
        port: u16,
        (cert, key): (rcgen::Certificate, rcgen::KeyPair),
    ) -> Option<TlsListener> {
        let listener = TcpListener::bind((ip, port)).ok()?;
        listener.set_nonblocking(true).ok()?;
        let addr = listener.local_addr().ok()?;
        let cert: CertificateDer<'static> = cert.der().clone();
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let config = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
            .with_safe_default_protocol_versions()
            .ok()?
            .with_no_client_auth()
            .with_single_cert(vec![cert], key)
            .ok()?;
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .ok()?;
        runtime.spawn(async move {
            let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                return;
            };
            while let Ok((stream, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let _ = acceptor.accept(stream).await;
                });
            }
        });
        Some(TlsListener {
            addr,
            _runtime: runtime,
        })
    }
}
