//! `snapshots restore` puts back only this cluster's backup of this very ConfigMap, on two
//! real clusters: a backup taken from cluster B is refused on cluster A (exit 2, nothing
//! written, `--force` or not), and a backup of A's ConfigMap restores onto a recreated
//! ConfigMap only with `--force`, the plan saying why. The runs on A use exactly the README's
//! roles, which must allow reading the cluster's identity.

use serde_json::{Value, json};

use crate::common::{CATCH_UP, run_as};
use crate::support::envtest::admin::configmap_path;
use crate::support::envtest::servers::SimCluster;
use crate::support::envtest::{EnvTest, User};
use crate::support::harness::Output;
use crate::support::readme::readme_namespaced_role;
use crate::support::wait::wait_for;

const SNAPSHOTS: &str = "k3s-etcd-snapshots";

/// A cluster with one simulated server whose snapshot ConfigMap has entries, plus one orphan
/// entry, so `backfill --fix --prune` has something to change and saves a backup first.
fn with_a_backup(env: &EnvTest, user: User, backup: &std::path::Path) -> Value {
    let admin = env.admin();
    assert!(
        wait_for(CATCH_UP, || !admin.configmap_data(SNAPSHOTS).is_empty()),
        "no snapshot entry reached the ConfigMap"
    );
    admin.merge_patch(
        &configmap_path(SNAPSHOTS),
        &json!({"data": {"local-etcd-snapshot-gone-1634567890": "{\"name\":\"etcd-snapshot-gone-1634567890\"}"}}),
    );
    let backup_arg = backup.display().to_string();
    let out = run_as(
        env,
        user,
        &[
            "snapshots",
            "backfill",
            "--fix",
            "--yes",
            "--prune",
            "--backup",
            &backup_arg,
        ],
    );
    out.stderr_has("saved ConfigMap kube-system/k3s-etcd-snapshots to");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(backup).unwrap()).unwrap();
    let cluster_id =
        admin.get("/api/v1/namespaces/kube-system").unwrap()["metadata"]["uid"].clone();
    assert_eq!(
        saved["metadata"]["annotations"]["k3sdoctor.io/cluster-id"], cluster_id,
        "{saved:#}"
    );
    saved
}

fn resource_version(env: &EnvTest) -> Value {
    env.admin().configmap(SNAPSHOTS).unwrap()["metadata"]["resourceVersion"].clone()
}

fn restore(env: &EnvTest, backup: &std::path::Path, extra: &[&str]) -> Output {
    let backup_arg = backup.display().to_string();
    let mut args = vec!["snapshots", "restore", "--from-backup", &backup_arg];
    args.extend_from_slice(extra);
    run_as(env, User::Repair, &args)
}

#[test]
fn real_restore_refuses_another_clusters_backup_and_needs_force_for_a_recreated_configmap() {
    let Some(a) = EnvTest::start("real_restore_identity_cluster_a") else {
        return;
    };
    let Some(b) = EnvTest::start("real_restore_identity_cluster_b") else {
        return;
    };
    let _sims_a = SimCluster::start(&a, "k3s", "v1.29.4+k3s1", 1, &[]);
    let _sims_b = SimCluster::start(&b, "k3s", "v1.29.4+k3s1", 1, &[]);
    let admin = a.admin();
    crate::common::grant_read_only(&a, "repair");
    admin.apply_yaml(&readme_namespaced_role("k3sdoctor-repair"));
    admin.bind_in("kube-system", "k3sdoctor-repair", "repair");

    let from_b = b.scratch().join("b.backup.json");
    with_a_backup(&b, User::Admin, &from_b);
    let from_a = a.scratch().join("a.backup.json");
    with_a_backup(&a, User::Repair, &from_a);

    // Cluster B's backup on cluster A: refused, even forced, before anything is written.
    for extra in [
        &["--fix", "--yes"][..],
        &["--fix", "--yes", "--force"][..],
        &[][..],
    ] {
        let before = resource_version(&a);
        restore(&a, &from_b, extra)
            .code(2)
            .one_line_error()
            .stderr_has("the backup is of another cluster")
            .stderr_has("nothing was written");
        assert_eq!(resource_version(&a), before, "{extra:?} wrote to cluster A");
    }

    // A's own ConfigMap deleted; k3s's controller creates a new one (another UID).
    let old_uid = admin.configmap(SNAPSHOTS).unwrap()["metadata"]["uid"].clone();
    admin
        .request(
            "DELETE",
            &configmap_path(SNAPSHOTS),
            "application/json",
            None,
        )
        .expect("delete the snapshot ConfigMap");
    assert!(
        wait_for(CATCH_UP, || admin
            .configmap(SNAPSHOTS)
            .is_some_and(|cm| cm["metadata"]["uid"] != old_uid)),
        "the snapshot controller did not recreate the ConfigMap"
    );
    let new_uid = admin.configmap(SNAPSHOTS).unwrap()["metadata"]["uid"].clone();
    let refused = restore(&a, &from_a, &["--fix", "--yes"]);
    refused
        .code(2)
        .one_line_error()
        .stdout_has(&format!(
            "needs --force: ConfigMap kube-system/k3s-etcd-snapshots was recreated since the backup (UID {} then, {} now)",
            old_uid.as_str().unwrap(),
            new_uid.as_str().unwrap()
        ))
        .stderr_has("re-run with --force")
        .stderr_has("nothing was written");
    assert!(!refused.stdout.contains("identity"), "{}", refused.stdout);

    // Forced: written. A snapshot round may race it (a 409 writes nothing; a read-back that
    // already shows the controller's next entry is not exact): both exit 4, so run again.
    let mut forced = restore(&a, &from_a, &["--fix", "--yes", "--force"]);
    for _ in 0..3 {
        if forced.code != 4 {
            break;
        }
        forced = restore(&a, &from_a, &["--fix", "--yes", "--force"]);
    }
    forced.stderr_has("wrote ConfigMap kube-system/k3s-etcd-snapshots");
    assert!(matches!(forced.code, 0 | 1), "{}", forced.stderr);
}
