use serde_json::Value;

use crate::report::LeaseReport;
use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::{Output, k3sdoctor};
use crate::support::objects::{
    NOW, NodeSpec, agent, apiserver_identity, configmap_lock, lease, node, server,
};

const AFFECTED: &str = "v1.29.4+k3s1";
const FIXED: &str = "v1.29.6+k3s1";

fn three_servers(version: &str) -> Vec<Value> {
    vec![
        server("s1", version),
        server("s2", version),
        server("s3", version),
        agent("w1", version),
    ]
}

fn with(mut base: Vec<Value>, more: impl IntoIterator<Item = Value>) -> Vec<Value> {
    base.extend(more);
    base
}

fn leases_json(fake: &FakeApi, extra: &[&str]) -> (Output, LeaseReport) {
    let mut run = k3sdoctor(["leases", "-o", "json", "--now", NOW]).cluster(fake, Role::ReadOnly);
    for a in extra {
        run = run.arg(a);
    }
    let out = run.run();
    let report = out.json();
    (out, report)
}

#[test]
fn healthy_cluster_exits_0_without_findings() {
    let fake = FakeApi::with_objects(with(
        three_servers(AFFECTED),
        [lease("k3s", "s2", 1), lease("k3s-etcd", "s2", 2)],
    ));
    let (out, report) = leases_json(&fake, &[]);
    out.code(0);
    assert_eq!(
        (report.api_version.as_str(), report.kind.as_str()),
        ("k3sdoctor.io/v1", "LeaseReport")
    );
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    assert_eq!(report.lock("k3s").holder.as_deref(), Some("s2"));
    assert_eq!(
        report.lock("k3s-etcd").node.as_ref().unwrap().readiness,
        "ready"
    );
    assert_eq!(
        (
            report.cluster.servers,
            report.cluster.agents,
            report.cluster.etcd_members
        ),
        (3, 1, 3)
    );
    assert_eq!(report.now.source, "flag");

    let table = k3sdoctor(["leases", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    table
        .code(0)
        .stderr_has("healthy: no findings")
        .stdout_has("k3s-etcd   s2");
}

#[test]
fn split_on_an_affected_version_is_an_error() {
    let fake = FakeApi::with_objects(with(
        three_servers(AFFECTED),
        [lease("k3s", "s1", 1), lease("k3s-etcd", "s2", 2)],
    ));
    let (out, report) = leases_json(&fake, &[]);
    out.code(1);
    assert_eq!(report.codes(), [("error", "lease-split")]);
    assert!(
        report.findings[0]
            .remediation
            .contains("upgrade to v1.29.6+k3s1")
    );
    assert_eq!(report.verdict_version.as_deref(), Some(AFFECTED));
    assert_eq!(report.summary.errors, 1);

    k3sdoctor(["leases", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(1)
        .stderr_has("ERROR   lease-split")
        .stderr_has("k3s is held by s1 but k3s-etcd by s2")
        .stderr_has("1 error, 0 warnings");
}

#[test]
fn split_on_a_fixed_version_is_info_and_fails_no_pipeline() {
    let fake = FakeApi::with_objects(with(
        three_servers(FIXED),
        [lease("k3s", "s1", 1), lease("k3s-etcd", "s2", 2)],
    ));
    let (out, report) = leases_json(&fake, &[]);
    out.code(0);
    assert_eq!(report.codes(), [("info", "lease-split")]);
    // Harmless, as its message says: `--fail-on warning` pipelines pass.
    leases_json(&fake, &["--fail-on", "warning"]).0.code(0);
    leases_json(&fake, &["--fail-on", "never"]).0.code(0);
}

#[test]
fn expired_and_released_locks() {
    let fake = FakeApi::with_objects(with(
        three_servers(AFFECTED),
        [lease("k3s", "", 600), lease("k3s-etcd", "s3", 400)],
    ));
    let (out, report) = leases_json(&fake, &[]);
    out.code(1);
    assert_eq!(
        report.codes(),
        [("error", "lease-released"), ("error", "lease-expired")]
    );
    assert_eq!(report.lock("k3s").state, "released");
    assert_eq!(report.lock("k3s-etcd").state, "expired");
}

#[test]
fn holder_hostname_differs_from_node_name() {
    let nodes = vec![
        node(&NodeSpec {
            name: "ip-10-0-1-5.ec2.internal",
            hostname: "cp-a",
            version: AFFECTED,
            prog: "k3s",
            server: true,
            ready: true,
        }),
        node(&NodeSpec {
            name: "cp-a",
            hostname: "cp-b",
            version: AFFECTED,
            prog: "k3s",
            server: true,
            ready: true,
        }),
    ];
    let fake = FakeApi::with_objects(with(
        nodes,
        [lease("k3s", "cp-a", 1), lease("k3s-etcd", "cp-a", 1)],
    ));
    let (out, report) = leases_json(&fake, &[]);
    out.code(0);
    let holder = report.lock("k3s").node.as_ref().unwrap();
    // The node *named* cp-a is another machine: the hostname annotation decides.
    assert_eq!(
        (holder.name.as_str(), holder.matched_by.as_str()),
        ("ip-10-0-1-5.ec2.internal", "hostname-annotation")
    );
    // The holder and its node are columns of their own, so a pipe gets whole words in
    // fixed fields: `awk '{print $3}'` is the node of each lock.
    let table = k3sdoctor(["leases", "--now", NOW, "--no-headers"])
        .cluster(&fake, Role::ReadOnly)
        .run();
    let fields: Vec<Vec<&str>> = table
        .stdout
        .lines()
        .filter(|l| l.starts_with("k3s ") || l.starts_with("k3s-etcd "))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(fields.len(), 2, "{}", table.stdout);
    for row in &fields {
        assert_eq!(
            row[1..3],
            ["cp-a", "ip-10-0-1-5.ec2.internal"],
            "{}",
            table.stdout
        );
    }
}

#[test]
fn rke2_names() {
    let version = "v1.29.5+rke2r1";
    let fake = FakeApi::with_objects(vec![
        server("r1", version),
        server("r2", version),
        lease("rke2", "r1", 1),
        lease("rke2-etcd", "r2", 1),
        lease(
            "rke2-cloud-controller-manager",
            "r1_5e1c1d7e-0000-4000-8000-000000000001",
            3,
        ),
    ]);
    let (out, report) = leases_json(&fake, &[]);
    out.code(1);
    assert_eq!(report.cluster.distro, "rke2");
    assert_eq!(report.codes(), [("error", "lease-split")]);
    assert!(
        report.findings[0]
            .message
            .contains("kube-system/rke2-etcd-snapshots")
    );
    assert!(report.findings[0].remediation.contains("v1.29.6+rke2r1"));
    assert_eq!(
        report.other_elections[0].name,
        "rke2-cloud-controller-manager"
    );
    assert!(
        fake.requests()
            .iter()
            .any(|r| r.path.ends_with("/configmaps/rke2-etcd"))
    );
}

#[test]
fn configmap_only_locks() {
    let fake = FakeApi::with_objects(with(
        three_servers("v1.23.17+k3s1"),
        [
            configmap_lock("k3s", "s1", 1),
            configmap_lock("k3s-etcd", "s1", 1),
        ],
    ));
    let (out, report) = leases_json(&fake, &[]);
    out.code(0);
    assert_eq!(report.lock("k3s").kind, "config-map");
    assert_eq!(report.cluster.lock_style.as_deref(), Some("config-map"));
}

#[test]
fn multilock_copies_agree_or_disagree() {
    let version = "v1.27.10+k3s2";
    let both = [
        lease("k3s", "s1", 1),
        configmap_lock("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
        configmap_lock("k3s-etcd", "s1", 1),
    ];
    let fake = FakeApi::with_objects(with(three_servers(version), both));
    let (out, report) = leases_json(&fake, &[]);
    out.code(0);
    assert_eq!(report.lock("k3s").kind, "both");

    let disagree = [
        lease("k3s", "s2", 1),
        configmap_lock("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
        configmap_lock("k3s-etcd", "s1", 1),
    ];
    let fake = FakeApi::with_objects(with(three_servers(version), disagree));
    let (out, report) = leases_json(&fake, &[]);
    out.code(1);
    assert_eq!(report.codes(), [("error", "lease-copies-disagree")]);
    assert_eq!(report.lock("k3s").state, "disagreeing");
}

#[test]
fn reads_only_with_its_own_user_agent() {
    let fake = FakeApi::with_objects(with(
        three_servers(AFFECTED),
        [lease("k3s", "s1", 1), lease("k3s-etcd", "s1", 1)],
    ));
    k3sdoctor(["leases", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(0);
    let requests = fake.requests();
    let expected_agent = format!("k3sdoctor/{}", env!("CARGO_PKG_VERSION"));
    // Two lists, the two lock ConfigMaps, and /version for the API server's clock.
    assert_eq!(requests.len(), 5, "{requests:#?}");
    assert!(requests.iter().any(|r| r.path == "/version"));
    for r in &requests {
        assert_eq!(r.method, "GET", "{r:?}");
        assert_eq!(r.user_agent.as_deref(), Some(expected_agent.as_str()));
    }
}

#[test]
fn lists_are_read_page_by_page() {
    let mut objects: Vec<Value> = (0..1203)
        .map(|i| agent(&format!("worker-{i:04}"), AFFECTED))
        .collect();
    objects.extend(with(
        three_servers(AFFECTED),
        [lease("k3s", "s1", 1), lease("k3s-etcd", "s1", 1)],
    ));
    let fake = FakeApi::with_objects(objects);
    let (out, report) = leases_json(&fake, &[]);
    out.code(0);
    assert_eq!(report.cluster.agents, 1204);
    let node_pages: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path == "/api/v1/nodes")
        .collect();
    assert_eq!(node_pages.len(), 3, "{node_pages:#?}");
    assert!(node_pages[1].query.contains("continue="));
}

#[test]
fn wide_output_shows_the_other_elections() {
    let fake = FakeApi::with_objects(with(
        three_servers(AFFECTED),
        [
            lease("k3s", "s1", 1),
            lease("k3s-etcd", "s1", 1),
            lease(
                "kube-scheduler",
                "s3_0c8d6a4e-1111-2222-3333-444455556666",
                2,
            ),
        ],
    ));
    k3sdoctor(["leases", "-o", "wide", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(0)
        .stdout_has("OTHER ELECTION")
        .stdout_has("kube-scheduler")
        .stdout_has("MATCHED BY");
}

#[test]
fn quiet_prints_nothing_and_keeps_the_exit_code() {
    let fake = FakeApi::with_objects(with(
        three_servers(AFFECTED),
        [lease("k3s", "s1", 1), lease("k3s-etcd", "s2", 1)],
    ));
    let out = k3sdoctor(["leases", "-q", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    out.code(1);
    assert!(
        out.stdout.is_empty() && out.stderr.is_empty(),
        "{out:?}",
        out = out.stdout
    );
}

#[test]
fn yaml_output_carries_the_envelope() {
    let fake = FakeApi::with_objects(with(
        three_servers(AFFECTED),
        [lease("k3s", "s1", 1), lease("k3s-etcd", "s1", 1)],
    ));
    let out = k3sdoctor(["leases", "-o", "yaml", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    out.code(0);
    let doc: Value = serde_yaml_ng::from_str(&out.stdout).unwrap();
    assert_eq!(doc["apiVersion"], "k3sdoctor.io/v1");
    assert_eq!(doc["kind"], "LeaseReport");
}

#[test]
fn live_freshness_is_judged_on_the_api_servers_clock() {
    let fake = FakeApi::with_objects(vec![server("s1", AFFECTED)]);
    let (out, report) = leases_json_at(&fake, None);
    out.code(1);
    assert_eq!(report.now.source, "api-server-clock");
}

fn leases_json_at(fake: &FakeApi, now: Option<&str>) -> (Output, LeaseReport) {
    let mut run = k3sdoctor(["leases", "-o", "json"]).cluster(fake, Role::ReadOnly);
    if let Some(now) = now {
        run = run.arg("--now").arg(now);
    }
    let out = run.run();
    let report = out.json();
    (out, report)
}

#[test]
fn the_etcd_lock_is_expected_from_the_first_release_of_each_line_that_elects_it() {
    // k3s-io/k3s#6941-#6943 backported the `-etcd` election to v1.25.7, v1.24.11 and v1.23.17.
    for (version, expected) in [
        ("v1.25.6+k3s1", false),
        ("v1.25.7+k3s1", true),
        ("v1.24.10+k3s1", false),
        ("v1.24.11+k3s1", true),
        ("v1.23.16+k3s1", false),
        ("v1.23.17+k3s1", true),
    ] {
        let mut locks = vec![configmap_lock("k3s", "s1", 1)];
        if !version.starts_with("v1.23.") {
            locks.push(lease("k3s", "s1", 1));
        }
        let fake = FakeApi::with_objects(with(three_servers(version), locks));
        let (out, report) = leases_json(&fake, &[]);
        let missing = report.codes().contains(&("error", "lease-missing"));
        assert_eq!(missing, expected, "{version}: {:?}", report.codes());
        out.code(if expected { 1 } else { 0 });
    }
}

#[test]
fn a_holder_with_no_node_but_a_live_apiserver_is_an_agentless_server() {
    let identity = apiserver_identity("cp-1", 5);
    let fake = FakeApi::with_objects(with(
        three_servers(FIXED),
        [
            lease("k3s", "cp-1", 1),
            lease("k3s-etcd", "s1", 1),
            identity,
        ],
    ));
    let (_, report) = leases_json(&fake, &[]);
    assert!(
        report.codes().contains(&("info", "lease-holder-agentless")),
        "{:?}",
        report.codes()
    );
    assert!(!report.codes().contains(&("error", "lease-holder-unknown")));
}

#[test]
fn mid_upgrade_the_stale_configmap_copy_of_a_1_28_holder_is_not_a_disagreement() {
    let fake = FakeApi::with_objects([
        server("s1", "v1.27.15+k3s1"),
        server("s2", "v1.27.15+k3s1"),
        server("s3", "v1.28.11+k3s1"),
        lease("k3s", "s3", 1),
        configmap_lock("k3s", "s1", 600),
        lease("k3s-etcd", "s3", 1),
        configmap_lock("k3s-etcd", "s1", 600),
    ]);
    let (_, report) = leases_json(&fake, &[]);
    assert!(
        !report.codes().contains(&("error", "lease-copies-disagree")),
        "{:?}",
        report.codes()
    );
    assert_eq!(report.lock("k3s").holder.as_deref(), Some("s3"));
}

/// `--now` before the dump was taken: renewals read as future ones, with a note saying why,
/// never as a negative age next to `held`.
#[test]
fn renewals_after_now_read_in_not_negative_ago() {
    let dump = crate::support::harness::repo_path("tests/fixtures/split-cluster");
    let out = k3sdoctor([
        "--from-file",
        dump.to_str().unwrap(),
        "leases",
        "--now",
        "2024-05-31T12:10:00Z",
    ])
    .run();
    out.code(1)
        .stdout_has("+38s ")
        .stderr_has("note: k3s and k3s-etcd renewed after now (2024-05-31T12:10:00Z): --now is earlier than these renewals");
    assert!(
        !out.stdout.contains("-38s") && !out.stdout.contains(" ago   "),
        "{}",
        out.stdout
    );
}

/// A Node has one shape wherever a report names it: the other elections' holders look like
/// the locks' holders.
#[test]
fn other_elections_name_their_node_in_the_shape_locks_do() {
    let dump = crate::support::harness::repo_path("tests/fixtures/split-cluster");
    let out = k3sdoctor([
        "--from-file",
        dump.to_str().unwrap(),
        "leases",
        "-o",
        "json",
    ])
    .run();
    let report: serde_json::Value = out.json();
    let keys = |v: &serde_json::Value| {
        let mut keys: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        keys
    };
    let lock_node = keys(&report["locks"][0]["node"]);
    let elections = report["otherElections"].as_array().unwrap();
    assert!(!elections.is_empty());
    for e in elections {
        assert_eq!(keys(&e["holderNode"]), lock_node, "{e:#}");
        // The name stays where v1 put it.
        assert_eq!(e["node"], e["holderNode"]["name"]);
    }
}
