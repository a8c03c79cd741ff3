use super::*;
use crate::diagnose::test_cluster::{TestCluster, now};
use serde_json::{Value, json};

const S3_STAMP: &str = "etcd.k3s.cattle.io/s3-snapshots-timestamp";

fn server(args: &str, s3_stamp_mins_ago: Option<i64>) -> Value {
    let mut annotations = json!({"k3s.io/node-args": args});
    if let Some(m) = s3_stamp_mins_ago {
        annotations[S3_STAMP] = json!((now() - SignedDuration::from_mins(m)).to_string());
    }
    json!({ "annotations": annotations })
}

fn s3_file(node: &str, mins_ago: i64) -> Value {
    let t = now() - SignedDuration::from_mins(mins_ago);
    let file = format!("etcd-snapshot-{node}-{}", t.as_second());
    json!({"metadata": {"name": format!("s3-{file}-abcdef")},
           "spec": {"snapshotName": file, "nodeName": node, "location": format!("s3://b/f/{file}"),
                    "s3": {"bucket": "b", "prefix": "f"}},
           "status": {"readyToUse": true, "creationTime": t.to_string(), "size": "100"}})
}

fn codes(state: &ClusterState) -> Vec<(FindingCode, String)> {
    analyse_s3_snapshots(state, Distro::K3s, now())
        .into_iter()
        .map(|f| (f.code, f.message.to_string()))
        .collect()
}

const S3_ON: &str =
    r#"["server","--etcd-s3","--etcd-s3-bucket","b","--etcd-snapshot-retention","10"]"#;

#[test]
fn the_13769_window_fires_and_the_fixed_release_does_not() {
    let at = |v: &str| {
        TestCluster::k3s()
            .server_with("s1", v, server(S3_ON, None))
            .build()
    };
    for affected in ["v1.34.5+k3s1", "v1.33.4+k3s1", "v1.32.8+k3s1"] {
        let found = codes(&at(affected));
        assert!(
            found
                .iter()
                .any(|(c, m)| *c == FindingCode::SnapshotS3Retention
                    && m.contains("k3s-io/k3s#13769")),
            "{affected}: {found:?}"
        );
    }
    for fine in [
        "v1.34.6+k3s1",
        "v1.33.3+k3s1",
        "v1.30.14+k3s2",
        "v1.36.0+k3s1",
    ] {
        assert!(
            codes(&at(fine))
                .iter()
                .all(|(c, _)| *c != FindingCode::SnapshotS3Retention),
            "{fine}"
        );
    }
    // Setting the S3 flag closes the window.
    let set = TestCluster::k3s()
        .server_with(
            "s1",
            "v1.34.5+k3s1",
            server(r#"["server","--etcd-s3","--etcd-snapshot-retention","10","--etcd-s3-retention","10"]"#, None),
        )
        .build();
    assert!(codes(&set).is_empty());
    // The fix named is the line's own, or 1.33's (inferred) where the line has none confirmed.
    let fix = |v: &str| {
        analyse_s3_snapshots(&at(v), Distro::K3s, now())[0]
            .remediation
            .clone()
    };
    assert!(
        fix("v1.34.5+k3s1").ends_with("upgrade to v1.34.6+k3s1 or later"),
        "{}",
        fix("v1.34.5+k3s1")
    );
    assert!(fix("v1.32.8+k3s1").contains("v1.33.10+k3s1 (inferred)"));
    // A 1.31.12+ version is in the window by inference, and says so.
    let inferred = codes(&at("v1.31.12+k3s1"));
    assert!(inferred[0].1.contains("(inferred)"), "{inferred:?}");
}

#[test]
fn more_s3_snapshots_than_retention_allows_fires() {
    let mut c = TestCluster::k3s().server_with(
        "s1",
        "v1.34.6+k3s1",
        server(r#"["server","--etcd-s3","--etcd-s3-retention","3"]"#, None),
    );
    for i in 0..4 {
        c = c.snapshot_json(s3_file("s1", i * 60));
    }
    // 4 ≤ 3 + 1 upload in flight.
    assert!(codes(&c.build()).is_empty());
    let mut c = TestCluster::k3s().server_with(
        "s1",
        "v1.34.6+k3s1",
        server(r#"["server","--etcd-s3","--etcd-s3-retention","3"]"#, None),
    );
    for i in 0..6 {
        c = c.snapshot_json(s3_file("s1", i * 60));
    }
    let found = codes(&c.build());
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].1.contains("holds 6 scheduled snapshots") && found[0].1.contains("retention is 3")
    );
}

#[test]
fn retention_is_cluster_wide_with_several_uploaders() {
    let three = |args: &str| {
        TestCluster::k3s()
            .server_with("s1", "v1.34.6+k3s1", server(args, None))
            .server_with("s2", "v1.34.6+k3s1", server(args, None))
            .server_with("s3", "v1.34.6+k3s1", server(args, None))
            .build()
    };
    let found = codes(&three(r#"["server","--etcd-s3"]"#));
    assert_eq!(
        found[0].0,
        FindingCode::SnapshotS3RetentionClusterWide,
        "{found:?}"
    );
    assert!(
        found[0].1.contains("about 1.7 snapshot cycles"),
        "{}",
        found[0].1
    );
    assert!(
        codes(&three(
            r#"["server","--etcd-s3","--etcd-s3-retention","15"]"#
        ))
        .is_empty()
    );
    // Without S3 nothing S3 is judged.
    assert!(codes(&three(r#"["server"]"#)).is_empty());
}

#[test]
fn a_fresh_s3_stamp_without_new_s3_snapshots_is_suspect() {
    let args = r#"["server","--etcd-s3","--etcd-s3-retention","5"]"#;
    let stale = TestCluster::k3s()
        .server_with("s1", "v1.34.6+k3s1", server(args, Some(3)))
        .snapshot_json(s3_file("s1", 14 * 60))
        .build();
    let found = codes(&stale);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, FindingCode::SnapshotS3ListingSuspect);
    let none = TestCluster::k3s()
        .server_with("s1", "v1.34.6+k3s1", server(args, Some(3)))
        .build();
    assert!(codes(&none)[0].1.contains("no S3 snapshot at all"));
    // A snapshot within the 12 h schedule: fine.
    let fine = TestCluster::k3s()
        .server_with("s1", "v1.34.6+k3s1", server(args, Some(3)))
        .snapshot_json(s3_file("s1", 11 * 60))
        .build();
    assert!(codes(&fine).is_empty());
    // A stale S3 stamp is the reconcile's problem, not the listing's.
    let stamp_stale = TestCluster::k3s()
        .server_with("s1", "v1.34.6+k3s1", server(args, Some(60)))
        .build();
    assert!(codes(&stamp_stale).is_empty());
}
