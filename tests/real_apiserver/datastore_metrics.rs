//! The datastore check against the real kube-apiserver (v1.24): its real `/metrics` answer is
//! read and its era's size series found. On the shared bed, which tests only read, so as the
//! admin: that the README's read-only role's `/metrics` rule is enough is shown on a bed of its
//! own, by the NOSPACE test (`datastore_nospace.rs`). The bed's Nodes, if any, publish addresses
//! nobody listens on, so the server behind the connection is read.

use serde_json::Value;

use crate::common::run_as;
use crate::support::envtest::{EnvTest, User};

fn datastore_check(report: &Value) -> Value {
    report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["name"] == "datastore")
        .cloned()
        .unwrap_or_else(|| panic!("no datastore check: {report:#}"))
}

#[test]
fn the_real_apiserver_s_metrics_are_read_and_its_size_series_found() {
    let Some(env) = EnvTest::shared() else {
        return;
    };
    let out = run_as(
        env,
        User::Admin,
        &["check", "-o", "json", "--fail-on", "never"],
    );
    let report: Value = out.json();
    let run = datastore_check(&report);
    assert_eq!(run["ran"], true, "{run:#}\n{}", out.stderr);
    let note = run["note"].as_str().unwrap_or_default();
    assert!(!note.contains("refused"), "{note}");
    assert!(!note.contains("no datastore size"), "{note}");
    // kube-apiserver 1.24 names the size etcd_db_total_size_in_bytes: read from the real text.
    let sizes = report["datastore"].as_array().expect("datastore sizes");
    assert_eq!(sizes.len(), 1, "{report:#}");
    assert_eq!(sizes[0]["metric"], "etcd_db_total_size_in_bytes");
    assert!(sizes[0]["bytes"].as_f64().unwrap() > 0.0, "{sizes:#?}");
}
