//! A certificate authority for tests: the fake API server's CA (its kubeconfig trusts it), the
//! real bed's CA (read from its `pki/`), or one a test publishes as `kube-root-ca.crt`. The
//! loopback listeners that stand for servers present certificates it signs, as a k3s server
//! presents one its server CA signed; a listener that presents anything else stands for an
//! intercepting proxy.

use std::path::Path;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};

pub(crate) struct TestCa {
    /// The CA certificate, PEM: what a kubeconfig's certificate-authority-data carries.
    pub pem: String,
    issuer: Issuer<'static, KeyPair>,
}

impl TestCa {
    /// A fresh CA, valid from 2000 to 2100, named like k3s's server CA.
    pub(crate) fn generate() -> TestCa {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "k3s-server-ca@1700000000");
        params.not_before = rcgen::date_time_ymd(2000, 1, 1);
        params.not_after = rcgen::date_time_ymd(2100, 1, 1);
        let key = KeyPair::generate().expect("key pair");
        let pem = params.self_signed(&key).expect("self-signed CA").pem();
        TestCa {
            pem,
            issuer: Issuer::new(params, key),
        }
    }

    /// The real bed's CA: `pki/ca.crt` and `pki/ca.key` (an EC key openssl wrote as SEC1, turned
    /// into PKCS #8 for rcgen by openssl, which the bed needs anyway).
    pub(crate) fn from_pki(pki: &Path) -> TestCa {
        let pem = std::fs::read_to_string(pki.join("ca.crt")).expect("the bed's ca.crt");
        let out = std::process::Command::new("openssl")
            .args(["pkcs8", "-topk8", "-nocrypt", "-in"])
            .arg(pki.join("ca.key"))
            .output()
            .expect("openssl runs");
        assert!(out.status.success(), "openssl pkcs8 failed");
        let key = KeyPair::from_pem(&String::from_utf8(out.stdout).expect("PEM text"))
            .expect("the bed's CA key");
        // What the certificates it signs name as their issuer: the CA's common name, which
        // openssl writes as a UTF8String, as rcgen does.
        let der = pem::parse(&pem).expect("PEM CA certificate");
        let (_, cert) = x509_parser::parse_x509_certificate(der.contents()).expect("X.509 CA");
        let cn = cert
            .subject()
            .iter_common_name()
            .next()
            .and_then(|cn| cn.as_str().ok())
            .expect("the bed's CA has a common name")
            .to_string();
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name = rcgen::DistinguishedName::new();
        params.distinguished_name.push(DnType::CommonName, cn);
        TestCa {
            pem,
            issuer: Issuer::new(params, key),
        }
    }

    /// A serving certificate for `names` that this CA signed, valid from a minute ago (or a
    /// day before `until`, when that is earlier) until `until` (to the second), and its key:
    /// issued while the CA was valid, as k3s issues its certificates.
    pub(crate) fn sign(
        &self,
        names: &[&str],
        until: jiff::Timestamp,
    ) -> (rcgen::Certificate, KeyPair) {
        let mut params = params_until(names, until);
        let from = (jiff::Timestamp::now() - jiff::SignedDuration::from_secs(60))
            .min(until - jiff::SignedDuration::from_hours(24));
        params.not_before = rcgen::date_time_ymd(1970, 1, 1) + since_1970(from);
        let key = KeyPair::generate().expect("key pair");
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("signed certificate");
        (cert, key)
    }

    /// The ConfigMap `kube-system/kube-root-ca.crt` that publishes this CA, as
    /// kube-controller-manager publishes the cluster's.
    pub(crate) fn root_ca_configmap(&self) -> serde_json::Value {
        serde_json::json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "kube-root-ca.crt", "namespace": "kube-system"},
            "data": {"ca.crt": self.pem},
        })
    }
}

/// A self-signed certificate with common name `cn` for `names`, valid from 2000 until `until`:
/// what an intercepting proxy presents in a server's place.
pub(crate) fn foreign_certificate(
    cn: &str,
    names: &[&str],
    until: jiff::Timestamp,
) -> (rcgen::Certificate, KeyPair) {
    let mut params = params_until(names, until);
    params.distinguished_name.push(DnType::CommonName, cn);
    let key = KeyPair::generate().expect("key pair");
    let cert = params.self_signed(&key).expect("self-signed certificate");
    (cert, key)
}

fn params_until(names: &[&str], until: jiff::Timestamp) -> CertificateParams {
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let mut params = CertificateParams::new(names).expect("certificate names");
    params.not_before = rcgen::date_time_ymd(2000, 1, 1);
    params.not_after = rcgen::date_time_ymd(1970, 1, 1) + since_1970(until);
    params
}

fn since_1970(t: jiff::Timestamp) -> std::time::Duration {
    std::time::Duration::from_secs(u64::try_from(t.as_second()).expect("a time after 1970"))
}
