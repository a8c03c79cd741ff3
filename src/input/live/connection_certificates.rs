//! The certificates a live connection shows: the client certificate the kubeconfig
//! authenticates with, and the serving certificate of the address the requests go to (read
//! from a handshake of our own). Both expire, and nothing else in the cluster says when.

use std::time::{Duration, Instant};

use super::server_certificates::NOT_YET_VERIFIED;
use super::serving_cert::{Presented, read_serving_certificate};
use crate::input::connect::Connection;
use crate::input::connect::rancher_proxy::proxy_url;
use crate::model::certificate::CertificateFacts;
use crate::model::certificate_chain::ChainTrust;

/// The handshake is one round trip; a server that takes longer is judged elsewhere.
const HANDSHAKE_LIMIT: Duration = Duration::from_secs(10);
/// How long a shared reading stands for all who share it: a round of `serve`'s fleet reads
/// it again, a renewed certificate is seen.
const SHARED_FOR: Duration = Duration::from_secs(60);

/// One reading of a serving certificate for every connection to the same host: the clusters
/// behind one Rancher are all served Rancher's certificate, read once instead of once each.
#[derive(Default)]
pub(crate) struct SharedServing {
    last: tokio::sync::Mutex<Option<(Instant, Result<Presented, String>)>>,
}

impl SharedServing {
    async fn read(&self, server: &str, limit: Duration) -> Result<Presented, String> {
        // Held while reading: the others wait for this one reading.
        let mut last = self.last.lock().await;
        if let Some((at, presented)) = last.as_ref()
            && at.elapsed() < SHARED_FOR
        {
            return presented.clone();
        }
        let presented = read_serving_certificate(server, limit).await;
        *last = Some((Instant::now(), presented.clone()));
        presented
    }
}

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
                Some(shared) => shared.read(&conn.server, limit).await,
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
