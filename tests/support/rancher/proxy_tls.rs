//! The Rancher proxy's serving certificate: self-signed for 127.0.0.1 and localhost, so the
//! kubeconfigs it writes embed it as their CA, as a Rancher with a private CA does; and the
//! trust it dials each backend with.

use std::sync::Arc;

use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::{ClientConfig, RootCertStore, ServerConfig};
use tokio_rustls::{TlsAcceptor, TlsConnector};

use super::proxy::{Backend, Upstream};

/// The acceptor, offering `protocols` by ALPN, and the certificate (PEM) clients must trust.
pub(super) fn self_signed(protocols: &[&[u8]]) -> (TlsAcceptor, String) {
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
    config.alpn_protocols = protocols.iter().map(|p| p.to_vec()).collect();
    (TlsAcceptor::from(Arc::new(config)), certified.cert.pem())
}

/// How the proxy dials `backend`: its address, trusting its CA.
pub(super) fn upstream(backend: &Backend) -> Upstream {
    let authority = backend
        .server
        .trim_start_matches("https://")
        .trim_end_matches('/')
        .to_string();
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(backend.ca_pem.as_bytes()) {
        roots
            .add(cert.expect("a PEM certificate"))
            .expect("a CA rustls accepts");
    }
    let config = ClientConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("ring supports the default TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    Upstream {
        address: authority.parse().expect("a 127.0.0.1:PORT backend"),
        authority,
        connector: TlsConnector::from(Arc::new(config)),
        tokens: backend.tokens.clone(),
        idle: Default::default(),
    }
}
