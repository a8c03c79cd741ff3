//! HTTPS for [`super::FakeApi::start_tls`]: a fresh CA and a certificate it signs (rcgen) for
//! `127.0.0.1` and `localhost`, served by rustls with the ring provider (like kube's client).
//! The CA signs the certificates of the loopback listeners that stand for the other servers,
//! as a k3s cluster's server CA signs every server's.

use std::sync::Arc;

use crate::support::test_ca::TestCa;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// The server side of TLS and the CA clients must trust.
pub(crate) struct TlsMaterial {
    pub acceptor: TlsAcceptor,
    /// The CA that signed the serving certificate.
    pub ca: TestCa,
}

/// A fresh CA, a certificate it signs for `127.0.0.1` and `localhost` (valid until 2100), and a
/// rustls server configuration (TLS 1.2 and 1.3, ALPN `http/1.1`) serving it.
pub(crate) fn ca_signed() -> TlsMaterial {
    ca_signed_for(&["127.0.0.1", "localhost"])
}

/// Like [`ca_signed`], for `names`.
pub(crate) fn ca_signed_for(names: &[&str]) -> TlsMaterial {
    let ca = TestCa::generate();
    let (cert, key) = ca.sign(names, "2100-01-01T00:00:00Z".parse().unwrap());
    serve(cert, &key, ca)
}

/// Like [`ca_signed`], valid until the start of `(year, month, day)` UTC: a certificate that
/// expires, for the certificate checks.
pub(crate) fn ca_signed_until(year: i32, month: u8, day: u8) -> TlsMaterial {
    let ca = TestCa::generate();
    let until: jiff::Timestamp = format!("{year:04}-{month:02}-{day:02}T00:00:00Z")
        .parse()
        .expect("a date");
    let (cert, key) = ca.sign(&["127.0.0.1", "localhost"], until);
    serve(cert, &key, ca)
}

/// A self-signed certificate for `names`, valid until `(year, month, day)`, and its key.
pub(crate) fn certificate_until(
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

fn serve(cert: rcgen::Certificate, signing_key: &rcgen::KeyPair, ca: TestCa) -> TlsMaterial {
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
        ca,
    }
}
