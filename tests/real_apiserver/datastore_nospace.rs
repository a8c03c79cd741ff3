//! NOSPACE on a real etcd: the bed's etcd 3.4 restarted with a 32 MiB quota and its metrics
//! on :2381 (as k3s serves them with --etcd-expose-metrics), filled through the real
//! kube-apiserver until it refuses writes. `check`, as the README's read-only role, names the
//! member over its quota while writes fail; after what an operator does (delete, compact to
//! the current revision, defragment, disarm) writes work again and the finding is gone.
//!
//! The simulated server's Node says 127.0.0.1, so its etcd metrics are read from the bed's
//! etcd. Its apiserver address (127.0.0.1:6443) answers nothing, so the apiserver behind the
//! connection is read as well, as on a cluster reached through a load balancer.

use std::time::Instant;

use serde_json::{Value, json};

use crate::common::{run_as, viewer_with_the_read_only_role};
use crate::support::envtest::{EnvTest, User};

const QUOTA: u64 = 32 * 1024 * 1024;
/// Under the 1 MiB a ConfigMap may hold and etcd's 1.5 MiB request limit: about 36 fill it.
const FILLER_BYTES: usize = 900 * 1024;
/// etcd's largest write (its default --max-request-bytes).
const LARGEST_WRITE: f64 = 1.5 * 1024.0 * 1024.0;
const NAMESPACE: &str = "filler";
const NODE: &str = "ip-127-0-0-1";
const REFUSED: &str = "database space exceeded";

fn configmaps() -> String {
    format!("/api/v1/namespaces/{NAMESPACE}/configmaps")
}

fn configmap(name: &str, data: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "data": {"blob": data}
    })
}

/// One write through the apiserver, as any client makes it.
fn write(env: &EnvTest, name: &str, data: &str) -> Result<Value, (u16, String)> {
    env.admin().request(
        "POST",
        &configmaps(),
        "application/json",
        Some(&configmap(name, data)),
    )
}

/// `check -o json ARGS` as the viewer, exiting `code`: the report.
#[track_caller]
fn check(env: &EnvTest, args: &[&str], code: i32) -> Value {
    let mut all = vec!["check", "-o", "json"];
    all.extend(args);
    let out = run_as(env, User::Viewer, &all);
    out.code(code);
    out.json()
}

fn coded<'a>(report: &'a Value, code: &str) -> Vec<&'a Value> {
    report["findings"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter(|f| f["code"] == code)
        .collect()
}

/// The size `check` shows for the member on `NODE`.
fn member_size(report: &Value) -> &Value {
    report["datastore"]
        .as_array()
        .expect("datastore sizes")
        .iter()
        .find(|s| s["server"] == format!("Node {NODE}"))
        .unwrap_or_else(|| panic!("no size for Node {NODE}: {:#}", report["datastore"]))
}

