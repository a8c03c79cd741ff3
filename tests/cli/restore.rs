//! `snapshots restore --from-backup FILE`: the backup `backfill --fix` writes is restorable with
//! one command, with a plan, a dry run, a confirmation and a resourceVersion precondition.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::support::fake_api::{FakeApi, Fault, FaultAction, Role};
use crate::support::harness::k3sdoctor;
use crate::support::k3s_sim::snapshot_entry::{S3ConfigShape, entry_value};
use crate::support::objects::{
    NOW, extra_metadata, lease, server, snapshot_configmap, snapshot_cr,
};

const V: &str = "v1.29.4+k3s1";
const T0: i64 = 1_717_142_400;

fn data(fake: &FakeApi) -> Value {
    fake.get("ConfigMap", Some("kube-system"), "k3s-etcd-snapshots")
        .unwrap()["data"]
        .clone()
}

/// A cluster whose snapshot ConfigMap holds one foreign entry and misses one snapshot; a
/// backfill with `--backup` saves the ConfigMap as it was, then adds the missing entry.
pub(crate) fn backed_up() -> (FakeApi, tempfile::TempDir, std::path::PathBuf, Value) {
    let foreign = (
        "etcd-snapshot-s9-1634567890".to_string(),
        "{\"name\":\"etcd-snapshot-s9-1634567890\"}".to_string(),
    );
    let mut cr = snapshot_cr("s1", T0, true);
    cr["metadata"]["finalizers"] =
        serde_json::json!(["wrangler.cattle.io/managed-etcd-snapshots-controller"]);
    let fake = FakeApi::with_objects(vec![
        server("s1", V),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
        extra_metadata("k3s"),
        snapshot_configmap("k3s", std::slice::from_ref(&foreign)),
        cr.clone(),
    ]);
    let original = data(&fake);
    let dir = tempfile::tempdir().unwrap();
    let backup = dir.path().join("before.json");
    backfill_with_backup(&fake, &backup).code(0);
    assert_eq!(data(&fake).as_object().unwrap().len(), 2);
    assert_eq!(
        data(&fake)[crate::support::k3s_sim::snapshot_entry::data_key(&cr)],
        entry_value(&cr, S3ConfigShape::Legacy)
    );
    (fake, dir, backup, original)
}

/// `snapshots backfill --fix --yes`, backing the ConfigMap up to `backup` first.
pub(crate) fn backfill_with_backup(
    fake: &FakeApi,
    backup: &std::path::Path,
) -> crate::support::harness::Output {
    k3sdoctor([
        "snapshots",
        "backfill",
        "--fix",
        "--yes",
        "--now",
        NOW,
        "--backup",
    ])
    .arg(backup.display().to_string())
    .cluster(fake, Role::Admin)
    .run()
}

pub(crate) fn restore(
    fake: &FakeApi,
    backup: &std::path::Path,
    extra: &[&str],
) -> crate::support::harness::Output {
    k3sdoctor(["snapshots", "restore", "--now", NOW, "--from-backup"])
        .arg(backup.display().to_string())
        .args(extra)
        .cluster(fake, Role::Admin)
        .run()
}

#[test]
fn a_backfill_backup_is_restored_exactly() {
    let (fake, dir, backup, original) = backed_up();
    // Someone changes the ConfigMap after the backfill, too.
    let mut cm = fake
        .get("ConfigMap", Some("kube-system"), "k3s-etcd-snapshots")
        .unwrap();
    cm["data"]["added-later"] = Value::String("x".into());
    fake.replace(cm).unwrap();
    let writes_before = fake.writes().len();

    // The plan alone writes nothing and exits 1.
    restore(&fake, &backup, &[])
        .code(1)
        .stdout_has("Plan: restore ConfigMap kube-system/k3s-etcd-snapshots from ")
        .stdout_has("0 to add, 0 to update, 2 to remove")
        .stderr_has("nothing was written");
    // No terminal and no --yes: refused before any write.
    restore(&fake, &backup, &["--fix"])
        .code(2)
        .one_line_error()
        .stderr_has("re-run with --yes");
    assert_eq!(fake.writes().len(), writes_before, "{:?}", fake.writes());

    let saved = dir.path().join("current.json");
    let out = restore(
        &fake,
        &backup,
        &["--fix", "--yes", "--backup", &saved.display().to_string()],
    );
    // Restored and verified; the exit is the verdict of the restored state: the snapshot that
    // the backup lacks is missing again.
    out.code(1)
        .stderr_has("server-side dry run: accepted")
        .stderr_has("saved ConfigMap kube-system/k3s-etcd-snapshots to ")
        .stdout_has("snapshot-missing-from-configmap");
    assert_eq!(data(&fake), original);
    let puts: Vec<String> = fake
        .writes()
        .into_iter()
        .skip(writes_before)
        .filter(|w| {
            w.starts_with("PUT /api/v1/namespaces/kube-system/configmaps/k3s-etcd-snapshots")
        })
        .collect();
    assert_eq!(puts.len(), 2, "a dry run, then the write: {puts:?}");
    assert!(puts[0].contains("dryRun=All"), "{puts:?}");
    // The current object was saved before it changed: it holds the later entry.
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    assert_eq!(saved["data"]["added-later"], "x");

    // Restoring again needs nothing; the exit is the cluster's verdict.
    restore(&fake, &backup, &["--fix", "--yes", "--fail-on", "never"])
        .code(0)
        .stdout_has("already holds exactly the data");
}

