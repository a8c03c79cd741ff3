//! The README's two ClusterRoles, applied unchanged to the fake API server: the read-only one
//! runs every read-only command and stops every `--fix` before it writes; with the repair one
//! bound too, both repairs go through.

use serde_json::Value;

use crate::support::fake_api::FakeApi;
use crate::support::harness::k3sdoctor;
use crate::support::objects::{NOW, extra_metadata, lease, server, snapshot_cr};
use crate::support::readme::{
    readme_namespaced_role, readme_read_only_roles, readme_role, readme_role_in,
};

const V: &str = "v1.29.4+k3s1";

fn split_cluster() -> FakeApi {
    let fake = FakeApi::start();
    let objects: Vec<Value> = vec![
        server("s1", V),
        server("s2", V),
        server("s3", V),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s2", 1),
        extra_metadata("k3s"),
        snapshot_cr("s1", 1_717_142_400, true),
    ];
    for o in objects {
        fake.put(o);
    }
    fake
}

fn run_as(fake: &FakeApi, token: &str, args: &[&str]) -> crate::support::harness::Output {
    k3sdoctor(args.iter().copied().chain(["--now", NOW]))
        .kubeconfig_for(&fake.url(), token)
        .run()
}

#[test]
fn the_read_only_role_reads_everything_and_repairs_nothing() {
    let fake = split_cluster();
    fake.add_rbac_user("alice-token", "alice", &readme_read_only_roles());
    fake.add_rbac_user(
        "alice-token",
        "alice",
        &readme_namespaced_role("k3sdoctor-read-only"),
    );
    fake.add_rbac_user(
        "alice-token",
        "alice",
        &readme_role_in("k3sdoctor-read-only", "kube-node-lease"),
    );
    for args in [
        &["check"][..],
        &["leases"],
        &["leases", "-o", "wide"],
        &["leases", "follow"],
        &["snapshots", "list"],
        &["snapshots", "diff"],
        &["snapshots", "backfill"],
    ] {
        let out = run_as(&fake, "alice-token", args);
        assert!(
            matches!(out.code, 0 | 1),
            "{args:?} failed with the read-only role:\n{}",
            out.stderr
        );
    }
    for args in [
        &["leases", "follow", "--fix", "--yes"][..],
        &["snapshots", "backfill", "--fix", "--yes"],
    ] {
        run_as(&fake, "alice-token", args)
            .code(3)
            .one_line_error()
            .stderr_has("not allowed to");
    }
    // The one list the read-only role leaves out on purpose: Secrets in kube-system, the
    // opt-in `rbac secrets-metadata` role (RBAC cannot narrow it to metadata).
    let denied: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.status == 403 && r.path != "/api/v1/namespaces/kube-system/secrets")
        .collect();
    assert!(
        denied.is_empty(),
        "the read-only role lacks something: {denied:#?}"
    );
    assert!(
        fake.requests()
            .iter()
            .all(|r| r.method == "GET" || r.path.contains("selfsubjectaccessreviews"))
    );
}

/// The read-only roles grant Leases in kube-system (the locks, the apiserver identities) and in
/// kube-node-lease (the heartbeats a move's gates read), never cluster-wide: every read-only
/// command reads what it needs, and every Lease request names one of those two namespaces.
#[test]
fn leases_are_read_in_kube_system_and_kube_node_lease_only() {
    let fake = split_cluster();
    let cluster_role = readme_role("k3sdoctor-read-only");
    assert!(!cluster_role.contains("leases"), "{cluster_role}");
    fake.add_rbac_user("lee-token", "lee", &readme_read_only_roles());
    fake.add_rbac_user(
        "lee-token",
        "lee",
        &readme_namespaced_role("k3sdoctor-read-only"),
    );
    fake.add_rbac_user(
        "lee-token",
        "lee",
        &readme_role_in("k3sdoctor-read-only", "kube-node-lease"),
    );
    for args in [
        &["check"][..],
        &["leases"],
        &["leases", "follow"],
        &["snapshots", "list"],
        &["snapshots", "diff"],
    ] {
        let out = run_as(&fake, "lee-token", args);
        assert!(
            matches!(out.code, 0 | 1) && !out.stderr.contains("forbidden"),
            "{args:?} with the read-only roles:\n{}",
            out.stderr
        );
    }
    let requests = fake.requests();
    let leases: Vec<_> = requests
        .iter()
        .filter(|r| r.path.contains("/leases"))
        .collect();
    assert!(
        leases
            .iter()
            .any(|r| r.path.contains("/namespaces/kube-node-lease/"))
    );
    for r in leases {
        assert!(
            r.path
                .starts_with("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases")
                || r.path
                    .starts_with("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"),
            "{}",
            r.path
        );
    }
    let denied: Vec<_> = requests
        .iter()
        .filter(|r| r.status == 403 && r.path != "/api/v1/namespaces/kube-system/secrets")
        .collect();
    assert!(denied.is_empty(), "{denied:#?}");
}

