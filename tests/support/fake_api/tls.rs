//! HTTPS for [`super::FakeApi::start_tls`]: a fresh self-signed certificate (rcgen) for
//! `127.0.0.1` and `localhost`, served by rustls with the ring provider (like kube's client).

use std::sync::Arc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// The server side of TLS and the certificate clients must trust.
pub(crate) struct TlsMaterial {
    pub acceptor: TlsAcceptor,
    /// The self-signed serving certificate, PEM: it is its own CA.
    pub ca_pem: String,
}

/// Generate a certificate and key valid for `127.0.0.1` and `localhost` and a rustls server
/// configuration (TLS 1.2 and 1.3, ALPN `http/1.1`) serving it.
pub(crate) fn self_signed() -> TlsMaterial {
    let certified =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string(), "localhost".to_string()])
            .expect("generate self-signed certificate");
    serve(certified.cert, &certified.signing_key)
}

/// Like [`self_signed`], valid until the start of `(year, month, day)` UTC: a certificate that
/// expires, for the certificate checks.
pub(crate) fn self_signed_until(year: i32, month: u8, day: u8) -> TlsMaterial {
    let (cert, key) = certificate_until(&["127.0.0.1", "localhost"], year, month, day);
    serve(cert, &key)
}

/// A self-signed certificate for `names`, valid until `(year, month, day)`, and its key.
pub fn certificate_until(
    names: &[&str],
    year: i32,
    month: u8,
    day: u8,
) -> (rcgen::Certificate, rcgen::KeyPair) {
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let mut params = rcgen::CertificateParams::new(names).expect("certificate names");
    params.not_after = rcgen::date_time_ymd(year, month, day);
    let key = rcgen::KeyPair::generate().expect("key pair");
    let cert = params.self_signed(&key).expect("self-signed certificate");
    (cert, key)
}

fn serve(cert: rcgen::Certificate, signing_key: &rcgen::KeyPair) -> TlsMaterial {
    let pem = cert.pem();
    let cert: CertificateDer<'static> = cert.der().clone();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(signing_key.serialize_der()));
    let mut config = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("ring supports the default TLS versions")
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .expect("rustls accepts the generated certificate");
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    TlsMaterial {
        acceptor: TlsAcceptor::from(Arc::new(config)),
        ca_pem: pem,
    }
}
