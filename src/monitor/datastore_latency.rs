//! The datastore's latencies as they are now, not over a process's lifetime: each histogram a
//! server publishes counts every observation since its process started, so one scrape's p99
//! hides a disk that turned slow an hour ago under weeks of fast answers. serve keeps each
//! poll's histograms and publishes the p99 of what was observed between two polls, as
//! `histogram_quantile(0.99, rate(…))` would. Pure: the poll's time is an argument.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};

use crate::model::histogram::Histogram;
use crate::model::server_metrics::{DatastoreScrape, ServerMetrics};

/// Polls that failed in between stretch the interval; past this its p99 is no longer "now",
/// and a slow minute would be averaged away.
const LONGEST_INTERVAL: SignedDuration = SignedDuration::from_mins(10);

/// The three latencies with a published bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Latency {
    /// The apiserver's single-object storage calls (`etcd_request_duration_seconds`).
    ObjectRequest,
    /// etcd's WAL fsync (`etcd_disk_wal_fsync_duration_seconds`, `:2381`).
    WalFsync,
    /// etcd's backend commit (`etcd_disk_backend_commit_duration_seconds`, `:2381`).
    BackendCommit,
}

impl Latency {
    pub(crate) const ALL: [Latency; 3] = [
        Latency::ObjectRequest,
        Latency::WalFsync,
        Latency::BackendCommit,
    ];

    /// The `measure` label.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Latency::ObjectRequest => "object_request",
            Latency::WalFsync => "wal_fsync",
            Latency::BackendCommit => "backend_commit",
        }
    }

    fn scrape(self, read: &ServerMetrics) -> Option<&DatastoreScrape> {
        match self {
            Latency::ObjectRequest => read.apiserver(),
            Latency::WalFsync | Latency::BackendCommit => read.etcd(),
        }
    }

    fn histogram(self, scrape: &DatastoreScrape) -> &Histogram {
        match self {
            Latency::ObjectRequest => &scrape.object_requests,
            Latency::WalFsync => &scrape.wal_fsync,
            Latency::BackendCommit => &scrape.backend_commit,
        }
    }
}

/// One process's histogram as one poll read it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Counted {
    pub at: Timestamp,
    /// `process_start_time_seconds`: a different one is another process, counting afresh.
    pub process_start: Option<f64>,
    pub histogram: Histogram,
}

/// The p99 of what was observed between two polls of one server's histogram. `None` when
/// the interval is not forward or longer than [`LONGEST_INTERVAL`], when the process
/// restarted in between (another start time, or a count that went down: its counts began
/// again from zero, and a difference across that would be nonsense), or when nothing was
/// observed in between.
pub(crate) fn interval_p99(earlier: &Counted, later: &Counted) -> Option<f64> {
    let interval = later.at.duration_since(earlier.at);
    if interval <= SignedDuration::ZERO || interval > LONGEST_INTERVAL {
        return None;
    }
    if let (Some(then), Some(now)) = (earlier.process_start, later.process_start)
        && then != now
    {
        return None;
    }
    later.histogram.since(&earlier.histogram)?.quantile(0.99)
}

/// One server's p99 of one latency over the last interval.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct IntervalP99 {
    pub server: String,
    pub latency: Latency,
    pub seconds: f64,
}

/// How the series name a server: its Node, else the address it was read at.
pub(crate) fn server_label(read: &ServerMetrics) -> String {
    read.node.clone().unwrap_or_else(|| read.from.clone())
}

/// The last poll's histograms, per server and latency.
#[derive(Debug, Default)]
pub(crate) struct IntervalLatencies {
    last: BTreeMap<(String, Latency), Counted>,
}

impl IntervalLatencies {
    /// Takes one poll's reads, made at `at`, and returns each p99 over the interval since the
    /// poll before. Only this poll's histograms are kept: a server not read now starts a new
    /// interval when it is read again.
    pub(crate) fn observe(&mut self, reads: &[ServerMetrics], at: Timestamp) -> Vec<IntervalP99> {
        let mut kept = BTreeMap::new();
        let mut p99s = Vec::new();
        for read in reads {
            let server = server_label(read);
            for latency in Latency::ALL {
                let Some(scrape) = latency.scrape(read) else {
                    continue;
                };
                let now = Counted {
                    at,
                    process_start: scrape.process_start,
                    histogram: latency.histogram(scrape).clone(),
                };
                let key = (server.clone(), latency);
                if let Some(seconds) = self.last.get(&key).and_then(|e| interval_p99(e, &now)) {
                    p99s.push(IntervalP99 {
                        server: server.clone(),
                        latency,
                        seconds,
                    });
                }
                kept.insert(key, now);
            }
        }
        self.last = kept;
        p99s
    }
}

#[cfg(test)]
mod tests;
