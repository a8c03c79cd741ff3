//! Rancher's snapshot records on two real API servers behind a Rancher-like proxy (tests/support/rancher):
//! `check` reads Rancher's records through `/k8s/clusters/local` with the downstream
//! credentials, only ever with GET, LIST and WATCH; a user without the Rancher role gets "not
//! checked", and `k3sdoctor rbac rancher`'s roles, unchanged, are enough; a reset or a stall
//! mid-list on the management cluster leaves the downstream verdict as it was;
//! `--rancher-clusters` reads every cluster and says Rancher's word for a disconnected one.
//! One bed for all of it: each costs two API servers.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::viewer_with_every_read_only_right;
use crate::support::envtest::User;
use crate::support::envtest::servers::SimCluster;
use crate::support::harness::{Output, k3sdoctor};
use crate::support::rancher::Fault;
use crate::support::rancher::bed::{CLUSTER_ID, GONE_ID, RancherBed, WORKSPACE};
use crate::support::rancher::records::{self, Rancher};
use crate::support::readme::{readme_namespaced_role, readme_role};
use crate::support::report_checks::{check_run, every_finding};
use crate::support::scrape::{get, metrics, sample, start_serve, wait_for_sample};
use crate::support::wait::wait_for;

const FIRST_SNAPSHOTS: Duration = Duration::from_secs(150);
const RECORDS: &str = "/apis/rke.cattle.io/v1/namespaces/fleet-default/etcdsnapshots";

fn check(bed: &RancherBed, user: User, extra: &[&str]) -> Output {
    let kubeconfig = bed.kubeconfig(user);
    let mut args = vec!["check", "-o", "json", "--fail-on", "never"];
    args.extend_from_slice(extra);
    k3sdoctor(args).kubeconfig(&kubeconfig).run()
}

fn codes(report: &Value) -> Vec<String> {
    let mut out: Vec<String> = every_finding(report)
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect();
    out.sort();
    out
}

fn downstream_codes(report: &Value) -> Vec<String> {
    codes(report)
        .into_iter()
        .filter(|c| !c.starts_with("rancher-"))
        .collect()
}

fn rancher_run(report: &Value) -> Value {
    check_run(report, "rancher").clone()
}

/// Every request the run sent to the management cluster was a read.
#[track_caller]
fn only_reads_on_local(bed: &RancherBed) {
    let requests = bed.proxy().requests_to("local");
    assert!(!requests.is_empty(), "nothing was read on local");
    for r in &requests {
        assert!(
            ["get", "list", "watch"].contains(&r.verb().as_str()),
            "{} {} on the management cluster",
            r.method,
            r.path
        );
    }
}

/// Every list on the management cluster went to the watch cache in one answer
/// (`resourceVersion=0`, no page size): the workspace's, and with `fleet` the clusters
/// Rancher manages.
#[track_caller]
fn workspace_read_from_the_watch_cache(bed: &RancherBed, fleet: bool) {
    let lists: Vec<String> = bed
        .proxy()
        .requests_to("local")
        .into_iter()
        .filter(|r| r.verb() == "list")
        .map(|r| r.path)
        .collect();
    let in_workspace = format!("/namespaces/{WORKSPACE}/");
    for path in &lists {
        let cached = path.contains("resourceVersion=0") && !path.contains("limit=");
        assert!(cached, "{path} is not a watch-cache read: {lists:#?}");
    }
    let clusters = lists
        .iter()
        .any(|p| p.starts_with("/apis/management.cattle.io/v3/clusters?"));
    assert_eq!(clusters, fleet, "{lists:#?}");
    for kind in ["etcdsnapshots", "machines", "rkecontrolplanes", "clusters"] {
        assert!(
            lists
                .iter()
                .any(|p| p.contains(&format!("{in_workspace}{kind}?"))),
            "no list of {kind} in {WORKSPACE}: {lists:#?}"
        );
    }
}

