//! The README's roles, applied unchanged to a real kube-apiserver: the read-only role reads
//! everything the read-only commands need, with the repair Role (kube-system) both repairs
//! complete, each of its rules is needed and it grants nothing outside what repairs write,
//! and a user with no bindings gets exit 3 with one line.

use serde_json::{Value, json};

use crate::common::{run_as, until_reported};
use crate::report::CheckReport;
use crate::support::envtest::admin::AdminApi;
use crate::support::envtest::servers::SimCluster;
use crate::support::envtest::{EnvTest, User};
use crate::support::readme::readme_namespaced_role;

const ROLES: &str = "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/roles";

/// What the API server's authorizer answers for `user` (a SubjectAccessReview): `(verb, group,
/// resource, namespace, name)`.
fn allowed(admin: &AdminApi, user: User, request: (&str, &str, &str, &str, Option<&str>)) -> bool {
    let (verb, group, resource, namespace, name) = request;
    let review = admin.create(
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        &json!({
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": user.name(),
                "groups": ["system:authenticated"],
                "resourceAttributes": {
                    "verb": verb, "group": group, "resource": resource,
                    "namespace": namespace, "name": name.unwrap_or_default(),
                },
            },
        }),
    );
    review["status"]["allowed"].as_bool().unwrap_or(false)
}

