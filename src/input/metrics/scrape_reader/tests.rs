use super::*;

const V1_24: &str = r#"# HELP etcd_db_total_size_in_bytes [ALPHA] Total size of the etcd database file physically allocated in bytes.
# TYPE etcd_db_total_size_in_bytes gauge
etcd_db_total_size_in_bytes{endpoint="https://127.0.0.1:2379"} 4.2e+07
# TYPE etcd_request_duration_seconds histogram
etcd_request_duration_seconds_bucket{operation="get",type="*coordination.Lease",le="0.005"} 90
etcd_request_duration_seconds_bucket{operation="get",type="*coordination.Lease",le="1"} 99
etcd_request_duration_seconds_bucket{operation="get",type="*coordination.Lease",le="+Inf"} 100
etcd_request_duration_seconds_bucket{operation="list",type="/registry/pods",le="0.005"} 0
etcd_request_duration_seconds_bucket{operation="list",type="/registry/pods",le="1"} 0
etcd_request_duration_seconds_bucket{operation="list",type="/registry/pods",le="+Inf"} 500
process_start_time_seconds 1.7e+09
"#;

#[test]
fn each_era_s_size_metric_is_read_and_the_newest_wins() {
    let old = read_scrape(V1_24.as_bytes()).unwrap();
    let size = old.storage_size.as_ref().unwrap();
    assert_eq!(size.bytes, 4.2e7);
    assert_eq!(size.metric, "etcd_db_total_size_in_bytes");
    assert_eq!(old.process_start, Some(1.7e9));

    // 1.28: the deprecated name and the new one side by side.
    let both = "apiserver_storage_db_total_size_in_bytes{endpoint=\"unix://kine.sock\"} 5\n\
                apiserver_storage_size_bytes{cluster=\"etcd-0\"} 7\n";
    let read = read_scrape(both.as_bytes()).unwrap();
    assert_eq!(read.storage_size.as_ref().unwrap().bytes, 7.0);
    assert_eq!(
        read.storage_size.as_ref().unwrap().metric,
        "apiserver_storage_size_bytes"
    );
    let reversed = "apiserver_storage_size_bytes{storage_cluster_id=\"etcd-0\"} 7\n\
                    apiserver_storage_db_total_size_in_bytes{endpoint=\"x\"} 5\n";
    assert_eq!(
        read_scrape(reversed.as_bytes())
            .unwrap()
            .storage_size
            .unwrap()
            .bytes,
        7.0
    );
}

#[test]
fn a_size_the_apiserver_could_not_read_is_told_apart_from_none() {
    let failed =
        read_scrape(b"apiserver_storage_db_total_size_in_bytes{endpoint=\"x\"} -1\n").unwrap();
    assert!(failed.storage_size_failed);
    assert_eq!(failed.storage_size, None);
    let none = read_scrape(b"up 1\n").unwrap();
    assert!(!none.storage_size_failed);
    assert_eq!(none, DatastoreScrape::default());
}

#[test]
fn only_single_object_requests_count_toward_the_request_latency() {
    let read = read_scrape(V1_24.as_bytes()).unwrap();
    assert_eq!(read.object_requests.count(), 100.0);
    let p99 = read.object_requests.quantile(0.99).unwrap();
    assert!((p99 - 1.0).abs() < 1e-9, "{p99}");
}

#[test]
fn etcd_s_own_series_and_kine_s_compactions_are_read() {
    let etcd = "etcd_debugging_mvcc_db_total_size_in_bytes 9\n\
                etcd_mvcc_db_total_size_in_bytes 10\n\
                etcd_mvcc_db_total_size_in_use_in_bytes 4\n\
                etcd_server_quota_backend_bytes 2.147483648e+09\n\
                etcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.001\"} 10\n\
                etcd_disk_wal_fsync_duration_seconds_bucket{le=\"+Inf\"} 10\n\
                etcd_disk_backend_commit_duration_seconds_bucket{le=\"0.5\"} 3\n\
                etcd_disk_backend_commit_duration_seconds_bucket{le=\"+Inf\"} 3\n";
    let read = read_scrape(etcd.as_bytes()).unwrap();
    assert_eq!(read.etcd_total_bytes, Some(10.0));
    assert_eq!(read.etcd_in_use_bytes, Some(4.0));
    assert_eq!(read.etcd_quota_bytes, Some(2147483648.0));
    assert_eq!(read.wal_fsync.count(), 10.0);
    let p99 = read.backend_commit.quantile(0.99).unwrap();
    assert!((p99 - 0.495).abs() < 1e-9, "{p99}");
    // etcd 3.4's debugging name stands in when the mvcc one is missing.
    let v34 = read_scrape(b"etcd_debugging_mvcc_db_total_size_in_bytes 9\n").unwrap();
    assert_eq!(v34.etcd_total_bytes, Some(9.0));

    let kine = "kine_compact_total{result=\"success\"} 2\nkine_compact_total{result=\"error\"} 5\n";
    let counts = read_scrape(kine.as_bytes())
        .unwrap()
        .kine_compactions
        .unwrap();
    assert_eq!((counts.success, counts.error), (2.0, 5.0));
}

#[test]
fn any_split_of_the_answer_reads_the_same() {
    let whole = read_scrape(V1_24.as_bytes()).unwrap();
    for size in [1, 2, 7, 64] {
        let mut reader = ScrapeReader::default();
        for chunk in V1_24.as_bytes().chunks(size) {
            reader.feed(chunk).unwrap();
        }
        assert_eq!(reader.finish().unwrap(), whole, "chunks of {size}");
    }
}