#[test]
fn rancher_records_are_compared_through_the_proxy_and_only_read() {
    let Some(bed) = RancherBed::start("rancher view", "v2.11.4") else {
        return;
    };
    let cluster = SimCluster::start(bed.downstream(), "k3s", "v1.29.4+k3s1", 2, &[]);
    let nodes: Vec<String> = cluster.servers.iter().map(|s| s.node.clone()).collect();
    let machines = bed.add_machines_for_nodes();
    let down = bed.downstream().admin();
    assert!(
        wait_for(FIRST_SNAPSHOTS, || {
            let files = down.snapshot_files();
            nodes
                .iter()
                .all(|n| files.iter().any(|f| f["spec"]["nodeName"] == n.as_str()))
        }),
        "no snapshot of every server appeared downstream"
    );
    // The servers settle (their member finalizers) before the verdict is compared across runs.
    assert!(
        wait_for(FIRST_SNAPSHOTS, || {
            let report: Value = check(&bed, User::Admin, &[]).json();
            downstream_codes(&report) == ["version-affected"]
        }),
        "the downstream cluster never settled"
    );
    let written = bed.write_snapshot_records("k3s");

    // Healthy: every snapshot recorded (or too new to be), nothing to say about Rancher.
    bed.proxy().clear_requests();
    let healthy: Value = check(&bed, User::Admin, &[]).json();
    let summary = &healthy["rancher"];
    assert_eq!(summary["checked"], true, "{healthy:#}");
    assert_eq!(summary["version"], "v2.11.4");
    assert_eq!(summary["clusterId"], CLUSTER_ID);
    assert_eq!(summary["provisioningCluster"], format!("{WORKSPACE}/prod"));
    assert_eq!(summary["records"], written.len());
    assert!(summary["recorded"].as_u64().unwrap() >= written.len() as u64);
    assert!(
        codes(&healthy).iter().all(|c| !c.starts_with("rancher-")),
        "{healthy:#}"
    );
    only_reads_on_local(&bed);
    workspace_read_from_the_watch_cache(&bed, false);

    // Broken as the spec lists: a record of a gone snapshot, one nobody manages, a duplicate.
    let mgmt = bed.management().admin();
    let first = written[0].object.clone();
    let mut orphan = first.clone();
    orphan["metadata"] = json!({"name": "prod-gone-local", "namespace": WORKSPACE,
        "labels": first["metadata"]["labels"],
        "annotations": {"etcdsnapshot.rke.io/storage": "local",
                        "etcdsnapshot.rke.io/snapshot-name": "local-etcd-snapshot-gone-1-abcdef"}});
    let mut by_hand = first.clone();
    by_hand["metadata"] = json!({"name": "prod-by-hand-local", "namespace": WORKSPACE,
        "labels": first["metadata"]["labels"], "annotations": {}});
    by_hand["snapshotFile"]["name"] = json!("etcd-snapshot-restored-by-hand");
    let mut twin = first.clone();
    twin["metadata"] = json!({"name": "prod-twin-local", "namespace": WORKSPACE,
        "labels": first["metadata"]["labels"], "annotations": first["metadata"]["annotations"]});
    for record in [&orphan, &by_hand, &twin] {
        mgmt.create(RECORDS, record);
    }
    bed.proxy().clear_requests();
    let broken: Value = check(&bed, User::Admin, &[]).json();
    let rancher_codes: Vec<String> = codes(&broken)
        .into_iter()
        .filter(|c| c.starts_with("rancher-"))
        .collect();
    assert_eq!(
        rancher_codes,
        [
            "rancher-snapshot-duplicate",
            "rancher-snapshot-orphaned",
            "rancher-snapshot-unmanaged"
        ],
        "{broken:#}"
    );
    assert_eq!(downstream_codes(&broken), downstream_codes(&healthy));
    only_reads_on_local(&bed);

    // A user with the downstream read-only role but nothing on the management cluster: not
    // checked, with the reason and the command that prints the role; the verdict unchanged.
    viewer_with_every_read_only_right(bed.downstream());
    let denied = check(&bed, User::Viewer, &[]);
    denied.code(0);
    let denied: Value = denied.json();
    let run = rancher_run(&denied);
    assert_eq!(run["ran"], false, "{denied:#}");
    assert!(
        run["note"]
            .as_str()
            .unwrap()
            .contains("k3sdoctor rbac rancher"),
        "{run}"
    );
    assert_eq!(downstream_codes(&denied), downstream_codes(&healthy));
    // `k3sdoctor rbac rancher`'s roles, as docs/rbac.md shows them, are all it needs there.
    // With the ClusterRole alone the refusal names the request and the Role in the workspace
    // that grants it, not a downstream role.
    mgmt.apply_yaml(&readme_role("k3sdoctor-rancher-read-only"));
    mgmt.bind("k3sdoctor-rancher-read-only", "viewer");
    let half: Value = check(&bed, User::Viewer, &[]).json();
    let note = rancher_run(&half)["note"].as_str().unwrap().to_string();
    assert!(
        note.contains(&format!(
            "refused to list clusters.provisioning.cattle.io in {WORKSPACE} (403 Forbidden); \
             grant the Role k3sdoctor-rancher-read-only in namespace {WORKSPACE}"
        )),
        "{note}"
    );
    assert!(!note.contains("read-only ClusterRole"), "{note}");
    mgmt.apply_yaml(&readme_namespaced_role("k3sdoctor-rancher-read-only"));
    mgmt.bind_in(WORKSPACE, "k3sdoctor-rancher-read-only", "viewer");
    let granted: Value = check(&bed, User::Viewer, &[]).json();
    assert_eq!(granted["rancher"]["checked"], true, "{granted:#}");
    assert_eq!(granted["rancher"]["version"], "v2.11.4");
    assert_eq!(
        codes(&granted)
            .into_iter()
            .filter(|c| c.starts_with("rancher-"))
            .collect::<Vec<_>>(),
        rancher_codes
    );

    machine_plans_are_judged_with_the_opt_in_role_and_never_shown(&bed, &machines[0].name);

    // The management cluster resets or stalls mid-list: not checked, never an error, and the
    // downstream verdict is the one it was.
    for fault in [Fault::ResetMidBody, Fault::StallMidBody] {
        bed.proxy().set_fault("local", fault);
        let out = check(&bed, User::Admin, &["--request-timeout", "5s"]);
        bed.proxy().set_fault("local", Fault::Pass);
        out.code(0);
        let report: Value = out.json();
        let run = rancher_run(&report);
        assert_eq!(run["ran"], false, "{fault:?}: {report:#}");
        assert_eq!(
            downstream_codes(&report),
            downstream_codes(&healthy),
            "{fault:?}"
        );
    }

    // Every cluster of this Rancher: prod read through the proxy with its comparison, gone
    // unreachable in Rancher's words, without a request to it.
    bed.proxy().clear_requests();
    let fleet = k3sdoctor([
        "check",
        "--rancher-clusters",
        "-o",
        "json",
        "--fail-on",
        "never",
        "--ignore-unreachable",
    ])
    .kubeconfig(&bed.kubeconfig(User::Admin))
    .run();
    fleet.code(0);
    let fleet: Value = fleet.json();
    assert_eq!(fleet["kind"], "FleetReport");
    let entries = fleet["entries"].as_array().unwrap();
    let prod = entries
        .iter()
        .find(|e| e["server"].as_str().unwrap().ends_with(CLUSTER_ID))
        .unwrap();
    assert_eq!(prod["outcome"], "checked", "{prod:#}");
    assert_eq!(prod["report"]["rancher"]["checked"], true);
    let gone = entries
        .iter()
        .find(|e| e["server"].as_str().unwrap().ends_with(GONE_ID))
        .unwrap();
    assert_eq!(gone["outcome"], "unreachable", "{gone:#}");
    assert!(
        gone["error"]
            .as_str()
            .unwrap()
            .starts_with("unreachable (Rancher says: "),
        "{gone:#}"
    );
    assert!(bed.proxy().requests_to(GONE_ID).is_empty());
    only_reads_on_local(&bed);
    workspace_read_from_the_watch_cache(&bed, true);

    // serve --rancher-clusters: the same verdicts, every series labelled with its cluster.
    bed.proxy().clear_requests();
    let (serve, address) = start_serve(
        k3sdoctor([
            "serve",
            "--rancher-clusters",
            "--interval",
            "2s",
            "--metrics-auth",
            "none",
        ])
        .kubeconfig(&bed.kubeconfig(User::Admin)),
    );
    let prod_name = prod["context"].as_str().unwrap().to_string();
    let gone_name = gone["context"].as_str().unwrap().to_string();
    wait_for_sample(
        address,
        &format!("k3sdoctor_cluster_up{{cluster=\"{prod_name}\"}}"),
        1.0,
        FIRST_SNAPSHOTS,
    );
    let scraped = metrics(address);
    assert_eq!(
        sample(
            &scraped,
            &format!("k3sdoctor_cluster_up{{cluster=\"{gone_name}\"}}")
        ),
        Some(0.0),
        "{scraped}"
    );
    assert_eq!(
        sample(
            &scraped,
            &format!(
                "k3sdoctor_findings{{cluster=\"{prod_name}\",code=\"rancher-snapshot-duplicate\",severity=\"warning\"}}"
            )
        ),
        Some(1.0),
        "{scraped}"
    );
    assert_eq!(sample(&scraped, "k3sdoctor_up"), Some(1.0));
    let (status, report) = get(address, "/report").expect("/report answers");
    assert_eq!(status, 200);
    let report: Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["kind"], "FleetReport");
    only_reads_on_local(&bed);
    drop(serve);

    // The other lines, from the same real snapshots: each Rancher's records, judged by its rules.
    for version in ["v2.14.0", "v2.10.8"] {
        mgmt.request("DELETE", RECORDS, "application/json", None)
            .expect("delete the records");
        mgmt.merge_patch(
            "/apis/management.cattle.io/v3/settings/server-version",
            &json!({"value": version}),
        );
        let rancher = Rancher::parse(version).unwrap();
        let lines = bed.snapshot_records_as("k3s", rancher, WORKSPACE);
        records::write(mgmt, &lines);
        let report: Value = check(&bed, User::Admin, &[]).json();
        assert_eq!(report["rancher"]["version"], version, "{report:#}");
        assert_eq!(report["rancher"]["records"], lines.len(), "{version}");
        let faults: Vec<String> = codes(&report)
            .into_iter()
            .filter(|c| c.starts_with("rancher-snapshot"))
            .collect();
        assert!(faults.is_empty(), "{version}: {report:#}");
    }
    // A 2.10 record Rancher marked missing for a snapshot that exists nowhere downstream (no
    // ETCDSnapshotFile, no entry): gone, with the delete that removes it, never a "0 B" record
    // offered a backfill that cannot write its entry.
    let mut zero = json!({"apiVersion": "rke.cattle.io/v1", "kind": "ETCDSnapshot",
        "metadata": {"name": "prod-etcd-snapshot-gone-1-local", "namespace": WORKSPACE,
            "labels": {"rke.cattle.io/cluster-name": "prod", "rke.cattle.io/node-name": nodes[0]},
            "annotations": {"etcdsnapshot.rke.io/storage": "local",
                            "etcdsnapshot.rke.io/snapshotbackpopulate-reconciled": "true"}},
        "spec": {"clusterName": "prod"},
        "snapshotFile": {"name": "etcd-snapshot-gone-1", "nodeName": nodes[0],
                         "location": "file:///var/lib/rancher/k3s/server/db/snapshots/etcd-snapshot-gone-1"}});
    zero["status"] = json!({"missing": true});
    mgmt.create(RECORDS, &zero);
    let report: Value = check(&bed, User::Admin, &[]).json();
    assert!(
        codes(&report).contains(&"rancher-snapshot-orphaned".to_string())
            && !codes(&report).contains(&"rancher-snapshot-size-unknown".to_string()),
        "{report:#}"
    );
}

