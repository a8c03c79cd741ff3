//! What each server's metrics say of its datastore: the apiserver's `/metrics` (the size its
//! etcd or kine reports, request latencies, kine's compactions) and etcd's own `:2381/metrics`
//! (physical and in-use size, the effective quota, disk latencies). Read live or from a dump's
//! `metrics/apiserver/<node>.txt` and `metrics/etcd/<node>.txt`.

use super::histogram::Histogram;

/// The datastore's size as the apiserver reports it: `Status().DbSize` of its endpoint, the
/// physical file (kine: the SQL database's size), polled every 30 s.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StorageSize {
    pub bytes: f64,
    /// The metric it came from, which says the Kubernetes era.
    pub metric: &'static str,
}

/// kine's compaction passes since it started.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct KineCompactions {
    pub success: f64,
    pub error: f64,
}

/// The datastore series of one `/metrics` answer; what it lacks stays `None` (or empty).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct DatastoreScrape {
    pub storage_size: Option<StorageSize>,
    /// The apiserver's size metric reads -1 (or its sample is omitted beside its HELP): the
    /// apiserver could not ask its datastore.
    pub storage_size_failed: bool,
    /// `etcd_request_duration_seconds` of single-object requests (get, create, update,
    /// delete), every resource added up.
    pub object_requests: Histogram,
    pub kine_compactions: Option<KineCompactions>,
    /// `process_start_time_seconds`: since when the cumulative series count.
    pub process_start: Option<f64>,
    /// etcd: the bbolt file's size (what the quota is checked against).
    pub etcd_total_bytes: Option<f64>,
    pub etcd_in_use_bytes: Option<f64>,
    /// etcd's effective quota, also when it is the default.
    pub etcd_quota_bytes: Option<f64>,
    pub wal_fsync: Histogram,
    pub backend_commit: Histogram,
    /// How this answer's size (etcd's file size, else the apiserver's size metric) changed
    /// since an earlier read of the same server: `serve` keeps its polls; one read has none.
    pub growth: Option<SizeGrowth>,
}

/// The change of a size between two reads of one server.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SizeGrowth {
    /// Later minus earlier (a defrag or compaction makes it negative).
    pub bytes: f64,
    pub over: jiff::SignedDuration,
}

impl DatastoreScrape {
    /// The size the growth is about: etcd's file where read, else the apiserver's metric.
    pub(crate) fn size_bytes(&self) -> Option<f64> {
        self.etcd_total_bytes
            .or_else(|| self.storage_size.as_ref().map(|s| s.bytes))
    }
}

/// One server's two reads; `Err` says why a read was not made or failed.
pub(crate) type ServerMetrics = ServerRead<DatastoreScrape>;

/// One server's apiserver and etcd answers, as `T`: their datastore series, or (for a dump)
/// their text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ServerRead<T> {
    /// The server's Node; `None` for the server behind the connection when no server could
    /// be reached at its own address (a load balancer or proxy in between picks one).
    pub node: Option<String>,
    /// Where it was read: an address, or a dump's file.
    pub from: String,
    pub apiserver: Result<T, String>,
    /// `None`: not asked (not an etcd member, or not reachable from here at all).
    pub etcd: Option<Result<T, String>>,
}

impl<T> ServerRead<T> {
    /// How the report names the server.
    pub(crate) fn name(&self) -> String {
        match &self.node {
            Some(node) => format!("Node {node}"),
            None => format!("the server behind {}", self.from),
        }
    }

    pub(crate) fn apiserver(&self) -> Option<&T> {
        self.apiserver.as_ref().ok()
    }

    pub(crate) fn etcd(&self) -> Option<&T> {
        self.etcd.as_ref().and_then(|r| r.as_ref().ok())
    }
}
