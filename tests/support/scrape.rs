//! Plain HTTP GETs against `k3sdoctor serve`'s endpoints, as Prometheus and the kubelet's
//! probes make them.

use std::net::SocketAddr;
use std::time::Duration;

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

/// One GET: the status and the body, or `None` when nothing answered within 10 s.
pub fn get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime for the scrape");
    runtime.block_on(async {
        let client = Client::builder(TokioExecutor::new()).build_http::<Empty<Bytes>>();
        let uri: hyper::Uri = format!("http://{addr}{path}").parse().ok()?;
        let answer = async {
            let response = client.get(uri).await.ok()?;
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

/// The value of one sample (`name{labels}` exactly as exposed, or a bare name) in a scrape.
pub fn sample(metrics: &str, series: &str) -> Option<f64> {
    metrics.lines().find_map(|line| {
        let (name, value) = line.rsplit_once(' ')?;
        (name == series).then(|| value.parse().ok())?
    })
}
