//! Each etcd member's size and quota, from the best reading there is: etcd's own metrics,
//! else the apiserver beside it (k3s and RKE2 point each apiserver at its own member on
//! 127.0.0.1:2379, so its size metric is that member's); the quota from etcd's quota metric,
//! else the server's `--etcd-arg quota-backend-bytes`, else etcd's default.

use crate::distro::Distro;
use crate::model::cluster_state::ClusterState;
use crate::model::node::NodeFacts;
use crate::model::server_metrics::{ServerMetrics, SizeGrowth};

/// etcd's `DefaultQuotaBytes`: what a member runs with when nothing sets a quota (upstream
/// k3s and RKE2 set none).
const QUOTA_KEY: &str = "quota-backend-bytes";

pub(super) const DEFAULT_QUOTA: f64 = 2.0 * 1024.0 * 1024.0 * 1024.0;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum QuotaFrom {
    /// `etcd_server_quota_backend_bytes`.
    Metric,
    NodeArgs,
    Default,
}

impl QuotaFrom {
    pub(super) fn says(self) -> &'static str {
        match self {
            QuotaFrom::Metric => "etcd's quota metric",
            QuotaFrom::NodeArgs => "the server's --etcd-arg quota-backend-bytes",
            QuotaFrom::Default => "etcd's default, as nothing sets one",
        }
    }
}

/// One member as the metrics show it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Member {
    /// `Node s1`, or the server behind the connection.
    pub name: String,
    pub node: Option<String>,
    /// Physical size, and the metric it came from.
    pub size: Option<(f64, &'static str)>,
    pub in_use: Option<f64>,
    /// `None`: a negative quota turns it off.
    pub quota: Option<(f64, QuotaFrom)>,
    /// The size's change between two reads (serve), of the scrape the size came from.
    pub growth: Option<SizeGrowth>,
}

impl Member {
    pub(super) fn used(&self) -> Option<(f64, f64, QuotaFrom)> {
        let (size, _) = self.size?;
        let (quota, from) = self.quota?;
        (quota > 0.0).then_some((size, quota, from))
    }
}

/// The quota a server's node-args set: the last `quota-backend-bytes` among its `--etcd-arg`
/// values (k3s splits each at the first `=` and strips leading dashes from the key).
/// `Some(None)`: set negative, no quota. `None`: not set, or node-args not read.
pub(super) fn quota_in_node_args(node: &NodeFacts, distro: Distro) -> Option<Option<f64>> {
    let args = node.node_args(distro)?.ok()?;
    let flags = &args.flags;
    let value = flags
        .iter()
        .enumerate()
        .filter(|(_, f)| f.name == "etcd-arg")
        .filter_map(|(at, f)| match f.value.as_deref() {
            Some(value) => value
                .split_once('=')
                .filter(|(key, _)| key.trim_start_matches('-') == QUOTA_KEY)
                .map(|(_, value)| value),
            // `--etcd-arg --quota-backend-bytes=N` reads as two flags, the value on the second.
            None => flags
                .get(at + 1)
                .filter(|next| next.name == QUOTA_KEY)
                .and_then(|next| next.value.as_deref()),
        })
        .map(str::trim)
        .next_back()?;
    let bytes: f64 = value.parse::<i64>().ok()? as f64;
    Some(match bytes {
        b if b < 0.0 => None,
        // 0 is etcd's default.
        0.0 => Some(DEFAULT_QUOTA),
        b => Some(b),
    })
}

fn quota_of(
    read: &ServerMetrics,
    node: Option<&NodeFacts>,
    distro: Distro,
) -> Option<(f64, QuotaFrom)> {
    if let Some(quota) = read.etcd().and_then(|e| e.etcd_quota_bytes) {
        return Some((quota, QuotaFrom::Metric));
    }
    match node.and_then(|n| quota_in_node_args(n, distro)) {
        Some(Some(bytes)) => Some((bytes, QuotaFrom::NodeArgs)),
        Some(None) => None,
        None => Some((DEFAULT_QUOTA, QuotaFrom::Default)),
    }
}

/// Every server read whose reading is an etcd member's: a server with a member (or any
/// server behind the connection, on embedded etcd).
pub(super) fn members(state: &ClusterState, distro: Distro) -> Vec<Member> {
    let reads = state
        .server_metrics
        .as_read()
        .map(Vec::as_slice)
        .unwrap_or_default();
    reads
        .iter()
        .filter_map(|read| {
            let node = read
                .node
                .as_deref()
                .and_then(|name| state.nodes().iter().find(|n| n.name == name));
            if node.is_some_and(|n| !n.is_etcd_member()) {
                return None;
            }
            let etcd = read.etcd();
            let (size, growth) = etcd
                .and_then(|e| {
                    let bytes = e.etcd_total_bytes?;
                    Some(((bytes, "etcd_mvcc_db_total_size_in_bytes"), e.growth))
                })
                .or_else(|| {
                    let apiserver = read.apiserver()?;
                    let size = apiserver.storage_size.as_ref()?;
                    Some(((size.bytes, size.metric), apiserver.growth))
                })
                .unzip();
            Some(Member {
                name: read.name(),
                node: read.node.clone(),
                size,
                in_use: etcd.and_then(|e| e.etcd_in_use_bytes),
                quota: quota_of(read, node, distro),
                growth: growth.flatten(),
            })
        })
        .collect()
}
