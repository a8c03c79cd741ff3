//! `snapshots list|diff|backfill` end to end, against entries written by the simulator's own
//! (independent) implementation of k3s's snapshot controller.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::support::fake_api::{FakeApi, Fault, FaultAction, Role};
use crate::support::harness::k3sdoctor;
use crate::support::k3s_sim::snapshot_entry::{S3ConfigShape, data_key, entry_value};
use crate::support::k3s_sim::{K3sSim, LockStyle, SimConfig};
use crate::support::objects::{
    NOW, extra_metadata, lease, server, snapshot_configmap, snapshot_cr,
};
use crate::support::wait::wait_for;

const AFFECTED: &str = "v1.29.4+k3s1";
/// Hours before NOW (2024-05-31T12:10:40Z).
const T0: i64 = 1_717_142_400;

/// What k3s itself writes for this CR (the simulator's encoder, v1.29.4's s3Config shape).
fn written_by_k3s(cr: &Value) -> (String, String) {
    (data_key(cr), entry_value(cr, S3ConfigShape::Legacy))
}

/// A CR the (working) snapshot controller has already processed: it carries its finalizer.
fn processed(mut cr: Value) -> Value {
    cr["metadata"]["finalizers"] =
        serde_json::json!(["wrangler.cattle.io/managed-etcd-snapshots-controller"]);
    cr
}

fn base(core: &str, etcd: &str) -> Vec<Value> {
    base_on(AFFECTED, core, etcd)
}

/// Three servers on `version`, `k3s` on `core`, `k3s-etcd` on `etcd`.
fn base_on(version: &str, core: &str, etcd: &str) -> Vec<Value> {
    vec![
        server("s1", version),
        server("s2", version),
        server("s3", version),
        lease("k3s", core, 1),
        lease("k3s-etcd", etcd, 1),
    ]
}

fn diff_json(fake: &FakeApi) -> (i32, Value) {
    let out = k3sdoctor(["snapshots", "diff", "-o", "json", "--now", NOW])
        .cluster(fake, Role::ReadOnly)
        .run();
    (out.code, out.json())
}

fn codes(report: &Value) -> Vec<String> {
    crate::support::report_checks::severity_codes(&report["findings"])
}

fn data(fake: &FakeApi) -> serde_json::Map<String, Value> {
    fake.get("ConfigMap", Some("kube-system"), "k3s-etcd-snapshots")
        .and_then(|cm| cm["data"].as_object().cloned())
        .unwrap_or_default()
}

