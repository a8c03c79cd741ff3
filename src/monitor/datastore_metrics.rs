//! serve's series of the datastore, per server: the sizes `check` shows (each etcd member's
//! file, in-use bytes and quota, or kine's database) and the p99 latencies over the last
//! interval between two polls. Each evaluation sets them anew, so a server that is gone, or
//! whose metrics could not be read this time, has no series rather than its last value.

use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use super::datastore_latency::{IntervalP99, server_label};
use crate::diagnose::datastore::DatastoreSize;
use crate::model::server_metrics::ServerMetrics;

type FloatGauge = Gauge<f64, AtomicU64>;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ServerLabels {
    server: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LatencyLabels {
    server: String,
    measure: String,
}

#[derive(Default)]
pub(crate) struct DatastoreMetrics {
    size: Family<ServerLabels, FloatGauge>,
    in_use: Family<ServerLabels, FloatGauge>,
    quota: Family<ServerLabels, FloatGauge>,
    latency: Family<LatencyLabels, FloatGauge>,
}

impl DatastoreMetrics {
    pub(super) fn register(&self, registry: &mut Registry) {
        registry.register(
            "k3sdoctor_datastore_size_bytes",
            "The datastore's physical size per server: the etcd member's file (what its quota is checked against), or kine's database",
            self.size.clone(),
        );
        registry.register(
            "k3sdoctor_datastore_in_use_bytes",
            "Bytes in use of an etcd member's file, where etcd's own metrics (:2381) are read",
            self.in_use.clone(),
        );
        registry.register(
            "k3sdoctor_datastore_quota_bytes",
            "An etcd member's quota: etcd's quota metric, else the server's --etcd-arg quota-backend-bytes, else etcd's 2 GiB default",
            self.quota.clone(),
        );
        registry.register(
            "k3sdoctor_datastore_latency_p99_seconds",
            "p99 of what was observed between serve's last two reads of the server's metrics (object_request: the apiserver's single-object storage calls; wal_fsync, backend_commit: etcd's disk)",
            self.latency.clone(),
        );
    }

    /// One evaluation's sizes (`reads`: the metrics they came from, which name each server)
    /// and the p99s of the last interval.
    pub(crate) fn record(
        &self,
        sizes: &[DatastoreSize],
        reads: &[ServerMetrics],
        latencies: &[IntervalP99],
    ) {
        self.size.clear();
        self.in_use.clear();
        self.quota.clear();
        for size in sizes {
            let labels = ServerLabels {
                server: reads
                    .iter()
                    .find(|r| r.name() == size.server)
                    .map_or_else(|| size.server.clone(), server_label),
            };
            self.size.get_or_create(&labels).set(size.bytes);
            if let Some(in_use) = size.in_use_bytes {
                self.in_use.get_or_create(&labels).set(in_use);
            }
            if let Some(quota) = size.quota_bytes {
                self.quota.get_or_create(&labels).set(quota);
            }
        }
        self.latency.clear();
        for p99 in latencies {
            self.latency
                .get_or_create(&LatencyLabels {
                    server: p99.server.clone(),
                    measure: p99.latency.label().to_string(),
                })
                .set(p99.seconds);
        }
    }
}

#[cfg(test)]
mod tests;
