use jiff::{SignedDuration, Timestamp};

use super::*;
use crate::model::server_metrics::StorageSize;

fn at(minutes: i64) -> Timestamp {
    Timestamp::UNIX_EPOCH + SignedDuration::from_mins(minutes)
}

fn read(bytes: f64, etcd_bytes: Option<f64>) -> ServerMetrics {
    ServerMetrics {
        node: Some("s1".into()),
        from: "10.0.0.1:6443".into(),
        apiserver: Ok(DatastoreScrape {
            storage_size: Some(StorageSize {
                bytes,
                metric: "apiserver_storage_size_bytes",
            }),
            ..DatastoreScrape::default()
        }),
        etcd: etcd_bytes.map(|b| {
            Ok(DatastoreScrape {
                etcd_total_bytes: Some(b),
                ..DatastoreScrape::default()
            })
        }),
    }
}

fn growth_after(polls: &[(i64, f64)]) -> Option<SizeGrowth> {
    let mut history = SizeHistory::default();
    let mut last = Vec::new();
    for (minute, bytes) in polls {
        last = vec![read(*bytes, Some(bytes * 2.0))];
        history.record(&last, at(*minute));
    }
    history.annotate(&mut last);
    let etcd = last[0]
        .etcd
        .clone()
        .and_then(Result::ok)
        .and_then(|e| e.growth);
    let apiserver = last[0].apiserver.clone().ok().and_then(|a| a.growth);
    assert_eq!(
        etcd.map(|g| g.bytes),
        apiserver.map(|g| g.bytes * 2.0),
        "each answer has its own history"
    );
    apiserver
}

#[test]
fn growth_runs_from_the_oldest_poll_of_the_last_hour() {
    let grown = growth_after(&[(0, 100.0), (30, 400.0), (50, 700.0)]).expect("grown");
    assert_eq!(grown.bytes, 600.0);
    assert_eq!(grown.over, SignedDuration::from_mins(50));

    let windowed = growth_after(&[(0, 100.0), (30, 400.0), (70, 1000.0)]).expect("grown");
    assert_eq!(
        (windowed.bytes, windowed.over),
        (600.0, SignedDuration::from_mins(40)),
        "the poll at 0 is over an hour old"
    );
}

#[test]
fn one_poll_or_polls_minutes_apart_give_no_growth_and_a_defrag_shrinks() {
    assert_eq!(growth_after(&[(0, 100.0)]), None);
    assert_eq!(growth_after(&[(0, 100.0), (3, 900.0)]), None);
    let defragged = growth_after(&[(0, 900.0), (20, 300.0)]).expect("changed");
    assert_eq!(defragged.bytes, -600.0);
}

#[test]
fn a_server_not_read_for_an_hour_is_forgotten() {
    let mut history = SizeHistory::default();
    history.record(&[read(100.0, None)], at(0));
    let mut other = read(5.0, None);
    other.node = Some("s2".into());
    history.record(std::slice::from_ref(&other), at(61));
    let mut again = vec![read(900.0, None)];
    history.record(&again, at(62));
    history.annotate(&mut again);
    assert_eq!(
        again[0].apiserver.as_ref().ok().and_then(|a| a.growth),
        None
    );
}