#[test]
fn every_series_the_reader_lets_through_is_one_it_keeps() {
    // The two lists are written apart: a name in READ_SERIES that `sample` has no arm for
    // would be parsed for nothing. (The other way round, a series `sample` reads that
    // READ_SERIES lacks is never read, which that series' own test shows.)
    for name in READ_SERIES.iter().chain(&SIZE_METRICS) {
        let labels = match *name {
            "etcd_request_duration_seconds_bucket" => r#"{operation="get",le="1"}"#,
            "kine_compact_total" => r#"{result="success"}"#,
            n if n.ends_with("_bucket") => r#"{le="1"}"#,
            _ => "",
        };
        let read = read_scrape(format!("{name}{labels} 3\n").as_bytes()).unwrap();
        assert_ne!(
            read,
            DatastoreScrape::default(),
            "{name} is let through but not kept"
        );
    }
}

#[test]
fn a_character_split_between_pieces_is_read_whole() {
    let text = "kine_compact_total{result=\"success\",note=\"é€𝄞\"} 2\nup{x=\"ü\"} 1\n";
    for split in 0..=text.len() {
        let mut reader = ScrapeReader::default();
        reader.feed(&text.as_bytes()[..split]).unwrap();
        reader.feed(&text.as_bytes()[split..]).unwrap();
        let counts = reader.finish().unwrap().kine_compactions.unwrap();
        assert_eq!(counts.success, 2.0, "split at {split}");
    }
    // Bytes that are no character are refused on a line of any series, read or not.
    for bad in [
        &b"up{x=\"\xc3\"} 1\n"[..],
        b"kine_compact_total{result=\"\xff\"} 1",
    ] {
        for split in 0..=bad.len() {
            let mut reader = ScrapeReader::default();
            let read = reader
                .feed(&bad[..split])
                .and_then(|()| reader.feed(&bad[split..]))
                .and_then(|()| reader.finish().map(|_| ()));
            assert!(read.unwrap_err().contains("UTF-8"), "split at {split}");
        }
    }
}

#[test]
fn an_answer_past_the_cap_or_not_metrics_is_an_error_that_says_so() {
    let mut reader = ScrapeReader::with_limit(1 << 20);
    let line = "noise_total 1\n".repeat(1000);
    let mut failed = None;
    for _ in 0..200 {
        if let Err(e) = reader.feed(line.as_bytes()) {
            failed = Some(e);
            break;
        }
    }
    assert!(failed.unwrap().contains("over 1 MiB"));
    let e = read_scrape(b"<html>not found</html>\n").unwrap_err();
    assert!(e.contains("not a metrics line"), "{e}");
    let e = read_scrape(&[b'x'; 70_000]).unwrap_err();
    assert!(e.contains("over 64 KiB"), "{e}");
    assert!(read_scrape(b"").unwrap_err().contains("empty"));
    assert!(read_scrape(b"a 1\n\xff\n").unwrap_err().contains("UTF-8"));
}

/// The recorded answers (tests/fixtures/metrics/README.md): each era's size metric, labels
/// and latency buckets read as the spec's table says.
#[test]
fn every_recorded_era_reads_its_size_and_latencies() {
    macro_rules! fixture {
        ($file:literal) => {
            read_scrape(include_bytes!(concat!(
                "../../../../tests/fixtures/metrics/",
                $file
            )))
            .unwrap()
        };
    }
    let cases = [
        (
            fixture!("apiserver-v1.24.txt"),
            266240.0,
            "etcd_db_total_size_in_bytes",
        ),
        (
            fixture!("apiserver-v1.27.txt"),
            44040192.0,
            "apiserver_storage_db_total_size_in_bytes",
        ),
        (
            fixture!("apiserver-v1.28.5.txt"),
            62926848.0,
            "apiserver_storage_size_bytes",
        ),
        (
            fixture!("apiserver-v1.29.6.txt"),
            75497472.0,
            "apiserver_storage_size_bytes",
        ),
        (
            fixture!("apiserver-v1.33.txt"),
            88080384.0,
            "apiserver_storage_size_bytes",
        ),
        (
            fixture!("apiserver-v1.34.txt"),
            94371840.0,
            "apiserver_storage_size_bytes",
        ),
        (
            fixture!("apiserver-v1.33-kine.txt"),
            23871488.0,
            "apiserver_storage_size_bytes",
        ),
    ];
    for (scrape, bytes, metric) in &cases {
        let size = scrape.storage_size.as_ref().unwrap();
        assert_eq!((size.bytes, size.metric), (*bytes, *metric));
        assert!(scrape.object_requests.count() > 0.0, "{metric}");
        assert!(scrape.object_requests.quantile(0.99).unwrap() < 1.0);
        assert!(scrape.process_start.is_some());
    }
    let kine = cases[6].0.kine_compactions.unwrap();
    assert_eq!((kine.success, kine.error), (284.0, 4.0));
    assert!(cases[5].0.kine_compactions.is_none());

    let v34 = fixture!("etcd-v3.4.txt");
    assert_eq!(v34.etcd_total_bytes, Some(266240.0));
    assert_eq!(v34.etcd_in_use_bytes, Some(262144.0));
    assert_eq!(v34.etcd_quota_bytes, Some(2147483648.0));
    assert!(v34.wal_fsync.count() > 0.0);
    let v35 = fixture!("etcd-v3.5.txt");
    assert_eq!(v35.etcd_total_bytes, Some(73400320.0));
    assert_eq!(v35.etcd_in_use_bytes, Some(54525952.0));
}
