//! Which of the certificates the handshakes captured are the cluster's. Whatever answers at a
//! server's address is not necessarily that server: an intercepting proxy on the way, or
//! another cluster's apiserver at a reused address, presents its own certificate, and judging
//! that one's expiry would raise findings about a server that is fine. So every chain is
//! verified against the cluster's CA: the one the kubeconfig trusts (what kubectl verifies the
//! requests with), and, when that is absent or does not vouch for a chain, the CA the cluster
//! publishes in `kube-system/kube-root-ca.crt` (read only then: one GET, usually none).

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::Api;

use super::Trace;
use super::connection_certificates::ConnectionCertificates;
use crate::distro::LOCK_NAMESPACE;
use crate::input::ReadError;
use crate::input::connect::Connection;
use crate::model::certificate::CertificateFacts;
use crate::model::certificate_chain::{ChainTrust, chains_to};

/// The ConfigMap kube-controller-manager publishes the cluster's CA in, in every namespace.
pub(super) const ROOT_CA_CONFIGMAP: &str = "kube-root-ca.crt";
const ROOT_CA_KEY: &str = "ca.crt";

/// Gives every captured chain its verdict, and says at `-v` what each address presented.
pub(super) async fn verify_chains(
    conn: &Connection,
    certs: &mut ConnectionCertificates,
    trace: Trace<'_>,
) {
    // Behind Rancher the address presents Rancher's own certificate, which the finding names
    // as Rancher's: it is not the cluster's to verify.
    let own_chain = (certs.presented_by.is_none() && certs.serving.is_ok())
        .then(|| certs.serving_chain.clone());
    let mut pending: Vec<&[Vec<u8>]> = own_chain.iter().map(Vec::as_slice).collect();
    if let Ok(servers) = &certs.servers {
        pending.extend(
            servers
                .iter()
                .filter(|s| s.serving.is_ok())
                .map(|s| s.chain.as_slice()),
        );
    }
    let kubeconfig_ca = conn.cluster_ca.clone().unwrap_or_default();
    let ask_the_cluster = kubeconfig_ca.is_empty()
        || pending
            .iter()
            .any(|chain| chains_to(chain, &kubeconfig_ca).is_err());
    let mut roots = kubeconfig_ca;
    let mut unread = None;
    if !pending.is_empty() && ask_the_cluster {
        match read_root_ca(conn, trace).await {
            Ok(published) => roots.extend(published),
            Err(why) => unread = Some(why),
        }
    }
    let verdict = |chain: &[Vec<u8>]| match (roots.is_empty(), &unread) {
        (true, why) => ChainTrust::Unverified(format!(
            "the kubeconfig names no CA of its own, and {}",
            why.as_deref()
                .unwrap_or("the cluster publishes none in kube-system/kube-root-ca.crt")
        )),
        (false, _) => match chains_to(chain, &roots) {
            Ok(()) => ChainTrust::Cluster,
            Err(why) => ChainTrust::Foreign(why),
        },
    };
    if let Some(chain) = &own_chain {
        certs.serving_trust = verdict(chain);
    }
    let connected = &certs.server;
    match (&certs.serving, &certs.presented_by) {
        (Ok(cert), None) => trace(&said(connected, cert, &certs.serving_trust)),
        (Ok(cert), Some(who)) => trace(&format!(
            "TLS handshake with {connected}: {who} presents {} (issued by {})",
            cert.subject, cert.issuer
        )),
        (Err(why), _) => trace(&format!("TLS handshake with {connected}: {why}")),
    }
    if let Ok(servers) = &mut certs.servers {
        for server in servers.iter_mut() {
            match &server.serving {
                Ok(cert) => {
                    server.trust = verdict(&server.chain);
                    trace(&said(&server.shown(), cert, &server.trust));
                }
                Err(why) => trace(&format!("TLS handshake with {}: {why}", server.shown())),
            }
        }
    }
}

/// `TLS handshake with 10.0.0.2:6443 (Node b): CN=k3s (issued by CN=k3s-server-ca@…); chains to
/// the cluster's CA`.
fn said(at: &str, cert: &CertificateFacts, trust: &ChainTrust) -> String {
    let verdict = match trust {
        ChainTrust::Cluster => "chains to the cluster's CA".to_string(),
        ChainTrust::Foreign(why) => format!("not this cluster's server: {why}"),
        ChainTrust::Unverified(why) => format!("chain not verified: {why}"),
    };
    format!(
        "TLS handshake with {at}: {} (issued by {}); {verdict}",
        cert.subject, cert.issuer
    )
}

/// The CA certificates (DER) of `kube-system/kube-root-ca.crt`, or why not.
async fn read_root_ca(conn: &Connection, trace: Trace<'_>) -> Result<Vec<Vec<u8>>, String> {
    let api: Api<ConfigMap> = Api::namespaced(conn.client.clone(), LOCK_NAMESPACE);
    let action = format!("get configmap {LOCK_NAMESPACE}/{ROOT_CA_CONFIGMAP}");
    let _in_flight = conn.activity.begin(&action);
    let found = match api.get_opt(ROOT_CA_CONFIGMAP).await {
        Ok(found) => found,
        Err(e) => {
            let e = ReadError::from_kube(&e, &action, &conn.server);
            trace(&e.message);
            return Err(e.message);
        }
    };
    let pem_text = found
        .as_ref()
        .and_then(|cm| cm.data.as_ref())
        .and_then(|data| data.get(ROOT_CA_KEY));
    let roots = pem_text.map(|text| root_certificates(text.as_bytes()));
    let why_none = match (&found, &roots) {
        (None, _) => Some(format!("{action}: not found")),
        (Some(_), Some(roots)) if !roots.is_empty() => None,
        (Some(_), _) => Some(format!("{action}: its {ROOT_CA_KEY} holds no certificate")),
    };
    match why_none {
        Some(why) => {
            trace(&why);
            Err(why)
        }
        None => {
            let roots = roots.unwrap_or_default();
            trace(&format!("{action}: {} CA certificate(s)", roots.len()));
            Ok(roots)
        }
    }
}

/// The DER of every `CERTIFICATE` block of a PEM bundle; nothing for text that is not PEM.
fn root_certificates(pem_text: &[u8]) -> Vec<Vec<u8>> {
    pem::parse_many(pem_text)
        .unwrap_or_default()
        .into_iter()
        .filter(|block| block.tag() == "CERTIFICATE")
        .map(pem::Pem::into_contents)
        .collect()
}
