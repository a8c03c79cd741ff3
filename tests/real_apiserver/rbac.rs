//! The README's two ClusterRoles, applied unchanged to a real kube-apiserver: the read-only role
//! reads everything the read-only commands need, with the repair role both repairs complete, and
//! a user with no bindings gets exit 3 with one line.

use crate::common::{run_as, until_reported};
use crate::report::CheckReport;
use crate::support::envtest::servers::SimCluster;
use crate::support::envtest::{EnvTest, User};
use crate::support::readme::{readme_namespaced_role, readme_role};

const READ_ONLY_COMMANDS: &[&[&str]] = &[
    &["check"],
    &["leases"],
    &["leases", "-o", "wide"],
    &["leases", "follow"],
    &["snapshots", "list"],
    &["snapshots", "diff"],
    &["snapshots", "backfill"],
];

#[test]
fn real_readme_roles_allow_exactly_what_they_promise() {
    let Some(env) = EnvTest::start("real_readme_roles_allow_exactly_what_they_promise") else {
        return;
    };
    let cluster = SimCluster::start(&env, "k3s", "v1.29.4+k3s1", 3, &[]);
    let admin = env.admin();
    admin.apply_yaml(&readme_role("k3sdoctor-read-only"));
    admin.apply_yaml(&readme_role("k3sdoctor-repair"));
    admin.bind("k3sdoctor-read-only", "viewer");
    admin.bind("k3sdoctor-read-only", "repair");
    admin.bind("k3sdoctor-repair", "repair");
    // Without the Role in default, apiserver-endpoint-stale alone is not checked.
    let report: CheckReport = run_as(&env, User::Viewer, &["check", "-o", "json"]).json();
    let endpoints = report
        .checks
        .iter()
        .find(|c| c.name == "apiserver-endpoints")
        .unwrap();
    assert!(!endpoints.ran, "{endpoints:?}");
    assert!(
        endpoints.note.starts_with("this user may not "),
        "{endpoints:?}"
    );
    assert!(
        report
            .checks
            .iter()
            .filter(|c| c.name != "apiserver-endpoints")
            .all(|c| c.ran)
    );
    admin.apply_yaml(&readme_namespaced_role("k3sdoctor-read-only"));
    admin.bind_in("default", "k3sdoctor-read-only", "viewer");
    admin.bind_in("default", "k3sdoctor-read-only", "repair");
    let report: CheckReport = run_as(&env, User::Viewer, &["check", "-o", "json"]).json();
    assert!(report.checks.iter().all(|c| c.ran), "{:?}", report.checks);
    cluster.split_etcd_onto("server-2");
    until_reported(
        &env,
        &["snapshots", "diff"],
        "snapshot-missing-from-configmap",
    );

    for user in [User::Viewer, User::Repair] {
        for args in READ_ONLY_COMMANDS {
            let out = run_as(&env, user, args);
            assert!(
                matches!(out.code, 0 | 1) && !out.stderr.contains("forbidden"),
                "{args:?} as {user:?} exited {}:\n{}",
                out.code,
                out.stderr
            );
        }
    }
    // The read-only role stops every repair at the permission check, before any write.
    let holder_before = cluster.holder("k3s");
    for args in [
        &["leases", "follow", "--fix", "--yes"][..],
        &["snapshots", "backfill", "--fix", "--yes"],
    ] {
        run_as(&env, User::Viewer, args)
            .code(3)
            .one_line_error()
            .stderr_has("not allowed to");
    }
    assert_eq!(cluster.holder("k3s"), holder_before);

    for args in READ_ONLY_COMMANDS {
        run_as(&env, User::Nobody, args)
            .code(3)
            .one_line_error()
            .stderr_has("forbidden");
    }

    // With the repair role bound too, both repairs go through.
    let backfill = run_as(
        &env,
        User::Repair,
        &["snapshots", "backfill", "--fix", "--yes"],
    );
    backfill.stderr_has("wrote ConfigMap kube-system/k3s-etcd-snapshots");
    // Written and verified. What the re-read then says depends on the second it lands in: a
    // CR counts as missing only once it is a minute old (younger ones are pending), and the
    // CRs the backfill just wrote entries for reach that minute around now, so the split's idle
    // controller (their missing finalizer) may or may not be a finding yet. Either way no
    // entry is missing any more, and the split is healed below.
    assert!(
        matches!(backfill.code, 0 | 1),
        "backfill exited {}:\n{}",
        backfill.code,
        backfill.stdout
    );
    if backfill.code == 1 {
        backfill.stdout_has("snapshot-controller-idle");
    }
    assert!(
        !backfill.stdout.contains("snapshot-missing-from-configmap"),
        "{}",
        backfill.stdout
    );
    run_as(
        &env,
        User::Repair,
        &["leases", "follow", "--fix", "--yes", "--timeout", "60s"],
    )
    .code(0);
    assert_eq!(cluster.holder("k3s"), "server-2");
}

/// A user without rights is told which command prints the role it lacks; that command's
/// output is what kubectl applies (`rbac read-only` equals the README's roles: tests/cli).
#[test]
fn real_a_forbidden_read_names_the_rbac_command() {
    let Some(env) = EnvTest::start("real_a_forbidden_read_names_the_rbac_command") else {
        return;
    };
    let out = run_as(&env, User::Nobody, &["leases"]);
    out.code(3)
        .one_line_error()
        .stderr_has("forbidden (403)")
        .stderr_has("`k3sdoctor rbac read-only` prints it");
}
