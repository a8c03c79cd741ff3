//! Each server's datastore metrics, live: `GET /metrics` from every server's apiserver at its
//! own address (with the connection's credentials and trust, as `kubectl get --raw /metrics
//! --server https://<ip>:6443` would), and etcd's `http://<ip>:2381/metrics` on each etcd
//! member (only there with `--etcd-expose-metrics`). The answers are read as they arrive,
//! keeping only the datastore's series, all servers at once. A server that cannot be read is
//! named with the reason; it is never taken as healthy.

use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http_body_util::BodyExt;

use super::server_certificates::{MOST_HANDSHAKES_AT_ONCE, connected_address, server_addresses};
use super::{Connection, ReadError};
use crate::input::connect::rancher_proxy::proxy_url;
use crate::input::metrics::scrape_reader::{AnswerSink, ScrapeReader};
use crate::model::node::NodeFacts;
use crate::model::server_metrics::{ServerMetrics, ServerRead};

/// How long one server's answer may take: an apiserver renders its metrics in well under a
/// second.
const METRICS_LIMIT: Duration = Duration::from_secs(5);
/// How long a connection may take: from outside the servers' network an address may swallow
/// the SYN, and this is what that costs, beside the certificate handshakes' same bound.
const CONNECT_LIMIT: Duration = Duration::from_secs(2);
/// etcd's metrics listener (`--listen-metrics-urls`), on k3s and RKE2 alike.
const ETCD_METRICS_PORT: u16 = 2381;

/// Every server's metrics. Through a proxy or Rancher the servers' own addresses mean nothing
/// from here: the server behind the connection is read alone, and no etcd.
pub(crate) async fn read_server_metrics(
    conn: &Connection,
    nodes: &[NodeFacts],
    published: &[(&str, Option<i32>)],
    dials: &tokio::sync::Semaphore,
) -> Vec<ServerMetrics> {
    read_servers::<ScrapeReader>(conn, nodes, published, dials).await
}

/// Every server's answers as the sink `S` takes them: their series for `check`, their text
/// for a dump.
pub(crate) async fn read_servers<S: AnswerSink>(
    conn: &Connection,
    nodes: &[NodeFacts],
    published: &[(&str, Option<i32>)],
    dials: &tokio::sync::Semaphore,
) -> Vec<ServerRead<S::Out>> {
    let behind_proxy = conn.proxy.is_some() || proxy_url(&conn.server).is_some();
    let through_connection = async {
        ServerRead {
            node: None,
            from: conn.server.clone(),
            apiserver: apiserver_metrics::<S>(&conn.client, &conn.server).await,
            etcd: None,
        }
    };
    if behind_proxy {
        return vec![through_connection.await];
    }
    let connected = connected_address(&conn.server);
    let addresses = server_addresses(nodes, published.iter().copied());
    // The connection's address is one of the servers' own: it is read as that server, on
    // the connection's client, and nothing is read behind it.
    let covers_connection = addresses.iter().any(|(a, _)| Some(a) == connected.as_ref());
    let direct = addresses.into_iter().map(|(address, node)| {
        let is_connected = Some(&address) == connected.as_ref();
        let member = node
            .as_deref()
            .and_then(|name| nodes.iter().find(|n| n.name == name))
            .filter(|n| n.is_etcd_member());
        async move {
            let _dial = dials.acquire().await;
            let url = format!("https://{address}");
            let apiserver = async {
                if is_connected {
                    return apiserver_metrics::<S>(&conn.client, &url).await;
                }
                match conn.peers.at(&address, CONNECT_LIMIT, METRICS_LIMIT) {
                    Ok(client) => apiserver_metrics::<S>(&client, &url).await,
                    Err(why) => Err(why),
                }
            };
            let etcd = async {
                let ip = member.and_then(etcd_address)?;
                Some(etcd_metrics::<S>(ip).await)
            };
            let (apiserver, etcd) = tokio::join!(apiserver, etcd);
            ServerRead {
                node,
                from: address,
                apiserver,
                etcd,
            }
        }
    });
    let (mut reads, fallback) = tokio::join!(
        futures::stream::iter(direct)
            .buffered(MOST_HANDSHAKES_AT_ONCE)
            .collect::<Vec<_>>(),
        async {
            if covers_connection {
                None
            } else {
                Some(through_connection.await)
            }
        }
    );
    // A load balancer's address reads one server or another: kept only when no server
    // could be read at its own address.
    if let Some(fallback) = fallback
        && !reads.iter().any(|r| r.apiserver.is_ok())
    {
        reads.insert(0, fallback);
    }
    reads
}