/// Without the Role in kube-system the Leases are refused: exit 3, and the line names that
/// Role, not the ClusterRole that no longer grants them.
#[test]
fn without_the_role_in_kube_system_the_locks_are_refused_naming_it() {
    let fake = split_cluster();
    fake.add_rbac_user("kim-token", "kim", &readme_role("k3sdoctor-read-only"));
    run_as(&fake, "kim-token", &["leases"])
        .code(3)
        .one_line_error()
        .stderr_has("cannot list leases in kube-system: forbidden (403)")
        .stderr_has(
            "grant the Role k3sdoctor-read-only in kube-system (`k3sdoctor rbac read-only` prints it, with its binding)",
        );
}

#[test]
fn with_the_repair_role_both_repairs_go_through() {
    let fake = split_cluster();
    fake.add_rbac_user("bob-token", "bob", &readme_read_only_roles());
    fake.add_rbac_user(
        "bob-token",
        "bob",
        &readme_role_in("k3sdoctor-read-only", "kube-node-lease"),
    );
    fake.add_rbac_user(
        "bob-token",
        "bob",
        &readme_namespaced_role("k3sdoctor-repair"),
    );
    run_as(
        &fake,
        "bob-token",
        &["leases", "follow", "--fix", "--yes", "--no-wait"],
    )
    .code(0);
    assert_eq!(fake.lock_holder("Lease", "k3s").unwrap(), "s2");
    // The snapshot ConfigMap does not exist yet: backfill creates it. Exit 1 is the verdict
    // after the verified write: nothing runs the snapshot controller in this fake.
    run_as(
        &fake,
        "bob-token",
        &["snapshots", "backfill", "--fix", "--yes"],
    )
    .code(1)
    .stderr_has("wrote ConfigMap kube-system/k3s-etcd-snapshots");
    assert!(
        fake.get("ConfigMap", Some("kube-system"), "k3s-etcd-snapshots")
            .is_some()
    );
    // ... and updates it the next time.
    fake.put(snapshot_cr("s2", 1_717_142_500, true));
    run_as(
        &fake,
        "bob-token",
        &["snapshots", "backfill", "--fix", "--yes"],
    )
    .code(1)
    .stderr_has("wrote ConfigMap kube-system/k3s-etcd-snapshots");
    let denied: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.status == 403)
        .collect();
    assert!(denied.is_empty(), "the roles lack something: {denied:#?}");
    // ... and each left its Event (create on events.k8s.io events is in the role).
    let mut reasons: Vec<String> = crate::repair_events::events(&fake)
        .iter()
        .map(|e| e["reason"].as_str().unwrap_or_default().to_string())
        .collect();
    reasons.sort();
    assert_eq!(
        reasons,
        [
            "LockMoved",
            "SnapshotEntriesBackfilled",
            "SnapshotEntriesBackfilled"
        ]
    );
}

#[test]
fn the_repair_role_without_its_events_rule_repairs_and_says_the_event_is_missing() {
    let fake = split_cluster();
    let role = readme_namespaced_role("k3sdoctor-repair");
    let start = role
        .find("  # The Event every repair records")
        .expect("the events rule");
    let without_events = &role[..start];
    assert!(
        !without_events.contains("events.k8s.io"),
        "{without_events}"
    );
    fake.add_rbac_user("dan-token", "dan", &readme_read_only_roles());
    fake.add_rbac_user("dan-token", "dan", without_events);
    run_as(
        &fake,
        "dan-token",
        &["leases", "follow", "--fix", "--yes", "--no-wait"],
    )
    .code(0)
    .stderr_has("could not record the LockMoved Event on Lease kube-system/k3s")
    .stderr_has("`k3sdoctor rbac repair`");
    assert_eq!(fake.lock_holder("Lease", "k3s").unwrap(), "s2");
    assert!(crate::repair_events::events(&fake).is_empty());
}
