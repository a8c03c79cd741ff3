//! The Rancher proxy's serving certificate: self-signed for 127.0.0.1 and localhost, so the
//! kubeconfigs it writes embed it as their CA, as a Rancher with a private CA does.

use std::sync::Arc;

use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// The acceptor and the certificate (PEM) clients must trust.
pub(super) fn self_signed() -> (TlsAcceptor, String) {
    let certified =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string(), "localhost".to_string()])
            .expect("generate a self-signed certificate");
    let cert: CertificateDer<'static> = certified.cert.der().clone();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        certified.signing_key.serialize_der(),
    ));
    let mut config = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("ring supports the default TLS versions")
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .expect("rustls accepts the generated certificate");
    // HTTP/1.1 only: the proxy serves http1, and a client offered h2 would not get it anyway.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    (TlsAcceptor::from(Arc::new(config)), certified.cert.pem())
}