#[test]
fn a_change_after_the_read_stops_the_restore_and_loses_nothing() {
    let (fake, _dir, backup, _original) = backed_up();
    let fake = Arc::new(fake);
    // Hold the dry run; meanwhile k3s's controller writes an entry.
    fake.inject(Fault::new(
        Some("PUT"),
        "dryRun=All",
        FaultAction::Delay(Duration::from_millis(800)),
    ));
    // Only this run's requests: the set-up's own dry runs must not release the writer.
    fake.clear_requests();
    let writer = {
        let fake = fake.clone();
        std::thread::spawn(move || {
            // Once the dry run has arrived (and is held), not after a fixed time: a slow start
            // under load would otherwise let the change land before the read.
            crate::support::wait::wait_for(Duration::from_secs(60), || {
                fake.requests()
                    .iter()
                    .any(|r| r.method == "PUT" && r.query.contains("dryRun=All"))
            });
            let mut cm = fake
                .get("ConfigMap", Some("kube-system"), "k3s-etcd-snapshots")
                .unwrap();
            cm["data"]["written-meanwhile"] = Value::String("k3s".into());
            fake.replace(cm).unwrap();
        })
    };
    let out = restore(&fake, &backup, &["--fix", "--yes"]);
    writer.join().unwrap();
    out.code(4)
        .one_line_error()
        .stderr_has("changed since it was read (409); nothing was written");
    assert_eq!(data(&fake)["written-meanwhile"], "k3s");
    assert_eq!(data(&fake).as_object().unwrap().len(), 3);
}

#[test]
fn a_backup_of_another_object_or_no_backup_is_refused() {
    let (fake, dir, _backup, _original) = backed_up();
    let other = dir.path().join("coredns.json");
    std::fs::write(
        &other,
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"coredns","namespace":"kube-system"},"data":{}}"#,
    )
    .unwrap();
    restore(&fake, &other, &["--fix", "--yes"])
        .code(2)
        .one_line_error()
        .stderr_has("the backup holds ConfigMap kube-system/coredns");
    restore(&fake, &dir.path().join("nope.json"), &[])
        .code(3)
        .one_line_error()
        .stderr_has("cannot read backup");
}

