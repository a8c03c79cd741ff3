//! What k3sdoctor reads of an X.509 certificate: whom it names, until when it is valid, and
//! the names it is valid for. Parsed from DER or PEM; nothing here verifies trust.

use jiff::Timestamp;
use serde::Serialize;
use x509_parser::extensions::GeneralName;
use x509_parser::prelude::{FromDer, X509Certificate};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CertificateFacts {
    pub subject: String,
    pub issuer: String,
    pub not_before: Option<Timestamp>,
    pub not_after: Option<Timestamp>,
    /// DNS names and IP addresses of the subjectAltName extension.
    pub names: Vec<String>,
}

impl CertificateFacts {
    pub(crate) fn from_der(der: &[u8]) -> Result<CertificateFacts, String> {
        let (_, cert) =
            X509Certificate::from_der(der).map_err(|e| format!("not an X.509 certificate: {e}"))?;
        let time = |t: x509_parser::time::ASN1Time| Timestamp::from_second(t.timestamp()).ok();
        let mut names = Vec::new();
        if let Ok(Some(san)) = cert.subject_alternative_name() {
            for name in &san.value.general_names {
                match name {
                    GeneralName::DNSName(dns) => names.push(dns.to_string()),
                    GeneralName::IPAddress(bytes) => names.extend(ip_text(bytes)),
                    _ => {}
                }
            }
        }
        Ok(CertificateFacts {
            subject: cert.subject().to_string(),
            issuer: cert.issuer().to_string(),
            not_before: time(cert.validity().not_before),
            not_after: time(cert.validity().not_after),
            names,
        })
    }

    /// The first `CERTIFICATE` block of PEM text (a kubeconfig's client-certificate-data).
    pub(crate) fn from_pem(pem_text: &[u8]) -> Result<CertificateFacts, String> {
        let blocks = pem::parse_many(pem_text).map_err(|e| format!("not PEM: {e}"))?;
        let cert = blocks
            .iter()
            .find(|b| b.tag() == "CERTIFICATE")
            .ok_or("no CERTIFICATE block")?;
        CertificateFacts::from_der(cert.contents())
    }
}

fn ip_text(bytes: &[u8]) -> Option<String> {
    match bytes.len() {
        4 => Some(std::net::Ipv4Addr::new(bytes[0], bytes[1], bytes[2], bytes[3]).to_string()),
        16 => {
            let octets: [u8; 16] = bytes.try_into().ok()?;
            Some(std::net::Ipv6Addr::from(octets).to_string())
        }
        _ => None,
    }
}
