//! The certificates a live connection shows: the client certificate the kubeconfig
//! authenticates with, and the serving certificate of the address the requests go to (read
//! from a handshake of our own). Both expire, and nothing else in the cluster says when.

use std::time::Duration;

use super::server_certificates::NOT_YET_VERIFIED;
use super::serving_cert::read_serving_certificate;
use crate::input::connect::Connection;
use crate::input::connect::rancher_proxy::proxy_url;
use crate::model::certificate::CertificateFacts;
use crate::model::certificate_chain::ChainTrust;

/// The handshake is one round trip; a server that takes longer is judged elsewhere.
const HANDSHAKE_LIMIT: Duration = Duration::from_secs(10);

pub(crate) use crate::model::served_certificates::ConnectionCertificates;

pub(crate) async fn read_connection_certificates(conn: &Connection) -> ConnectionCertificates {
    let client = conn
        .client_certificate
        .as_deref()
        .map(CertificateFacts::from_pem);
    let serving = match &conn.proxy {
        // The requests reach the server through the proxy; a handshake of our own would not.
        Some(proxy) => Err(format!("the requests go through the proxy {proxy}")),
        None => {
            let limit = conn
                .read_timeout
                .map_or(HANDSHAKE_LIMIT, |t| t.min(HANDSHAKE_LIMIT));
            match &conn.serving_certificate {
                Some(shared) => {
                    shared
                        .read_with(read_serving_certificate(&conn.server, limit))
                        .await
                }
                None => read_serving_certificate(&conn.server, limit).await,
            }
        }
    };
    let (serving, serving_chain) = match serving {
        Ok(presented) => (Ok(presented.facts), presented.chain),
        Err(why) => (Err(why), Vec::new()),
    };
    let presented_by = proxy_url(&conn.server).map(|(rancher, _)| format!("Rancher at {rancher}"));
    ConnectionCertificates {
        server: conn.server.clone(),
        client,
        serving,
        serving_chain,
        serving_trust: ChainTrust::Unverified(NOT_YET_VERIFIED.into()),
        presented_by,
        servers: Ok(Vec::new()),
    }
}