/// The repair Role of docs/rbac.md with rule `skip` left out (`None`: all of it), in place.
/// Returns once the authorizer answers with it: `probe` is a request only that rule allows.
fn put_repair_role(
    admin: &AdminApi,
    skip: Option<usize>,
    probe: (&str, &str, &str, &str, Option<&str>),
) {
    let mut role: Value =
        serde_yaml_ng::from_str(&readme_namespaced_role("k3sdoctor-repair")).unwrap();
    if let Some(i) = skip {
        role["rules"].as_array_mut().unwrap().remove(i);
    }
    admin.put(ROLES, &role);
    // The authorizer follows RBAC objects through a watch: wait until it has this one.
    for _ in 0..5000 {
        if allowed(admin, User::Repair, probe) == skip.is_none() {
            return;
        }
        std::thread::yield_now();
    }
    panic!("the authorizer never saw the repair Role without rule {skip:?}");
}

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
    crate::common::grant_read_only(&env, "viewer");
    crate::common::grant_read_only(&env, "repair");
    admin.apply_yaml(&readme_namespaced_role("k3sdoctor-repair"));
    admin.bind_in("kube-system", "k3sdoctor-repair", "repair");
    // Without the Role in default, the Node Event checks alone are not checked: the
    // ClusterRole's get of endpoints and list of endpointslices, for the admission webhooks'
    // Services in whatever namespace, reach the kubernetes Service's too.
    let report: CheckReport = run_as(&env, User::Viewer, &["check", "-o", "json"]).json();
    for name in ["apiserver-endpoints", "admission-webhooks"] {
        let run = report.checks.iter().find(|c| c.name == name).unwrap();
        assert!(run.ran, "{run:?}");
    }
    assert!(
        report
            .checks
            .iter()
            .filter(|c| ![
                "certificates",
                "secrets-reencrypt",
                "node-passwords",
                "serving-cert-static",
                "packaged-charts",
            ]
            .contains(&c.name.as_str()))
            .all(|c| c.ran)
    );
    // Exactly the webhook reads: Services and Endpoints by name, never listed; the
    // configurations listed, never changed.
    for (request, granted) in [
        (("get", "", "services", "policy", Some("gate")), true),
        (("list", "", "services", "policy", None), false),
        (("get", "", "endpoints", "policy", Some("gate")), true),
        (("list", "", "endpoints", "policy", None), false),
        (
            ("list", "discovery.k8s.io", "endpointslices", "policy", None),
            true,
        ),
        (
            (
                "list",
                "admissionregistration.k8s.io",
                "validatingwebhookconfigurations",
                "",
                None,
            ),
            true,
        ),
        (
            (
                "delete",
                "admissionregistration.k8s.io",
                "validatingwebhookconfigurations",
                "",
                Some("gate"),
            ),
            false,
        ),
    ] {
        assert_eq!(
            allowed(admin, User::Viewer, request),
            granted,
            "the read-only role and {request:?}"
        );
    }
    admin.apply_yaml(&readme_namespaced_role("k3sdoctor-read-only"));
    admin.bind_in("default", "k3sdoctor-read-only", "viewer");
    admin.bind_in("default", "k3sdoctor-read-only", "repair");
    let packaged = |report: &CheckReport| {
        let run = report
            .checks
            .iter()
            .find(|c| c.name == "packaged-charts")
            .unwrap();
        (run.ran, run.note.clone())
    };
    let report: CheckReport = run_as(&env, User::Viewer, &["check", "-o", "json"]).json();
    // Everything but the Secret checks, whose role is opt-in (`rbac secrets-metadata`).
    // The bed has no HelmChart CRD: with the Role the list is allowed and answers 404.
    assert_eq!(
        packaged(&report),
        (
            false,
            "the HelmChart CRD is not installed (helm-controller disabled)".to_string()
        )
    );
    assert!(
        report
            .checks
            .iter()
            .filter(
                |c| !["node-passwords", "serving-cert-static", "packaged-charts"]
                    .contains(&c.name.as_str())
            )
            .all(|c| c.ran),
        "{:?}",
        report.checks
    );
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

    // Nothing more: the repair Role grants nothing outside kube-system and nothing there
    // beyond the objects the repairs write (the read-only role bound beside it writes nothing).
    for request in [
        ("create", "", "configmaps", "default", None),
        (
            "update",
            "",
            "configmaps",
            "default",
            Some("k3s-etcd-snapshots"),
        ),
        ("create", "events.k8s.io", "events", "default", None),
        ("create", "", "events", "kube-system", None),
        ("update", "", "configmaps", "kube-system", Some("coredns")),
        (
            "delete",
            "",
            "configmaps",
            "kube-system",
            Some("k3s-etcd-snapshots"),
        ),
        (
            "update",
            "coordination.k8s.io",
            "leases",
            "kube-system",
            Some("kube-scheduler"),
        ),
        (
            "create",
            "coordination.k8s.io",
            "leases",
            "kube-system",
            None,
        ),
        ("update", "", "nodes", "", Some("server-1")),
        ("update", "k3s.cattle.io", "etcdsnapshotfiles", "", None),
    ] {
        assert!(
            !allowed(admin, User::Repair, request),
            "the repair role allows {request:?}"
        );
    }
    // Every rule is needed: without it, the repair that needs it here stops at its permission
    // check (the follow's Lease update; the backfill's update of the snapshot ConfigMap, or its
    // create when the split came before k3s wrote one), or the request only that rule allows is
    // denied (the other ConfigMap verb; the Event, which both repairs record below).
    let update_lease = (
        "update",
        "coordination.k8s.io",
        "leases",
        "kube-system",
        Some("k3s"),
    );
    let update_configmap = (
        "update",
        "",
        "configmaps",
        "kube-system",
        Some("k3s-etcd-snapshots"),
    );
    let create_configmap = ("create", "", "configmaps", "kube-system", None);
    let create_event = ("create", "events.k8s.io", "events", "kube-system", None);
    let configmap_before = admin.configmap("k3s-etcd-snapshots");
    let (backfill_needs, other) = match configmap_before {
        Some(_) => ((1, update_configmap), (2, create_configmap)),
        None => ((2, create_configmap), (1, update_configmap)),
    };
    put_repair_role(admin, Some(0), update_lease);
    run_as(&env, User::Repair, &["leases", "follow", "--fix", "--yes"])
        .code(3)
        .one_line_error()
        .stderr_has("not allowed to update");
    put_repair_role(admin, Some(backfill_needs.0), backfill_needs.1);
    run_as(
        &env,
        User::Repair,
        &["snapshots", "backfill", "--fix", "--yes"],
    )
    .code(3)
    .one_line_error()
    .stderr_has(&format!("not allowed to {} configmaps", backfill_needs.1.0));
    put_repair_role(admin, Some(other.0), other.1);
    put_repair_role(admin, Some(3), create_event);
    assert_eq!(cluster.holder("k3s"), holder_before);
    assert_eq!(
        admin
            .configmap("k3s-etcd-snapshots")
            .map(|cm| cm["metadata"]["resourceVersion"].clone()),
        configmap_before.map(|cm| cm["metadata"]["resourceVersion"].clone()),
        "nothing was written"
    );
    put_repair_role(admin, None, create_event);
    for request in [
        update_lease,
        update_configmap,
        create_configmap,
        create_event,
    ] {
        assert!(allowed(admin, User::Repair, request), "{request:?}");
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
    // Both recorded their Event in kube-system with the events rule.
    let events = admin
        .get("/apis/events.k8s.io/v1/namespaces/kube-system/events")
        .unwrap();
    let mut reasons: Vec<&str> = events["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["reportingController"] == "k3sdoctor.io/k3sdoctor")
        .filter_map(|e| e["reason"].as_str())
        .collect();
    reasons.sort_unstable();
    assert_eq!(reasons, ["LockMoved", "SnapshotEntriesBackfilled"]);
}

/// A user without rights is told which command prints the role it lacks; that command's
/// output is what kubectl applies (`rbac read-only` equals the README's roles: tests/cli).
#[test]
fn real_a_forbidden_read_names_the_rbac_command() {
    let Some(env) = EnvTest::shared() else {
        return;
    };
    let out = run_as(env, User::Nobody, &["leases"]);
    out.code(3)
        .one_line_error()
        .stderr_has("forbidden (403)")
        .stderr_has("`k3sdoctor rbac read-only` prints it");
}
