use jiff::{SignedDuration, Timestamp};

use super::*;
use crate::model::histogram::Histogram;
use crate::model::server_metrics::{DatastoreScrape, ServerMetrics};

fn t0() -> Timestamp {
    "2026-12-05T00:00:00Z".parse().unwrap()
}

fn minutes(n: i64) -> Timestamp {
    t0() + SignedDuration::from_mins(n)
}

/// Cumulative counts over etcd's 1 ms … 8 s buckets: `fast` observations up to 1 ms and
/// `slow` more between 0.512 s and 1.024 s.
fn histogram(fast: f64, slow: f64) -> Histogram {
    let mut h = Histogram::default();
    for bound in [0.001, 0.512, 1.024, 8.192, f64::INFINITY] {
        h.add(bound, if bound >= 1.024 { fast + slow } else { fast });
    }
    h
}

fn counted(at: Timestamp, start: Option<f64>, fast: f64, slow: f64) -> Counted {
    Counted {
        at,
        process_start: start,
        histogram: histogram(fast, slow),
    }
}

#[test]
fn the_p99_is_of_what_was_observed_between_the_two_polls() {
    // A million fast fsyncs over the process's life, then 100 slow ones in the last minute:
    // the lifetime p99 is 1 ms, the last minute's is within the slow bucket.
    let earlier = counted(minutes(0), Some(1.0), 1e6, 0.0);
    let later = counted(minutes(1), Some(1.0), 1e6, 100.0);
    assert!(later.histogram.quantile(0.99).unwrap() <= 0.001);
    let p99 = interval_p99(&earlier, &later).unwrap();
    assert!((p99 - (0.512 + 0.512 * 0.99)).abs() < 1e-9, "{p99}");
}

#[test]
fn a_restart_in_between_gives_no_p99_for_that_interval() {
    let earlier = counted(minutes(0), Some(1.0), 1e6, 0.0);
    // Counting from zero again: every bucket went down.
    let restarted = counted(minutes(1), Some(1.0), 10.0, 5.0);
    assert_eq!(interval_p99(&earlier, &restarted), None);
    // A new process that has already counted past the old one's totals: told by its start.
    let outgrown = counted(minutes(1), Some(50.0), 2e6, 500.0);
    assert_eq!(interval_p99(&earlier, &outgrown), None);
    // A start time read on one side only is no evidence of a restart.
    let unknown = counted(minutes(1), None, 1e6, 100.0);
    assert!(interval_p99(&earlier, &unknown).is_some());
}

#[test]
fn an_interval_that_is_not_forward_or_too_long_gives_no_p99() {
    let earlier = counted(minutes(5), Some(1.0), 1e6, 0.0);
    let slow = |at| counted(at, Some(1.0), 1e6, 100.0);
    assert_eq!(interval_p99(&earlier, &slow(minutes(5))), None);
    assert_eq!(interval_p99(&earlier, &slow(minutes(4))), None);
    assert!(interval_p99(&earlier, &slow(minutes(15))).is_some());
    assert_eq!(interval_p99(&earlier, &slow(minutes(16))), None);
}

#[test]
fn nothing_observed_in_between_gives_no_p99() {
    let earlier = counted(minutes(0), Some(1.0), 1e6, 3.0);
    let later = counted(minutes(1), Some(1.0), 1e6, 3.0);
    assert_eq!(interval_p99(&earlier, &later), None);
}

fn scrape(object: Histogram, fsync: Histogram, start: f64) -> DatastoreScrape {
    DatastoreScrape {
        object_requests: object.clone(),
        wal_fsync: fsync.clone(),
        backend_commit: fsync,
        process_start: Some(start),
        ..DatastoreScrape::default()
    }
}

fn read(node: Option<&str>, apiserver: Histogram, etcd: Option<Histogram>) -> ServerMetrics {
    ServerMetrics {
        node: node.map(str::to_string),
        from: "10.0.0.9:6443".into(),
        apiserver: Ok(scrape(apiserver, Histogram::default(), 7.0)),
        etcd: etcd.map(|h| Ok(scrape(Histogram::default(), h, 9.0))),
    }
}

fn found(p99s: &[IntervalP99], server: &str, latency: Latency) -> Option<f64> {
    p99s.iter()
        .find(|p| p.server == server && p.latency == latency)
        .map(|p| p.seconds)
}

#[test]
fn each_server_and_latency_is_followed_from_poll_to_poll() {
    let mut latencies = IntervalLatencies::default();
    let first = [
        read(
            Some("s1"),
            histogram(100.0, 0.0),
            Some(histogram(100.0, 0.0)),
        ),
        read(None, histogram(100.0, 0.0), None),
    ];
    assert_eq!(
        latencies.observe(&first, minutes(0)),
        [],
        "one poll is no interval"
    );

    let second = [
        read(
            Some("s1"),
            histogram(200.0, 0.0),
            Some(histogram(100.0, 50.0)),
        ),
        read(None, histogram(100.0, 10.0), None),
    ];
    let p99s = latencies.observe(&second, minutes(1));
    assert!(found(&p99s, "s1", Latency::ObjectRequest).unwrap() <= 0.001);
    assert!(found(&p99s, "s1", Latency::WalFsync).unwrap() > 1.0);
    assert!(found(&p99s, "s1", Latency::BackendCommit).unwrap() > 1.0);
    // The server behind the connection, with no Node, goes by its address; no etcd there.
    assert!(found(&p99s, "10.0.0.9:6443", Latency::ObjectRequest).unwrap() > 1.0);
    assert_eq!(found(&p99s, "10.0.0.9:6443", Latency::WalFsync), None);
    assert_eq!(p99s.len(), 4, "{p99s:?}");

    // s1 not read this time: nothing for it, and its next read starts a new interval.
    let third = [read(None, histogram(100.0, 20.0), None)];
    let p99s = latencies.observe(&third, minutes(2));
    assert_eq!(p99s.len(), 1, "{p99s:?}");
    let fourth = [read(Some("s1"), histogram(300.0, 0.0), None)];
    assert_eq!(latencies.observe(&fourth, minutes(3)), []);
}

#[test]
fn a_failed_read_of_a_server_starts_its_interval_again() {
    let mut latencies = IntervalLatencies::default();
    latencies.observe(&[read(Some("s1"), histogram(10.0, 0.0), None)], minutes(0));
    let mut failed = read(Some("s1"), Histogram::default(), None);
    failed.apiserver = Err("refused".into());
    assert_eq!(latencies.observe(&[failed], minutes(1)), []);
    assert_eq!(
        latencies.observe(&[read(Some("s1"), histogram(10.0, 5.0), None)], minutes(2)),
        []
    );
    let p99s = latencies.observe(&[read(Some("s1"), histogram(10.0, 9.0), None)], minutes(3));
    assert!(found(&p99s, "s1", Latency::ObjectRequest).unwrap() > 1.0);
}
