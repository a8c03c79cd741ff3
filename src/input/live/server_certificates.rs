//! The serving certificate of every server, read from a handshake with each apiserver
//! address the cluster publishes (the `kubernetes` Endpoints) and each control-plane Node's
//! address: what a client that reaches that server sees. An address that does not answer
//! within a short limit is a note (k3sdoctor may run outside the servers' network), never a
//! finding and never a failed run. A certificate that does not chain to the cluster's CA is
//! not that server's (`chain_trust.rs`): it is a note, never judged.

use std::time::Duration;

use super::serving_cert::read_serving_certificate;
use crate::input::connect::Connection;
use crate::input::connect::rancher_proxy::proxy_url;
use crate::model::certificate_chain::ChainTrust;
use crate::model::node::NodeFacts;

/// On the servers' network a handshake takes milliseconds; from elsewhere a private address
/// may swallow the SYN, and this bounds what that costs `check` (the handshakes run beside
/// the lists, all at once).
const SERVER_HANDSHAKE_LIMIT: Duration = Duration::from_secs(2);
/// kube-apiserver's port on k3s and RKE2 when nothing publishes one.
const DEFAULT_PORT: i32 = 6443;
/// Connections to the servers under way at once (handshakes and metrics reads together):
/// `--parallel`'s default, which a fleet uses for its clusters (one cluster's `check` takes no
/// `--parallel`).
pub(crate) const MOST_HANDSHAKES_AT_ONCE: usize = 16;

pub(crate) use crate::model::served_certificates::{NOT_YET_VERIFIED, ServerCertificate};

/// The addresses to read, with the Node each belongs to: every server address (see
/// [`server_addresses`]) but the one the requests go to: the connection reads it already.
pub(crate) fn handshake_targets<'a>(
    nodes: &[NodeFacts],
    published: impl Iterator<Item = (&'a str, Option<i32>)>,
    connected: &str,
) -> Vec<(String, Option<String>)> {
    let mut targets = server_addresses(nodes, published);
    let connected = connected_address(connected);
    targets.retain(|(address, _)| Some(address) != connected.as_ref());
    targets
}

/// The address the connection dials, spelled as [`server_addresses`] spells them.
pub(crate) fn connected_address(server: &str) -> Option<String> {
    let uri: http::Uri = server.parse().ok()?;
    let default_port = if uri.scheme_str() == Some("http") {
        80
    } else {
        443
    };
    let host = uri.host()?.trim_start_matches('[').trim_end_matches(']');
    Some(dial_address(
        host,
        i32::from(uri.port_u16().unwrap_or(default_port)),
    ))
}

/// Every server's address, with the Node it belongs to: every published address, then each
/// control-plane Node none of whose addresses is published (at the published port).
pub(crate) fn server_addresses<'a>(
    nodes: &[NodeFacts],
    published: impl Iterator<Item = (&'a str, Option<i32>)>,
) -> Vec<(String, Option<String>)> {
    let published: Vec<(&str, Option<i32>)> = published.collect();
    let port = published
        .iter()
        .find_map(|(_, port)| *port)
        .unwrap_or(DEFAULT_PORT);
    let owner = |ip: &str| {
        nodes
            .iter()
            .find(|n| n.addresses.iter().any(|a| a == ip))
            .map(|n| n.name.clone())
    };
    let mut targets: Vec<(String, Option<String>)> = Vec::new();
    let mut add = |ip: &str, port: i32| {
        let address = dial_address(ip, port);
        if !targets.iter().any(|(a, _)| *a == address) {
            targets.push((address, owner(ip)));
        }
    };
    for (ip, own_port) in &published {
        add(ip, own_port.unwrap_or(port));
    }
    for node in nodes.iter().filter(|n| n.runs_control_plane()) {
        let listed = node
            .addresses
            .iter()
            .any(|a| published.iter().any(|(ip, _)| ip == a));
        if let (false, Some(ip)) = (listed, node.addresses.first()) {
            add(ip, port);
        }
    }
    targets
}

fn dial_address(ip: &str, port: i32) -> String {
    if ip.contains(':') {
        format!("[{ip}]:{port}")
    } else {
        format!("{ip}:{port}")
    }
}

/// Each target's certificate, all at once; `Err` with the reason when the connection goes
/// through a proxy (HTTP, or Rancher's): k3sdoctor is then not on the servers' network and
/// their addresses mean nothing from here.
pub(crate) async fn read_server_certificates(
    conn: &Connection,
    targets: Vec<(String, Option<String>)>,
    dials: &tokio::sync::Semaphore,
) -> Result<Vec<ServerCertificate>, String> {
    if let Some(proxy) = &conn.proxy {
        return Err(format!("the requests go through the proxy {proxy}"));
    }
    if let Some((rancher, _)) = proxy_url(&conn.server) {
        return Err(format!("the requests go through Rancher at {rancher}"));
    }
    let limit = conn
        .read_timeout
        .map_or(SERVER_HANDSHAKE_LIMIT, |t| t.min(SERVER_HANDSHAKE_LIMIT));
    let reads = targets.into_iter().map(|(address, node)| async move {
        let read = async {
            let _dial = dials.acquire().await;
            read_serving_certificate(&format!("https://{address}"), limit).await
        };
        let read = read.await;
        let (serving, chain) = match read {
            Ok(presented) => (Ok(presented.facts), presented.chain),
            Err(why) => (Err(why), Vec::new()),
        };
        ServerCertificate {
            address,
            node,
            serving,
            chain,
            trust: ChainTrust::Unverified(NOT_YET_VERIFIED.into()),
        }
    });
    // A cluster can publish thousands of addresses; past the open-file limit every handshake
    // would fail, so they are dialled a bounded number at a time, in order.
    use futures::StreamExt;
    Ok(futures::stream::iter(reads)
        .buffered(MOST_HANDSHAKES_AT_ONCE)
        .collect()
        .await)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, ip: &str, server: bool) -> NodeFacts {
        let role = if server {
            serde_json::json!({"node-role.kubernetes.io/control-plane": "true"})
        } else {
            serde_json::json!({})
        };
        let node: k8s_openapi::api::core::v1::Node = serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "labels": role},
            "status": {"addresses": [{"type": "InternalIP", "address": ip}]}
        }))
        .unwrap();
        NodeFacts::from_api(&node)
    }

    #[test]
    fn published_addresses_come_first_and_unpublished_servers_are_added() {
        let nodes = [
            node("a", "10.0.0.1", true),
            node("b", "10.0.0.2", true),
            node("c", "10.0.0.3", true),
            node("agent", "10.0.0.9", false),
        ];
        let published = [("10.0.0.1", Some(6443)), ("10.0.0.2", Some(6443))];
        let targets = handshake_targets(&nodes, published.iter().copied(), "https://10.0.0.1:6443");
        assert_eq!(
            targets,
            [
                ("10.0.0.2:6443".to_string(), Some("b".to_string())),
                ("10.0.0.3:6443".to_string(), Some("c".to_string())),
            ]
        );
    }

    #[test]
    fn a_published_address_no_node_reports_is_read_too_and_v6_is_bracketed() {
        let published = [("fd00::1", Some(7443)), ("10.0.0.5", None)];
        let targets = handshake_targets(&[], published.iter().copied(), "https://lb.example");
        assert_eq!(
            targets,
            [
                ("[fd00::1]:7443".to_string(), None),
                ("10.0.0.5:7443".to_string(), None)
            ]
        );
    }
}