/// The ConfigMap deleted and created again since the backup: another object (another UID),
/// so the plan says so and the write needs `--force`. The fake serves no Namespaces, so the
/// backup could not record the cluster's identity either, which the plan also says.
#[test]
fn a_recreated_configmap_is_restored_only_with_force() {
    let (fake, _dir, backup, original) = backed_up();
    let old_uid = fake
        .get("ConfigMap", Some("kube-system"), "k3s-etcd-snapshots")
        .unwrap()["metadata"]["uid"]
        .as_str()
        .unwrap()
        .to_string();
    fake.remove("ConfigMap", Some("kube-system"), "k3s-etcd-snapshots");
    fake.put(snapshot_configmap("k3s", &[]));
    let new_uid = fake
        .get("ConfigMap", Some("kube-system"), "k3s-etcd-snapshots")
        .unwrap()["metadata"]["uid"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(old_uid, new_uid);
    let writes_before = fake.writes().len();

    restore(&fake, &backup, &[])
        .code(1)
        .stdout_has(&format!(
            "needs --force: ConfigMap kube-system/k3s-etcd-snapshots was recreated since the backup (UID {old_uid} \
             then, {new_uid} now)"
        ))
        .stdout_has("needs --force: the backup records no cluster identity");
    restore(&fake, &backup, &["--fix", "--yes"])
        .code(2)
        .one_line_error()
        .stderr_has("recreated since the backup")
        .stderr_has("re-run with --force")
        .stderr_has("nothing was written");
    assert_eq!(fake.writes().len(), writes_before, "{:?}", fake.writes());

    restore(&fake, &backup, &["--fix", "--yes", "--force"])
        .stderr_has("server-side dry run: accepted");
    assert_eq!(data(&fake), original);
}

/// A backup from before the identity was recorded (no annotation) still restores onto the
/// very ConfigMap it was taken from: the same UID is the same object, on the same cluster.
#[test]
fn an_old_backup_without_identity_restores_onto_its_own_configmap() {
    let (fake, _dir, backup, original) = backed_up();
    let mut saved: Value =
        serde_json::from_str(&std::fs::read_to_string(&backup).unwrap()).unwrap();
    if let Some(annotations) = saved["metadata"]["annotations"].as_object_mut() {
        annotations.remove("k3sdoctor.io/cluster-id");
    }
    std::fs::write(&backup, serde_json::to_vec(&saved).unwrap()).unwrap();
    let out = restore(&fake, &backup, &["--fix", "--yes"]);
    assert!(!out.stdout.contains("needs --force"), "{}", out.stdout);
    out.stderr_has("wrote ConfigMap kube-system/k3s-etcd-snapshots");
    assert_eq!(data(&fake), original);
}

/// A backup that names no namespace could be of any namespace's ConfigMap: refused.
#[test]
fn a_backup_without_a_namespace_is_refused() {
    let (fake, _dir, backup, _original) = backed_up();
    let mut saved: Value =
        serde_json::from_str(&std::fs::read_to_string(&backup).unwrap()).unwrap();
    saved["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("namespace");
    std::fs::write(&backup, serde_json::to_vec(&saved).unwrap()).unwrap();
    let writes_before = fake.writes().len();
    restore(&fake, &backup, &["--fix", "--yes", "--force"])
        .code(2)
        .one_line_error()
        .stderr_has("without a namespace")
        .stderr_has("of another namespace; snapshots restore only puts back backups of")
        .stderr_has("as snapshots backfill --fix saved them")
        .stderr_has("nothing was written");
    assert_eq!(fake.writes().len(), writes_before);
}

/// A dry run the API server refuses (an invalid or over-1-MiB restore) changed nothing: exit 4
/// with "nothing was written", as the README's failure table says, and nothing is saved.
#[test]
fn a_refused_dry_run_of_a_restore_writes_nothing_and_says_so() {
    for code in [413, 422] {
        let (fake, dir, backup, _original) = backed_up();
        let before = data(&fake);
        fake.inject(Fault::status(
            "PUT",
            "configmaps/k3s-etcd-snapshots?&dryRun=All",
            code,
        ));
        let saved = dir.path().join("current.json");
        restore(
            &fake,
            &backup,
            &["--fix", "--yes", "--backup", &saved.display().to_string()],
        )
        .code(4)
        .one_line_error()
        .stderr_has("dry-run update configmap kube-system/k3s-etcd-snapshots")
        .stderr_has("nothing was written");
        assert_eq!(data(&fake), before, "HTTP {code} changed the ConfigMap");
        assert!(
            !saved.exists(),
            "a backup was saved for a write that never came"
        );
    }
}

/// A hand-edited backup that carries this ConfigMap's UID is restored
/// without `--force`, as documented, but its plan names every entry whose node is not a
/// Node here or whose S3 location none of this cluster's snapshots use.
#[test]
fn a_backup_naming_other_nodes_or_s3_locations_shows_them_in_its_plan() {
    let (fake, dir, backup, _original) = backed_up();
    let mut edited: Value =
        serde_json::from_str(&std::fs::read_to_string(&backup).unwrap()).unwrap();
    let entry = |node: &str, bucket: Option<&str>| {
        let mut value = serde_json::json!({
            "name": format!("etcd-snapshot-{node}-1717142400"), "location": "file:///db/x",
            "nodeName": node, "createdAt": "2024-05-31T08:00:00Z", "size": 1,
            "status": "successful", "compressed": false,
        });
        if let Some(bucket) = bucket {
            value["s3Config"] = serde_json::json!({"endpoint": "s3.example.org", "bucket": bucket});
        }
        Value::String(value.to_string())
    };
    edited["data"]["etcd-snapshot-s1-ours"] = entry("s1", None);
    edited["data"]["etcd-snapshot-s7-theirs"] = entry("s7", None);
    edited["data"]["s3-etcd-snapshot-s1-theirs"] = entry("s1", Some("their-bucket"));
    let edited_path = dir.path().join("edited.json");
    std::fs::write(&edited_path, edited.to_string()).unwrap();

    let out = restore(&fake, &edited_path, &["-o", "json"]);
    out.code(1);
    let result: Value = out.json();
    assert_eq!(
        result["plan"]["foreign"],
        serde_json::json!([
            {"key": "etcd-snapshot-s7-theirs", "unknownNode": "s7"},
            {"key": "s3-etcd-snapshot-s1-theirs",
             "unknownS3Location": "s3://their-bucket at s3.example.org"},
        ])
    );
    assert!(result["plan"].get("needsForce").is_none(), "{result}");
    // Shown, not refused: the same ConfigMap UID is this cluster's, so no --force is needed.
    let out = restore(
        &fake,
        &edited_path,
        &["--fix", "--yes", "--fail-on", "never"],
    );
    out.code(0)
        .stdout_has("foreign: etcd-snapshot-s7-theirs names node s7, which is not a node of")
        .stdout_has("foreign: s3-etcd-snapshot-s1-theirs names s3://their-bucket at");
    assert!(
        !out.stdout.contains("etcd-snapshot-s1-ours names"),
        "{}",
        out.stdout
    );
    assert_eq!(data(&fake), edited["data"]);
}

/// A backup saved days before: restoring it would drop the entry of a snapshot taken since and
/// bring back one k3s's retention has deleted. The plan says so, with the span between them.
#[test]
fn an_old_backup_warns_what_it_would_undo_of_the_snapshots_that_exist() {
    use crate::support::k3s_sim::snapshot_entry::data_key;
    let day = 86_400;
    let deleted = snapshot_cr("s1", T0 - day, true);
    let kept = snapshot_cr("s1", T0, true);
    let newer = snapshot_cr("s1", T0 + 3 * day, true);
    let entry = |cr: &Value| (data_key(cr), entry_value(cr, S3ConfigShape::Legacy));
    let fake = FakeApi::with_objects(vec![
        server("s1", V),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
        extra_metadata("k3s"),
        snapshot_configmap("k3s", &[entry(&deleted), entry(&kept)]),
        deleted.clone(),
        kept.clone(),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let backup = dir.path().join("days-ago.json");
    let saved = fake
        .get("ConfigMap", Some("kube-system"), "k3s-etcd-snapshots")
        .unwrap();
    std::fs::write(&backup, serde_json::to_vec(&saved).unwrap()).unwrap();

    // Three days on: retention deleted the oldest snapshot, a new one was taken.
    fake.remove(
        "ETCDSnapshotFile",
        None,
        deleted["metadata"]["name"].as_str().unwrap(),
    );
    fake.put(newer.clone());
    let mut cm = saved.clone();
    cm["data"] = serde_json::json!({
        entry(&kept).0: entry(&kept).1,
        entry(&newer).0: entry(&newer).1,
    });
    fake.replace(cm).unwrap();

    let out = restore(&fake, &backup, &[]);
    out.code(1)
        .stdout_has("1 to add, 0 to update, 1 to remove")
        .stdout_has("warning:");
    let said = out.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    for part in [
        "restoring this backup drops 1 entry of snapshots that exist (the newest taken at \
         2024-06-03T08:00:00Z, 3d after the newest snapshot in the backup)",
        "and brings back 1 entry of snapshots that no longer exist",
        "run snapshots backfill --fix",
    ] {
        assert!(said.contains(part), "{part:?} not in:\n{}", out.stdout);
    }

    // -o json carries the same, for a script.
    let out = restore(&fake, &backup, &["-o", "json"]);
    let report: Value = out.json();
    assert_eq!(report["plan"]["outdated"]["dropsLive"], 1, "{report:#}");
    assert_eq!(report["plan"]["outdated"]["reAddsDeleted"], 1, "{report:#}");
}