/// A plan Secret the agent never applied, written an hour ago: without the opt-in Role the
/// summary says the plans were not read; with it, `rancher-machine-plan-stuck` names the
/// machine, and nothing of the plan (the join token) is in any output. The Secret is deleted
/// after, so the rest of the test sees what it saw before.
fn machine_plans_are_judged_with_the_opt_in_role_and_never_shown(bed: &RancherBed, machine: &str) {
    use base64::Engine;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    const TOKEN: &str = "K10-REAL-S3CRET-TOKEN::server:c0ffee";
    let plan = json!({"files": [{"content": b64(&format!("token: {TOKEN}\n"))}]}).to_string();
    let hour_ago = (jiff::Timestamp::now() - jiff::SignedDuration::from_hours(1)).to_string();
    let secrets = format!("/api/v1/namespaces/{WORKSPACE}/secrets");
    let mgmt = bed.management().admin();
    mgmt.create(
        &secrets,
        &json!({"apiVersion": "v1", "kind": "Secret", "type": "rke.cattle.io/machine-plan",
                "metadata": {"name": format!("{machine}-machine-plan"),
                             "labels": {"rke.cattle.io/machine-name": machine,
                                        "rke.cattle.io/cluster-name": "prod"},
                             "annotations": {"rke.cattle.io/plan-last-updated": hour_ago}},
                "data": {"plan": b64(&plan), "applied-checksum": b64("an older plan's sha256")}}),
    );
    let stuck = |report: &Value| -> Vec<String> {
        every_finding(report)
            .into_iter()
            .filter(|f| f["code"] == "rancher-machine-plan-stuck")
            .map(|f| f["object"].as_str().unwrap().to_string())
            .collect()
    };
    let without: Value = check(bed, User::Viewer, &[]).json();
    assert!(stuck(&without).is_empty(), "{without:#}");
    assert!(
        without["rancher"]["note"]
            .as_str()
            .unwrap_or_default()
            .contains("machine plans not checked"),
        "{:#}",
        without["rancher"]
    );
    mgmt.apply_yaml(&readme_namespaced_role("k3sdoctor-rancher-machine-plans"));
    mgmt.bind_in(WORKSPACE, "k3sdoctor-rancher-machine-plans", "viewer");
    let with = check(bed, User::Viewer, &["-v", "-v"]);
    let report: Value = with.json();
    assert_eq!(
        stuck(&report),
        [format!("Machine {WORKSPACE}/{machine}")],
        "{report:#}"
    );
    for shown in [TOKEN, "S3CRET", &b64(&plan)] {
        assert!(
            !with.stdout.contains(shown) && !with.stderr.contains(shown),
            "the plan shows: {shown}"
        );
    }
    mgmt.request(
        "DELETE",
        &format!("{secrets}/{machine}-machine-plan"),
        "application/json",
        None,
    )
    .expect("delete the plan Secret");
}