#[test]
fn without_extra_metadata_an_absent_configmap_is_healthy() {
    let mut objects = base("s1", "s1");
    objects.extend([
        processed(snapshot_cr("s1", T0, false)),
        processed(snapshot_cr("s2", T0 + 60, false)),
    ]);
    let fake = FakeApi::with_objects(objects);
    let (code, report) = diff_json(&fake);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["kind"], "SnapshotDiff");
    assert!(codes(&report).is_empty(), "{report:#}");
    k3sdoctor(["snapshots", "list", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(0)
        .stdout_has("not expected");
}

#[test]
fn missing_entries_on_a_split_name_the_lease_repair() {
    let (a, b) = (
        snapshot_cr("s1", T0, true),
        snapshot_cr("s2", T0 + 60, true),
    );
    let mut objects = base("s1", "s2");
    objects.extend([
        a.clone(),
        b,
        extra_metadata("k3s"),
        snapshot_configmap("k3s", &[written_by_k3s(&a)]),
    ]);
    let fake = FakeApi::with_objects(objects);
    let (code, report) = diff_json(&fake);
    assert_eq!(code, 1);
    let missing = &report["findings"][0];
    assert_eq!(missing["code"], "snapshot-missing-from-configmap");
    assert!(
        missing["message"]
            .as_str()
            .unwrap()
            .contains("Cause: k3s and k3s-etcd are held by different servers")
    );
    assert!(
        missing["remediation"]
            .as_str()
            .unwrap()
            .starts_with("k3sdoctor leases follow --fix")
    );
    // The diff lists only what differs; the list has every snapshot.
    let states = |report: &Value| -> Vec<String> {
        report["snapshots"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["state"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(states(&report), ["missing"], "{report:#}");
    let list: Value = k3sdoctor(["snapshots", "list", "-o", "json", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .json();
    let mut listed = states(&list);
    listed.sort();
    assert_eq!(
        listed,
        ["missing", "present"],
        "the simulator's bytes must match k3sdoctor's rules: {list:#}"
    );
}

#[test]
fn orphaned_and_stale_entries() {
    let a = processed(snapshot_cr("s1", T0, true));
    let (key, value) = written_by_k3s(&a);
    let stale = value.replace("\"size\":8417312", "\"size\":1");
    let gone = written_by_k3s(&snapshot_cr("s3", T0 - 3600, true));
    let mut objects = base("s1", "s1");
    objects.extend([
        a,
        extra_metadata("k3s"),
        snapshot_configmap("k3s", &[(key, stale), gone]),
    ]);
    let fake = FakeApi::with_objects(objects);
    let (code, report) = diff_json(&fake);
    assert_eq!(code, 1);
    assert_eq!(
        codes(&report),
        [
            "warning/snapshot-stale-in-configmap",
            "warning/snapshot-orphaned-in-configmap"
        ]
    );
    assert_eq!(report["snapshots"][0]["differences"][0]["field"], "size");
}

/// ~10 KiB entries (Rancher's cluster spec in the metadata).
fn big_cr(node: &str, ts: i64) -> Value {
    let mut cr = processed(snapshot_cr(node, ts, true));
    cr["spec"]["metadata"]["provisioning-cluster-spec"] = Value::String("A".repeat(7600));
    cr
}

/// 100 newer snapshots whose entries fill the ConfigMap to just under 1 MiB, and `older`
/// snapshots k3s has pruned.
fn near_limit(older: usize) -> Vec<Value> {
    let mut objects = base("s1", "s1");
    let mut entries = Vec::new();
    for i in 0..100 {
        let cr = big_cr("s2", T0 + 1000 + i);
        entries.push(written_by_k3s(&cr));
        objects.push(cr);
    }
    for i in 0..older {
        objects.push(big_cr("s1", T0 + i as i64));
    }
    objects.push(extra_metadata("k3s"));
    objects.push(snapshot_configmap("k3s", &entries));
    objects
}

#[test]
fn old_entries_pruned_near_the_limit_are_explained_not_errors() {
    let fake = FakeApi::with_objects(near_limit(3));
    let (code, report) = diff_json(&fake);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(codes(&report), ["info/snapshot-pruned-for-size"]);
}

#[test]
fn backfill_never_produces_a_configmap_the_apiserver_rejects() {
    // A newer missing snapshot must go in, so the oldest entries go, as k3s does.
    let mut objects = near_limit(0);
    objects.push(big_cr("s3", T0 + 5000));
    let fake = FakeApi::with_objects(objects);
    let out = k3sdoctor(["snapshots", "backfill", "--fix", "--yes", "--now", NOW])
        .cluster(&fake, Role::Admin)
        .run();
    out.code(0)
        .stdout_has("drop")
        .stdout_has("oldest; dropped to stay under 1 MiB");
    let d = data(&fake);
    let bytes: usize = d.values().map(|v| v.as_str().unwrap().len()).sum();
    assert!(bytes <= 1_048_576, "{bytes}");
    assert!(d.contains_key("local-on-demand-s3-1717147400"));
    assert!(
        !d.contains_key("local-on-demand-s2-1717143400"),
        "the oldest entry should be gone"
    );
    assert!(
        out.stderr
            .contains("saved ConfigMap kube-system/k3s-etcd-snapshots to "),
        "{}",
        out.stderr
    );
}

#[test]
fn backfill_refuses_what_cannot_fit() {
    let mut objects = base("s1", "s1");
    let mut one = snapshot_cr("s1", T0, true);
    one["spec"]["metadata"]["provisioning-cluster-spec"] = Value::String("A".repeat(800_000));
    let mut two = snapshot_cr("s2", T0 + 1, true);
    two["spec"]["metadata"]["provisioning-cluster-spec"] = Value::String("B".repeat(800_000));
    objects.extend([one, two, extra_metadata("k3s")]);
    let fake = FakeApi::with_objects(objects);
    k3sdoctor(["snapshots", "backfill", "--fix", "--yes", "--now", NOW])
        .cluster(&fake, Role::Admin)
        .run()
        .code(2)
        .one_line_error()
        .stderr_has("cannot fit the apiserver's 1 MiB limit");
    assert!(fake.writes().is_empty());
}

#[test]
fn backfill_with_a_read_only_token_writes_nothing() {
    let mut objects = base("s1", "s2");
    objects.extend([snapshot_cr("s1", T0, true), extra_metadata("k3s")]);
    let fake = FakeApi::with_objects(objects);
    k3sdoctor(["snapshots", "backfill", "--fix", "--yes", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(3)
        .one_line_error()
        .stderr_has("not allowed to create configmaps");
    assert!(fake.writes().is_empty());
}

#[test]
fn backfill_fix_on_a_dump_is_refused() {
    k3sdoctor([
        "--from-file",
        &crate::support::harness::repo_path("tests/fixtures/split-cluster")
            .display()
            .to_string(),
    ])
    .arg("snapshots")
    .arg("backfill")
    .arg("--fix")
    .run()
    .code(2)
    .one_line_error()
    .stderr_has("a dump cannot be repaired");
}

#[test]
fn the_bundled_dump_shows_its_missing_entries() {
    let dump = crate::support::harness::repo_path("tests/fixtures/split-cluster")
        .display()
        .to_string();
    k3sdoctor(["--from-file", &dump, "snapshots", "diff"])
        .run()
        .code(1)
        .stdout_has("missing  local-etcd-snapshot-prod-k3s-2-1717156801")
        .stdout_has("orphaned local-etcd-snapshot-prod-k3s-1-1716811200")
        .stderr_has("Cause: k3s and k3s-etcd are held by different servers");
}

/// Three simulated servers on an affected version, split, with snapshots taken meanwhile.
fn split_sim() -> (Arc<FakeApi>, SimConfig, K3sSim) {
    let fake = Arc::new(FakeApi::start());
    let mut config = SimConfig::new("k3s", AFFECTED, LockStyle::Lease, true, &["s1", "s2", "s3"]);
    config.s3_shape = S3ConfigShape::Legacy;
    K3sSim::seed_holders(&fake, &config, "s1", "s2");
    fake.put(extra_metadata("k3s"));
    for (i, node) in ["s1", "s2", "s3"].into_iter().enumerate() {
        fake.put(snapshot_cr(node, T0 + i as i64, true));
    }
    let sim = K3sSim::start(fake.clone(), config.clone());
    assert!(wait_for(Duration::from_secs(20), || sim
        .log()
        .iter()
        .any(|l| l == "s2 acquired k3s-etcd")));
    (fake, config, sim)
}

#[test]
fn after_the_lease_fix_k3s_itself_makes_the_diff_clean() {
    let (fake, _config, sim) = split_sim();
    assert_eq!(diff_json(&fake).0, 1);
    k3sdoctor(["leases", "follow", "--fix", "--yes", "--timeout", "30s"])
        .cluster(&fake, Role::Admin)
        .run()
        .code(0);
    let clean = wait_for(Duration::from_secs(20), || diff_json(&fake).0 == 0);
    assert!(
        clean,
        "diff never became clean: {:#}\n{:?}",
        diff_json(&fake).1,
        sim.log()
    );
    assert_eq!(data(&fake).len(), 3);
}

#[test]
fn backfill_alone_makes_the_diff_clean_while_the_split_remains() {
    let (fake, _config, _sim) = split_sim();
    // An entry of a snapshot that is gone: no word may say the idle controller removes it.
    let orphan = "local-on-demand-s1-1717000000";
    let mut cm = fake
        .get("ConfigMap", Some("kube-system"), "k3s-etcd-snapshots")
        .unwrap_or_else(|| snapshot_configmap("k3s", &[]));
    cm["data"][orphan] =
        serde_json::json!("{\"name\":\"on-demand-s1-1717000000\",\"nodeName\":\"s1\"}");
    fake.put(cm);
    let out = k3sdoctor(["snapshots", "backfill", "--fix", "--yes"])
        .cluster(&fake, Role::Admin)
        .run();
    // Written and verified; the exit is the verdict: the idle controller (the split) remains,
    // and the person is told so, with the repair that ends it.
    out.code(1)
        .stdout_has("snapshot-controller-idle")
        .stderr_has("the split of the k3s and k3s-etcd locks remains")
        .stderr_has("leases follow --fix to end it");
    let said = out.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        said.contains(&format!("{orphan} (k3s keeps it)")),
        "{}",
        out.stdout
    );
    assert!(!said.contains("reconcile removes it ("), "{}", out.stdout);
    assert_eq!(data(&fake).len(), 4);
    k3sdoctor(["leases"])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(1)
        .stderr_has("lease-split");
    // The entries are k3s's own bytes: the simulator's encoder agrees with them.
    for cr in fake.list("ETCDSnapshotFile") {
        let (key, value) = written_by_k3s(&cr);
        assert_eq!(data(&fake)[&key], value);
    }
}

#[test]
fn a_controller_write_during_backfill_loses_no_entry() {
    let (fake, config, sim) = split_sim();
    // A 2021-format entry: neither k3s's controller nor a backfill without --prune touches it.
    let foreign = (
        "etcd-snapshot-s9-1634567890".to_string(),
        "{\"name\":\"etcd-snapshot-s9-1634567890\"}".to_string(),
    );
    fake.put(snapshot_configmap("k3s", std::slice::from_ref(&foreign)));
    // Hold the dry run; meanwhile the lock moves and k3s's controller on s2 starts writing.
    fake.inject(Fault::new(
        Some("PUT"),
        "dryRun=All",
        FaultAction::Delay(Duration::from_secs(2)),
    ));
    fake.inject(Fault::new(
        Some("POST"),
        "dryRun=All",
        FaultAction::Delay(Duration::from_secs(2)),
    ));
    let mover = {
        let fake = fake.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(400));
            let mut l = fake.get("Lease", Some("kube-system"), "k3s").unwrap();
            l["spec"]["holderIdentity"] = Value::String("s2".into());
            fake.replace(l).unwrap();
        })
    };
    let out = k3sdoctor(["snapshots", "backfill", "--fix", "--yes"])
        .cluster(&fake, Role::Admin)
        .run();
    mover.join().unwrap();
    assert!(
        out.code == 0,
        "{}\n{}\n{:?}",
        out.stdout,
        out.stderr,
        sim.log()
    );
    let d = data(&fake);
    assert!(
        d.contains_key(&foreign.0),
        "the foreign entry was lost: {d:?}"
    );
    for cr in fake.list("ETCDSnapshotFile") {
        assert_eq!(d[&data_key(&cr)], entry_value(&cr, config.s3_shape));
    }
}

#[test]
fn backfill_works_on_rke2_names() {
    let v = "v1.29.5+rke2r1";
    let mut cr = snapshot_cr("r1", T0, true);
    cr["metadata"]["labels"] =
        serde_json::json!({"etcd.rke2.cattle.io/snapshot-storage-node": "r1"});
    let fake = FakeApi::with_objects(vec![
        server("r1", v),
        server("r2", v),
        server("r3", v),
        lease("rke2", "r1", 1),
        lease("rke2-etcd", "r2", 1),
        extra_metadata("rke2"),
        cr.clone(),
    ]);
    let out = k3sdoctor(["snapshots", "diff", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    out.code(1)
        .stderr_has("ConfigMap kube-system/rke2-etcd-snapshots");
    k3sdoctor(["snapshots", "backfill", "--fix", "--yes", "--now", NOW])
        .cluster(&fake, Role::Admin)
        .run()
        .code(1)
        .stdout_has("No differences.")
        .stdout_has("snapshot-controller-idle");
    let cm = fake
        .get("ConfigMap", Some("kube-system"), "rke2-etcd-snapshots")
        .unwrap();
    assert_eq!(
        cm["data"][data_key(&cr)],
        entry_value(&cr, S3ConfigShape::Legacy)
    );
    assert!(
        fake.get("ConfigMap", Some("kube-system"), "k3s-etcd-snapshots")
            .is_none()
    );
}

#[test]
fn the_metadata_rule_holds_in_every_build_of_its_first_patch() {
    // k3s-io/k3s#8834 was validated on v1.28.4-rc1+k3s1: k3s1 builds skip CRs without metadata
    // too, so such a CR without an entry is expected there, not missing.
    for (version, missing) in [
        ("v1.28.4+k3s1", false),
        ("v1.27.8+k3s1", false),
        ("v1.26.11+k3s1", false),
        ("v1.28.3+k3s1", true),
    ] {
        let fake = FakeApi::with_objects(base_on(version, "s1", "s1").into_iter().chain([
            processed(snapshot_cr("s1", T0, false)),
            snapshot_configmap("k3s", &[]),
        ]));
        let (code, report) = diff_json(&fake);
        assert_eq!(
            codes(&report).contains(&"error/snapshot-missing-from-configmap".to_string()),
            missing,
            "{version}: {report:#}"
        );
        assert_eq!(code, i32::from(missing), "{version}");
    }
}

#[test]
fn backfill_escapes_control_characters_as_the_writers_go_release_does() {
    // Go 1.22 changed encoding/json to write \b and \f; v1.29.4 was built with Go 1.21,
    // v1.29.7 with Go 1.22, and the controller compares the bytes.
    use base64::Engine;
    for (version, expected) in [
        ("v1.29.4+k3s1", "\\u0008\\u000c"),
        ("v1.29.7+k3s1", "\\b\\f"),
    ] {
        let mut cr = processed(snapshot_cr("s1", T0, true));
        cr["spec"]["metadata"]["note"] = Value::String("a\u{8}\u{c}b".into());
        let fake = FakeApi::with_objects(
            base_on(version, "s1", "s1")
                .into_iter()
                .chain([extra_metadata("k3s"), cr]),
        );
        // Plain words by default, the Go escaping with -v.
        let plan = k3sdoctor(["snapshots", "backfill", "--now", NOW])
            .cluster(&fake, Role::ReadOnly)
            .run();
        plan.stdout_has(&format!(
            "exactly as {version} writes them, so k3s finds nothing to rewrite"
        ));
        assert!(!plan.stdout.contains("Go "), "{}", plan.stdout);
        k3sdoctor(["snapshots", "backfill", "-v", "--now", NOW])
            .cluster(&fake, Role::ReadOnly)
            .run()
            .stdout_has(&format!("byte for byte as {version} writes them ("));
        k3sdoctor(["snapshots", "backfill", "--fix", "--yes", "--now", NOW])
            .cluster(&fake, Role::Admin)
            .run()
            .code(0);
        let value = data(&fake)
            .values()
            .next()
            .and_then(Value::as_str)
            .map(str::to_string)
            .expect("one entry");
        let entry: Value = serde_json::from_str(&value).unwrap();
        let metadata = base64::engine::general_purpose::STANDARD
            .decode(entry["metadata"].as_str().unwrap())
            .unwrap();
        let metadata = String::from_utf8(metadata).unwrap();
        assert!(
            metadata.contains(&format!("a{expected}b")),
            "{version}: {metadata}"
        );
    }
}

#[test]
fn a_node_named_s3_keeps_its_entry_under_the_key_k3s_last_wrote() {
    let cr = processed(snapshot_cr("s3", T0, true));
    let (local_key, value) = written_by_k3s(&cr);
    let s3_key = local_key.replacen("local-", "s3-", 1);
    let fake = FakeApi::with_objects(base("s1", "s1").into_iter().chain([
        extra_metadata("k3s"),
        cr,
        snapshot_configmap("k3s", &[(s3_key.clone(), value)]),
    ]));
    k3sdoctor(["snapshots", "diff", "-v", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(0)
        .stderr_has(&format!("is keyed {s3_key}, not {local_key}"));
}

#[test]
fn prune_removes_exactly_what_k3s_reconcile_would() {
    // db has reconciled its local snapshots, web has not, and nobody has synced S3.
    let mut db = server("db", AFFECTED);
    db["metadata"]["annotations"]["etcd.k3s.cattle.io/local-snapshots-timestamp"] =
        serde_json::json!("2024-05-31T12:00:00Z");
    let live = processed(snapshot_cr("web", T0 + 100, true));
    let orphan = |node: &str, ts: i64| written_by_k3s(&snapshot_cr(node, ts, true));
    let (db_key, db_value) = orphan("db", T0);
    let (web_key, web_value) = orphan("web", T0 + 1);
    let s3_key = web_key.replacen("local-", "s3-", 1);
    let fake = FakeApi::with_objects([
        db,
        server("web", AFFECTED),
        server("cache", AFFECTED),
        lease("k3s", "db", 1),
        lease("k3s-etcd", "db", 1),
        extra_metadata("k3s"),
        live.clone(),
        snapshot_configmap(
            "k3s",
            &[
                written_by_k3s(&live),
                (db_key.clone(), db_value),
                (web_key.clone(), web_value.clone()),
                (s3_key.clone(), web_value),
            ],
        ),
    ]);
    let (_, report) = diff_json(&fake);
    let fates: Vec<(String, bool)> = report["orphaned"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["key"].as_str().unwrap().to_string(),
                o["reconcile"]["removes"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        fates,
        [
            (db_key.clone(), true),
            (web_key.clone(), false),
            (s3_key.clone(), false)
        ]
    );
    k3sdoctor([
        "snapshots",
        "backfill",
        "--fix",
        "--prune",
        "--yes",
        "--now",
        NOW,
    ])
    .cluster(&fake, Role::Admin)
    .run()
    .stdout_has(&format!("remove  {db_key}"))
    .stdout_has(&format!("keep    {web_key}"));
    let d = data(&fake);
    assert!(!d.contains_key(&db_key));
    assert!(d.contains_key(&web_key) && d.contains_key(&s3_key), "{d:?}");
}

#[test]
fn a_gap_left_by_a_reconcile_prune_is_explained_not_missing() {
    // 46 entries remain, far from 1 MiB; the 84 older CRs would have passed the limit with them.
    let mut objects = base("s1", "s1");
    let mut entries = Vec::new();
    for i in 0..130 {
        let cr = big_cr("s2", T0 + i);
        if i >= 84 {
            entries.push(written_by_k3s(&cr));
        }
        objects.push(cr);
    }
    objects.push(extra_metadata("k3s"));
    objects.push(snapshot_configmap("k3s", &entries));
    let fake = FakeApi::with_objects(objects);
    let (code, report) = diff_json(&fake);
    assert_eq!(codes(&report), ["info/snapshot-pruned-for-size"]);
    assert_eq!(code, 0);
}

/// An orphan whose node k3s cannot read from its key is explained in plain
/// words; the key trim behind it is shown with -v and kept in JSON.
#[test]
fn an_orphans_reason_is_plain_and_the_key_trim_is_for_verbose_and_json() {
    let mut db = server("db", AFFECTED);
    db["metadata"]["annotations"]["etcd.k3s.cattle.io/local-snapshots-timestamp"] =
        serde_json::json!("2024-05-31T12:00:00Z");
    let live = processed(snapshot_cr("db", T0 + 100, true));
    let (gone_key, gone_value) = written_by_k3s(&snapshot_cr("ip-10-0-0-11", T0, true));
    let fake = FakeApi::with_objects([
        db,
        lease("k3s", "db", 1),
        lease("k3s-etcd", "db", 1),
        extra_metadata("k3s"),
        live.clone(),
        snapshot_configmap(
            "k3s",
            &[written_by_k3s(&live), (gone_key.clone(), gone_value)],
        ),
    ]);
    let diff = |extra: &[&str]| {
        k3sdoctor(["snapshots", "diff", "--now", NOW])
            .args(extra)
            .cluster(&fake, Role::ReadOnly)
            .run()
    };
    let plain = diff(&[]);
    plain
        .code(1)
        .stdout_has(&format!("orphaned {gone_key}"))
        .stdout_has("k3s cannot tell which etcd node this entry belongs to");
    assert!(!plain.stdout.contains("0-8"), "{}", plain.stdout);
    diff(&["-v"]).stdout_has("trailing digits 0-8 and dashes trimmed");
    let (_, report) = diff_json(&fake);
    let detail = report["orphaned"][0]["reconcile"]["detail"]
        .as_str()
        .unwrap_or_default();
    assert!(
        detail.contains("k3s matches Node names against"),
        "{report}"
    );
}
