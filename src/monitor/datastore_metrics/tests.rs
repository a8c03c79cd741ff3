use prometheus_client::registry::Registry;

use super::*;
use crate::model::server_metrics::DatastoreScrape;
use crate::monitor::datastore_latency::Latency;

fn size(server: &str, bytes: f64, quota: Option<f64>, in_use: Option<f64>) -> DatastoreSize {
    DatastoreSize {
        server: server.into(),
        bytes,
        metric: "apiserver_storage_size_bytes",
        quota_bytes: quota,
        quota_from: quota.map(|_| "etcd's default, as nothing sets one"),
        in_use_bytes: in_use,
    }
}

fn read(node: Option<&str>, from: &str) -> ServerMetrics {
    ServerMetrics {
        node: node.map(str::to_string),
        from: from.into(),
        apiserver: Ok(DatastoreScrape::default()),
        etcd: None,
    }
}

fn encode(registry: &Registry) -> String {
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, registry).unwrap();
    text
}

fn series<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.starts_with(prefix)).collect()
}

#[test]
fn each_server_has_its_series_until_it_is_gone() {
    let metrics = DatastoreMetrics::default();
    let mut registry = Registry::default();
    metrics.register(&mut registry);
    let reads = [
        read(Some("s1"), "10.0.0.1:6443"),
        read(Some("s2"), "10.0.0.2:6443"),
    ];
    metrics.record(
        &[
            size("Node s1", 1e9, Some(2147483648.0), Some(4e8)),
            size("Node s2", 9e8, Some(2147483648.0), None),
        ],
        &reads,
        &[IntervalP99 {
            server: "s2".into(),
            latency: Latency::WalFsync,
            seconds: 0.75,
        }],
    );
    let text = encode(&registry);
    for line in [
        r#"k3sdoctor_datastore_size_bytes{server="s1"} 1000000000.0"#,
        r#"k3sdoctor_datastore_size_bytes{server="s2"} 900000000.0"#,
        r#"k3sdoctor_datastore_quota_bytes{server="s2"} 2147483648.0"#,
    ] {
        assert!(text.lines().any(|l| l == line), "{line}\n{text}");
    }
    assert_eq!(
        series(&text, "k3sdoctor_datastore_size_bytes{").len(),
        2,
        "{text}"
    );
    assert_eq!(
        series(&text, "k3sdoctor_datastore_in_use_bytes{"),
        [r#"k3sdoctor_datastore_in_use_bytes{server="s1"} 400000000.0"#],
        "no in-use series where it was not read: {text}"
    );
    assert_eq!(series(&text, "k3sdoctor_datastore_quota_bytes{").len(), 2);
    assert_eq!(
        series(&text, "k3sdoctor_datastore_latency_p99_seconds{"),
        [r#"k3sdoctor_datastore_latency_p99_seconds{server="s2",measure="wal_fsync"} 0.75"#]
    );

    // s2 is gone, and the server behind the connection (no Node) is named by its address.
    metrics.record(
        &[
            size("Node s1", 1.1e9, Some(2147483648.0), Some(4e8)),
            size("the server behind https://lb:6443", 5e8, None, None),
        ],
        &[
            read(Some("s1"), "10.0.0.1:6443"),
            read(None, "https://lb:6443"),
        ],
        &[],
    );
    let text = encode(&registry);
    assert!(!text.contains(r#"server="s2""#), "{text}");
    assert!(
        text.contains(r#"k3sdoctor_datastore_size_bytes{server="https://lb:6443"} 500000000.0"#),
        "{text}"
    );
    assert_eq!(
        series(&text, "k3sdoctor_datastore_quota_bytes{").len(),
        1,
        "{text}"
    );
    assert!(
        series(&text, "k3sdoctor_datastore_latency_p99_seconds{").is_empty(),
        "{text}"
    );
}