/// Where the member's etcd listens: the address k3s records for it
/// (`etcd.<prog>.cattle.io/node-address`), else the Node's first.
fn etcd_address(node: &NodeFacts) -> Option<&str> {
    node.annotations
        .iter()
        .find(|(key, _)| key.starts_with("etcd.") && key.ends_with(".cattle.io/node-address"))
        .map(|(_, address)| address.as_str())
        .or_else(|| node.addresses.first().map(String::as_str))
}

async fn apiserver_metrics<S: AnswerSink>(
    client: &kube::Client,
    url: &str,
) -> Result<S::Out, String> {
    let request = http::Request::get("/metrics")
        .body(kube::client::Body::empty())
        .map_err(|e| e.to_string())?;
    let read = async {
        // kube's error said as every read says it (refused, TLS, timeout), capped: a foreign
        // server's certificate can list any number of names.
        let response = client.send(request).await.map_err(|e| {
            let said = ReadError::from_kube(&e, "get /metrics", url).message;
            crate::line_cap::cap_at(&said, 300).into_owned()
        })?;
        answer::<S, _>(response, url).await
    };
    tokio::time::timeout(METRICS_LIMIT, read)
        .await
        .unwrap_or_else(|_| {
            Err(format!(
                "{url}/metrics did not answer within {} s",
                METRICS_LIMIT.as_secs()
            ))
        })
}

async fn etcd_metrics<S: AnswerSink>(ip: &str) -> Result<S::Out, String> {
    let address = if ip.contains(':') {
        format!("[{ip}]:{ETCD_METRICS_PORT}")
    } else {
        format!("{ip}:{ETCD_METRICS_PORT}")
    };
    let url = format!("http://{address}");
    let read = async {
        let not_exposed = |why: String| {
            format!(
                "etcd's metrics at {url} are not exposed here ({why}; k3s and RKE2 serve them with \
                 --etcd-expose-metrics)"
            )
        };
        let stream = tokio::time::timeout(CONNECT_LIMIT, tokio::net::TcpStream::connect(&address))
            .await
            .map_err(|_| not_exposed(format!("no answer within {} s", CONNECT_LIMIT.as_secs())))?
            .map_err(|e| not_exposed(e.to_string()))?;
        let io = hyper_util::rt::TokioIo::new(stream);
        let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
            .await
            .map_err(|e| format!("{url}/metrics: {e}"))?;
        let driver = tokio::spawn(connection);
        let request = http::Request::get("/metrics")
            .header(http::header::HOST, &address)
            .body(http_body_util::Empty::<Bytes>::new())
            .map_err(|e| e.to_string())?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| format!("{url}/metrics: {e}"))?;
        let scrape = answer::<S, _>(response, &url).await;
        driver.abort();
        scrape
    };
    tokio::time::timeout(METRICS_LIMIT, read)
        .await
        .unwrap_or_else(|_| {
            Err(format!(
                "etcd's metrics at {url} did not answer within {} s",
                METRICS_LIMIT.as_secs()
            ))
        })
}

/// The answer's datastore series, read frame by frame; a refusal names the role to add.
async fn answer<S: AnswerSink, B>(response: http::Response<B>, url: &str) -> Result<S::Out, String>
where
    B: hyper::body::Body<Data = Bytes>,
    B::Error: std::fmt::Display,
{
    match response.status().as_u16() {
        200 => {}
        401 | 403 => {
            return Err(format!(
                "{url}/metrics was refused (HTTP {}): the role needs get on the /metrics nonResourceURL (k3sdoctor \
                 rbac read-only)",
                response.status().as_u16()
            ));
        }
        code => return Err(format!("{url}/metrics answered HTTP {code}")),
    }
    let mut body = std::pin::pin!(response.into_body());
    let mut reader = S::default();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| format!("{url}/metrics broke off: {e}"))?;
        if let Some(data) = frame.data_ref() {
            reader
                .feed(data)
                .map_err(|e| format!("{url}/metrics: {e}"))?;
        }
    }
    reader.finish().map_err(|e| format!("{url}/metrics: {e}"))
}
