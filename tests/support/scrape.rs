//! Plain HTTP GETs against `k3sdoctor serve`'s endpoints, as Prometheus and the kubelet's
//! probes make them.

use std::net::SocketAddr;
use std::time::Duration;

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

/// A client that keeps its connection open between GETs, as Prometheus does between scrapes.
pub struct Scraper {
    runtime: tokio::runtime::Runtime,
    client: Client<HttpConnector, Empty<Bytes>>,
}

impl Scraper {
    pub fn new() -> Scraper {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for the scrapes");
        let client = {
            let _entered = runtime.enter();
            Client::builder(TokioExecutor::new()).build_http()
        };
        Scraper { runtime, client }
    }

    /// One GET: the status and the body, or `None` when nothing answered within 10 s.
    pub fn get(&self, addr: SocketAddr, path: &str) -> Option<(u16, String)> {
        self.runtime.block_on(async {
            let uri: hyper::Uri = format!("http://{addr}{path}").parse().ok()?;
            let answer = async {
                let response = self.client.get(uri).await.ok()?;
                let status = response.status().as_u16();
                let body = response.into_body().collect().await.ok()?.to_bytes();
                Some((status, String::from_utf8_lossy(&body).into_owned()))
            };
            tokio::time::timeout(Duration::from_secs(10), answer)
                .await
                .ok()
                .flatten()
        })
    }
}

/// One GET on a connection of its own.
pub fn get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
    Scraper::new().get(addr, path)
}

/// The value of one sample (`name{labels}` exactly as exposed, or a bare name) in a scrape.
pub fn sample(metrics: &str, series: &str) -> Option<f64> {
    metrics.lines().find_map(|line| {
        let (name, value) = line.rsplit_once(' ')?;
        (name == series).then(|| value.parse().ok())?
    })
}
