//! `datastore-slow`: the datastore answers too slowly for the control plane's writes, which
//! surfaces as lock renewals that miss their deadline. Three measures, each against its
//! published bound: the apiserver's single-object storage calls (the Kubernetes SLO: p99 ≤ 1 s),
//! etcd's WAL fsync (etcd's HighFsyncDurations: 0.5 s) and backend commit
//! (HighCommitDurations: 0.25 s). One scrape holds counts since the process started, so its
//! p99 is over the process's lifetime, not the last minutes: the message says so, and `serve`
//! takes rates.

use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::model::histogram::Histogram;
use crate::model::server_metrics::{DatastoreScrape, ServerMetrics};

struct Bound {
    what: &'static str,
    seconds: f64,
    histogram: fn(&DatastoreScrape) -> &Histogram,
}

const APISERVER: Bound = Bound {
    what: "single-object storage requests (etcd_request_duration_seconds)",
    seconds: 1.0,
    histogram: |s| &s.object_requests,
};
const FSYNC: Bound = Bound {
    what: "etcd WAL fsync (etcd_disk_wal_fsync_duration_seconds)",
    seconds: 0.5,
    histogram: |s| &s.wal_fsync,
};
const COMMIT: Bound = Bound {
    what: "etcd backend commit (etcd_disk_backend_commit_duration_seconds)",
    seconds: 0.25,
    histogram: |s| &s.backend_commit,
};

/// `(what, p99)` of every measure over its bound.
fn over(scrape: Option<&DatastoreScrape>, bounds: &[Bound]) -> Vec<String> {
    let Some(scrape) = scrape else {
        return Vec::new();
    };
    bounds
        .iter()
        .filter_map(|b| {
            let p99 = (b.histogram)(scrape).quantile(0.99)?;
            (p99 > b.seconds).then(|| format!("{} p99 {p99:.2} s (bound {} s)", b.what, b.seconds))
        })
        .collect()
}

pub(super) fn slowness_findings(reads: &[ServerMetrics]) -> Vec<Finding> {
    reads
        .iter()
        .filter_map(|read| {
            let mut slow = over(read.apiserver(), &[APISERVER]);
            slow.extend(over(read.etcd(), &[FSYNC, COMMIT]));
            if slow.is_empty() {
                return None;
            }
            Some(
                Finding::new(
                    Severity::Warning,
                    FindingCode::DatastoreSlow,
                    read.name(),
                    format!(
                        "the datastore under {} is slow: {}. One scrape counts since the process started, so these \
                         are lifetime p99s, not the last minutes' (serve measures rates)",
                        read.name(),
                        slow.join("; ")
                    ),
                )
                .fix(
                    "check that server's disk (etcd wants WAL fsyncs under 10 ms: an SSD, no shared or throttled \
                     volume) and its CPU; `serve` shows whether it is slow now",
                ),
            )
        })
        .collect()
}
