//! A loopback TLS listener that only completes handshakes, presenting a certificate that
//! expires on a given day: a k3s server's apiserver address as the per-server certificate
//! check sees it. It sends nothing after the handshake.

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;

use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

pub struct TlsListener {
    pub addr: SocketAddr,
    _runtime: tokio::runtime::Runtime,
}

impl TlsListener {
    /// Listens on `ip:port` (`port` 0 for any), presenting a certificate for `names` valid
    /// until `until` (to the second); `None` when the port is taken.
    pub fn start(
        ip: &str,
        port: u16,
        names: &[&str],
        until: jiff::Timestamp,
    ) -> Option<TlsListener> {
        let listener = TcpListener::bind((ip, port)).ok()?;
        listener.set_nonblocking(true).ok()?;
        let addr = listener.local_addr().ok()?;
        let (cert, key) = certificate_until(names, until);
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

/// A self-signed certificate for `names` that ends at `until`, to the second.
fn certificate_until(
    names: &[&str],
    until: jiff::Timestamp,
) -> (rcgen::Certificate, rcgen::KeyPair) {
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let mut params = rcgen::CertificateParams::new(names).expect("certificate names");
    let seconds = u64::try_from(until.as_second()).expect("a time after 1970");
    params.not_before = rcgen::date_time_ymd(2000, 1, 1);
    params.not_after = rcgen::date_time_ymd(1970, 1, 1) + std::time::Duration::from_secs(seconds);
    let key = rcgen::KeyPair::generate().expect("key pair");
    let cert = params.self_signed(&key).expect("self-signed certificate");
    (cert, key)
}
