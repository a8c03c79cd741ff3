//! Plain HTTP GETs against `k3sdoctor serve`'s endpoints, as Prometheus and the kubelet's
//! probes make them.

use std::net::SocketAddr;
use std::time::Duration;

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use super::harness::{Run, Streaming};

/// A client that keeps its connection open between GETs, as Prometheus does between scrapes.
pub(crate) struct Scraper {
    runtime: tokio::runtime::Runtime,
    client: Client<HttpConnector, Empty<Bytes>>,
}

impl Scraper {
    pub(crate) fn new() -> Scraper {
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
    pub(crate) fn get(&self, addr: SocketAddr, path: &str) -> Option<(u16, String)> {
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

/// The address `serve` logs when it starts listening (text or JSON log line).
pub(crate) fn served_address(log_line: &str) -> Option<SocketAddr> {
    let (_, rest) = log_line.split_once("on http://")?;
    rest.split([' ', '"']).next()?.parse().ok()
}

/// Starts `serve` (the run's arguments plus `--listen 127.0.0.1:0`); returns it with the
/// address it logged.
pub(crate) fn start_serve(run: Run) -> (Streaming, SocketAddr) {
    let mut serve = run.args(&["--listen", "127.0.0.1:0"]).spawn().stream();
    let line = serve
        .stderr_line_matching(Duration::from_secs(60), |l| l.contains("serving /metrics"))
        .expect("serve logs the address it listens on");
    let address = served_address(&line).unwrap_or_else(|| panic!("no address in {line}"));
    (serve, address)
}

/// A scrape of `/metrics`, which must answer 200.
pub(crate) fn metrics(address: SocketAddr) -> String {
    let (status, body) = get(address, "/metrics").expect("/metrics answers");
    assert_eq!(status, 200, "{body}");
    body
}

/// Waits up to `limit` until `series` has `value` in a scrape; panics with the last scrape
/// otherwise.
pub(crate) fn wait_for_sample(address: SocketAddr, series: &str, value: f64, limit: Duration) {
    let mut last = String::new();
    let seen = super::wait::wait_for(limit, || {
        last = metrics(address);
        sample(&last, series) == Some(value)
    });
    assert!(seen, "{series} never became {value}; last scrape:\n{last}");
}

/// One GET on a connection of its own.
pub(crate) fn get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
    Scraper::new().get(addr, path)
}

/// The value of one sample (`name{labels}` exactly as exposed, or a bare name) in a scrape.
pub(crate) fn sample(metrics: &str, series: &str) -> Option<f64> {
    metrics.lines().find_map(|line| {
        let (name, value) = line.rsplit_once(' ')?;
        (name == series).then(|| value.parse().ok())?
    })
}
