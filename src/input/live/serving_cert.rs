//! The certificate the API server presents, read from a TLS handshake of our own with the
//! address the requests go to: what a client sees, with no Secret permission. The handshake
//! accepts anything on purpose — it only reads the chain and sends no request; whether the
//! chain is the cluster's is judged afterwards against the cluster's CA
//! (`model::certificate_chain`), and the requests themselves verify as kubectl does.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_rustls::rustls;
use tokio_rustls::rustls::client::danger::{
    HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier,
};
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use tokio_rustls::rustls::{DigitallySignedStruct, SignatureScheme};

use crate::model::certificate::CertificateFacts;

/// Keeps the chain the server sent (end entity first), and accepts it: nothing is sent over
/// this connection but the handshake.
#[derive(Debug)]
struct Capture {
    seen: Mutex<Option<Vec<Vec<u8>>>>,
    provider: Arc<rustls::crypto::CryptoProvider>,
}

impl ServerCertVerifier for Capture {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let chain = std::iter::once(end_entity)
            .chain(intermediates)
            .map(|c| c.to_vec())
            .collect();
        *self.seen.lock().unwrap_or_else(|p| p.into_inner()) = Some(chain);
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// `https://host[:port][/path]` → (host, port).
pub(super) fn host_port(server: &str) -> Result<(String, u16), String> {
    let uri: http::Uri = server
        .parse()
        .map_err(|_| format!("{server} is not a URL"))?;
    if uri.scheme_str() != Some("https") {
        return Err(format!("{server} is not https"));
    }
    let host = uri
        .host()
        .ok_or_else(|| format!("{server} names no host"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    Ok((host.to_string(), uri.port_u16().unwrap_or(443)))
}

pub(crate) use crate::model::served_certificates::Presented;

/// The certificate `server` presents, within `limit`; why not, in one line.
pub(super) async fn read_serving_certificate(
    server: &str,
    limit: Duration,
) -> Result<Presented, String> {
    let (host, port) = host_port(server)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let capture = Arc::new(Capture {
        seen: Mutex::new(None),
        provider: provider.clone(),
    });
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(capture.clone())
        .with_no_client_auth();
    let name = ServerName::try_from(host.clone())
        .map_err(|_| format!("{host} is not a name TLS can ask for"))?;
    let handshake = async {
        let stream = tokio::net::TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|e| format!("cannot connect to {host}:{port}: {e}"))?;
        tokio_rustls::TlsConnector::from(Arc::new(config))
            .connect(name, stream)
            .await
            .map_err(|e| format!("TLS handshake with {host}:{port} failed: {e}"))
    };
    let _session = tokio::time::timeout(limit, handshake).await.map_err(|_| {
        format!(
            "no TLS handshake with {host}:{port} within {} s",
            limit.as_secs()
        )
    })??;
    let chain = capture
        .seen
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
        .filter(|chain| !chain.is_empty())
        .ok_or_else(|| format!("{host}:{port} presented no certificate"))?;
    Ok(Presented {
        facts: CertificateFacts::from_der(&chain[0])?,
        chain,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_address_comes_from_the_server_url() {
        assert_eq!(
            host_port("https://10.0.0.1:6443").unwrap(),
            ("10.0.0.1".to_string(), 6443)
        );
        assert_eq!(
            host_port("https://rancher.example.com/k8s/clusters/c-m-1").unwrap(),
            ("rancher.example.com".to_string(), 443)
        );
        assert_eq!(
            host_port("https://[::1]:6443").unwrap(),
            ("::1".to_string(), 6443)
        );
        assert!(host_port("http://127.0.0.1:8080").is_err());
    }
}