#[test]
fn real_nospace_is_named_while_writes_fail_and_clears_after_compact_defrag_and_disarm() {
    let Some(env) = EnvTest::start("real_nospace") else {
        return;
    };
    let started = Instant::now();
    let etcd = env.restart_etcd_with_quota(QUOTA);
    let restarted = started.elapsed();
    if let Err(e) = env.start_sim(
        "server-1",
        &[
            "--node-name",
            NODE,
            "--internal-ip",
            "127.0.0.1",
            "--version",
            "v1.30.6+k3s1",
            "--snapshots=false",
        ]
        .map(String::from),
    ) {
        panic!("start server-1: {e}");
    }
    viewer_with_the_read_only_role(&env);
    env.admin().create(
        "/api/v1/namespaces",
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}),
    );

    // Fill through the apiserver until it passes etcd's refusal on: HTTP 500, "database space
    // exceeded". etcd refuses a write once size + the write reaches the quota, so where the
    // file's growth ends is chance: at or over the quota, or under it by less than the write
    // refused (a member 12 KiB under its quota takes thousands of small writes and refuses
    // every large one).
    let blob = "x".repeat(FILLER_BYTES);
    let mut filled = 0;
    let refusal = loop {
        match write(&env, &format!("fill-{filled}"), &blob) {
            Ok(_) => filled += 1,
            Err(refused) => break refused,
        }
        assert!(
            filled < 100,
            "100 ConfigMaps of {FILLER_BYTES} B and etcd still takes writes ({} B)",
            etcd.db_size()
        );
    };
    assert_eq!(refusal.0, 500, "{refusal:?}");
    assert!(refusal.1.contains(REFUSED), "{refusal:?}");
    let nospace = started.elapsed();

    // An error found: exit 1.
    let report = check(&env, &[], 1);
    let over = coded(&report, "etcd-db-over-quota");
    assert_eq!(over.len(), 1, "{:#}", report["findings"]);
    let finding = over[0];
    assert_eq!(finding["object"], format!("Node {NODE}"), "{finding:#}");
    assert_eq!(finding["severity"], "error", "{finding:#}");
    let message = finding["message"].as_str().unwrap();
    for said in [
        "The etcd member on ip-127-0-0-1 uses ",
        "of its 32.0 MiB quota",
        "the quota is etcd's quota metric",
        "the size from etcd_mvcc_db_total_size_in_bytes",
        "NOSPACE",
    ] {
        assert!(message.contains(said), "{said:?} not in {message}");
    }
    assert!(
        finding["remediation"]
            .as_str()
            .unwrap()
            .contains("alarm disarm"),
        "{finding:#}"
    );
    let size = member_size(&report);
    assert_eq!(size["quotaBytes"].as_f64(), Some(QUOTA as f64), "{size:#}");
    assert_eq!(size["quotaFrom"], "etcd's quota metric", "{size:#}");
    assert_eq!(size["metric"], "etcd_mvcc_db_total_size_in_bytes");
    let bytes = size["bytes"].as_f64().unwrap();
    // At the quota, or under it by less than the write refused.
    assert!(bytes + LARGEST_WRITE >= QUOTA as f64, "{size:#}");
    if bytes < QUOTA as f64 {
        assert!(message.contains("within etcd's largest write"), "{message}");
    }
    assert!(coded(&report, "etcd-db-near-quota").is_empty());
    // At that moment the cluster is read-only: even a tiny write is refused.
    let tiny = write(&env, "while-full", "1").expect_err("a write while NOSPACE");
    assert!(tiny.0 == 500 && tiny.1.contains(REFUSED), "{tiny:?}");
    let named = started.elapsed();

    // What an operator does: free the space, compact to the current revision so the deleted
    // values' revisions go, defragment to give the pages back, then disarm the alarm, which
    // outlives the size.
    env.admin()
        .request("DELETE", &configmaps(), "application/json", None)
        .unwrap_or_else(|e| panic!("delete the filler while NOSPACE: {e:?}"));
    etcd.compact(etcd.revision());
    etcd.defragment();
    assert!(
        write(&env, "after-defrag", "1").is_err_and(|e| e.1.contains(REFUSED)),
        "the alarm outlives the size: writes stay refused until it is disarmed"
    );
    assert_eq!(
        etcd.alarms()
            .iter()
            .map(|a| a.kind.as_str())
            .collect::<Vec<_>>(),
        ["NOSPACE"]
    );
    etcd.disarm_all();
    assert!(etcd.alarms().is_empty());
    let after = etcd.db_size();
    assert!(after < QUOTA / 4, "{after} B after the defragment");
    write(&env, "after-disarm", "1")
        .unwrap_or_else(|e| panic!("a write after compact, defrag and disarm: {e:?}"));

    // The bed's other findings (the simulated server lost its locks while writes failed) are
    // not this test's.
    let report = check(&env, &["--fail-on", "never"], 0);
    for code in ["etcd-db-over-quota", "etcd-db-near-quota"] {
        let found = coded(&report, code);
        assert!(found.is_empty(), "{code} after the recovery: {found:#?}");
    }
    let size = member_size(&report);
    assert!(
        size["bytes"].as_f64().unwrap() < QUOTA as f64 / 4.0,
        "{size:#}"
    );
    let done = started.elapsed();
    eprintln!(
        "real_nospace: etcd restarted {restarted:?}, {filled} writes to NOSPACE ({bytes} B of {QUOTA} B) \
         {nospace:?}, named {named:?}, cleared {done:?} (after the bed's start)"
    );
}
