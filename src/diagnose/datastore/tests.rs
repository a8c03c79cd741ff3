use serde_json::json;

use crate::diagnose::check::analyse_check;
use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::diagnose::test_cluster::{TestCluster, now};
use crate::distro::Distro;
use crate::model::cluster_state::ClusterState;
use crate::model::collected::Collected;
use crate::model::histogram::Histogram;
use crate::model::kine_probe::{KineProbe, ProbeAnswer, WrittenRevision};
use crate::model::server_metrics::{
    DatastoreScrape, KineCompactions, ServerMetrics, SizeGrowth, StorageSize,
};

const V: &str = "v1.33.5+k3s1";
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
const MIB: f64 = 1024.0 * 1024.0;

fn apiserver_size(bytes: f64) -> DatastoreScrape {
    DatastoreScrape {
        storage_size: Some(StorageSize {
            bytes,
            metric: "apiserver_storage_size_bytes",
        }),
        ..DatastoreScrape::default()
    }
}

fn read(node: &str, apiserver: DatastoreScrape, etcd: Option<DatastoreScrape>) -> ServerMetrics {
    ServerMetrics {
        node: Some(node.into()),
        from: format!("{node}:6443"),
        apiserver: Ok(apiserver),
        etcd: etcd.map(Ok),
    }
}

fn with_metrics(cluster: TestCluster, reads: Vec<ServerMetrics>) -> ClusterState {
    let mut state = cluster.build();
    state.server_metrics = Collected::Read(reads);
    state
}

fn datastore_findings(state: &ClusterState) -> Vec<Finding> {
    analyse_check(state, Distro::K3s, now())
        .all_findings()
        .into_iter()
        .filter(|f| {
            matches!(
                f.code,
                FindingCode::EtcdDbNearQuota
                    | FindingCode::EtcdDbOverQuota
                    | FindingCode::EtcdDbFragmented
                    | FindingCode::EtcdQuotaDiffers
                    | FindingCode::KineCompactionStalled
                    | FindingCode::DatastoreSlow
            )
        })
        .collect()
}

fn codes(findings: &[Finding]) -> Vec<(Severity, FindingCode)> {
    findings.iter().map(|f| (f.severity, f.code)).collect()
}

fn held_locks(cluster: TestCluster, secs_ago: i64) -> TestCluster {
    cluster
        .lease("k3s", "a", secs_ago)
        .lease("k3s-etcd", "a", secs_ago)
}

#[test]
fn a_member_is_judged_against_its_quota_at_80_95_and_100_percent() {
    let at = |share: f64| {
        let c = held_locks(TestCluster::k3s().server("a", V), 1);
        datastore_findings(&with_metrics(
            c,
            vec![read("a", apiserver_size(share * 2.0 * GIB), None)],
        ))
    };
    assert!(at(0.5).is_empty());
    assert_eq!(
        codes(&at(0.85)),
        [(Severity::Warning, FindingCode::EtcdDbNearQuota)]
    );
    assert_eq!(
        codes(&at(0.96)),
        [(Severity::Error, FindingCode::EtcdDbNearQuota)]
    );
    let over = at(1.0);
    assert_eq!(
        codes(&over),
        [(Severity::Error, FindingCode::EtcdDbOverQuota)]
    );
    let message = &over[0].message;
    assert!(
        message.contains("2.0 GiB of its 2.0 GiB quota"),
        "{message}"
    );
    assert!(message.contains("etcd's default"), "{message}");
    assert!(
        over[0].remediation.contains("alarm disarm"),
        "{}",
        over[0].remediation
    );
    assert!(
        over[0]
            .remediation
            .contains("/var/lib/rancher/k3s/server/tls/etcd/client.crt")
    );
    assert_eq!(over[0].object, "Node a");
}

#[test]
fn the_quota_comes_from_etcd_then_node_args_then_the_default() {
    let args = |quota: &str| {
        json!({"annotations": {"k3s.io/node-args": serde_json::to_string(&json!(
            ["server", "--cluster-init", "--etcd-arg", "snapshot-count=5000", "--etcd-arg", quota]
        )).unwrap()}})
    };
    let c = held_locks(
        TestCluster::k3s().server_with("a", V, args("--quota-backend-bytes=8589934592")),
        1,
    );
    // 3 GiB: over the default, well under the 8 GiB node-args set.
    assert!(
        datastore_findings(&with_metrics(
            c,
            vec![read("a", apiserver_size(3.0 * GIB), None)]
        ))
        .is_empty()
    );

    // etcd's own quota metric wins over node-args.
    let c = held_locks(
        TestCluster::k3s().server_with("a", V, args("quota-backend-bytes=8589934592")),
        1,
    );
    let etcd = DatastoreScrape {
        etcd_total_bytes: Some(3.0 * GIB),
        etcd_quota_bytes: Some(3.5 * GIB),
        ..DatastoreScrape::default()
    };
    let found = datastore_findings(&with_metrics(
        c,
        vec![read("a", apiserver_size(1.0), Some(etcd))],
    ));
    assert_eq!(
        codes(&found),
        [(Severity::Warning, FindingCode::EtcdDbNearQuota)]
    );
    assert!(
        found[0].message.contains("etcd's quota metric"),
        "{}",
        found[0].message
    );
    assert!(
        found[0]
            .message
            .contains("etcd_mvcc_db_total_size_in_bytes")
    );

    // A negative quota turns it off.
    let c = held_locks(
        TestCluster::k3s().server_with("a", V, args("quota-backend-bytes=-1")),
        1,
    );
    assert!(
        datastore_findings(&with_metrics(
            c,
            vec![read("a", apiserver_size(30.0 * GIB), None)]
        ))
        .is_empty()
    );
}

#[test]
fn members_with_different_quotas_are_one_warning_naming_the_smallest() {
    let args = json!({"annotations": {"k3s.io/node-args": r#"["server","--etcd-arg","quota-backend-bytes=4294967296"]"#}});
    let c = held_locks(
        TestCluster::k3s()
            .server_with("a", V, args.clone())
            .server_with("b", V, args)
            .server("c", V),
        1,
    );
    let reads = ["a", "b", "c"]
        .map(|n| read(n, apiserver_size(100.0 * MIB), None))
        .to_vec();
    let found = datastore_findings(&with_metrics(c, reads));
    assert_eq!(
        codes(&found),
        [(Severity::Warning, FindingCode::EtcdQuotaDiffers)]
    );
    assert!(
        found[0].message.contains("The smallest (2.0 GiB on c)"),
        "{}",
        found[0].message
    );
}

#[test]
fn a_member_within_etcd_s_largest_write_of_its_quota_is_at_it() {
    // etcd refuses a write once size + the write reaches the quota: a real etcd 3.4 filled
    // with 900 KiB writes stopped 12 KiB under a 32 MiB quota, refusing each of them.
    let at = |size: f64| {
        let c = held_locks(TestCluster::k3s().server("a", V), 1);
        let etcd = DatastoreScrape {
            etcd_total_bytes: Some(size),
            etcd_quota_bytes: Some(32.0 * MIB),
            ..DatastoreScrape::default()
        };
        datastore_findings(&with_metrics(
            c,
            vec![read("a", apiserver_size(1.0), Some(etcd))],
        ))
    };
    let under = at(32.0 * MIB - 12.0 * 1024.0);
    assert_eq!(
        codes(&under),
        [(Severity::Error, FindingCode::EtcdDbOverQuota)]
    );
    let message = &under[0].message;
    assert!(
        message.contains("within etcd's largest write (1.5 MiB, its default --max-request-bytes)"),
        "{message}"
    );
    assert!(message.contains("raises the NOSPACE alarm"), "{message}");
    assert_eq!(
        codes(&at(32.0 * MIB - 1.5 * MIB)),
        [(Severity::Error, FindingCode::EtcdDbOverQuota)]
    );
    // One page further, a write of etcd's largest size still fits: near, not at.
    assert_eq!(
        codes(&at(32.0 * MIB - 1.5 * MIB - 4096.0)),
        [(Severity::Error, FindingCode::EtcdDbNearQuota)]
    );
}

#[test]
fn every_lock_frozen_beside_a_member_near_its_quota_is_nospace() {
    // 85 %: near, but the locks have not been renewed for ten minutes.
    let c = held_locks(TestCluster::k3s().server("a", V), 600);
    let found = datastore_findings(&with_metrics(
        c,
        vec![read("a", apiserver_size(0.85 * 2.0 * GIB), None)],
    ));
    assert_eq!(
        codes(&found),
        [(Severity::Error, FindingCode::EtcdDbOverQuota)]
    );
    assert!(
        found[0]
            .message
            .contains("every lock is frozen at once (k3s, k3s-etcd"),
        "{}",
        found[0].message
    );
    // Frozen locks alone, beside a small member, are not the datastore's.
    let c = held_locks(TestCluster::k3s().server("a", V), 600);
    assert!(
        datastore_findings(&with_metrics(c, vec![read("a", apiserver_size(MIB), None)])).is_empty()
    );
}

#[test]
fn a_fragmented_member_needs_etcd_s_in_use_and_over_100_mib_of_it() {
    let frag = |in_use: f64, total: f64| {
        let c = held_locks(TestCluster::k3s().server("a", V), 1);
        let etcd = DatastoreScrape {
            etcd_total_bytes: Some(total),
            etcd_in_use_bytes: Some(in_use),
            etcd_quota_bytes: Some(8.0 * GIB),
            ..DatastoreScrape::default()
        };
        codes(&datastore_findings(&with_metrics(
            c,
            vec![read("a", DatastoreScrape::default(), Some(etcd))],
        )))
    };
    assert_eq!(
        frag(300.0 * MIB, 900.0 * MIB),
        [(Severity::Warning, FindingCode::EtcdDbFragmented)]
    );
    assert!(frag(50.0 * MIB, 900.0 * MIB).is_empty());
    assert!(frag(500.0 * MIB, 900.0 * MIB).is_empty());
}

/// One server on sqlite and an agent.
fn sqlite() -> ClusterState {
    let mut c = TestCluster::k3s().without_nodes();
    c = c.agent("w1", V);
    let mut state = c.build();
    let node: k8s_openapi::api::core::v1::Node = serde_json::from_value(json!({
        "metadata": {"name": "s1", "labels": {"node-role.kubernetes.io/control-plane": "true"},
                     "annotations": {"k3s.io/node-args": "[\"server\"]"}},
        "status": {"nodeInfo": {"kubeletVersion": V}}
    }))
    .unwrap();
    state
        .nodes
        .get_or_insert_with(Vec::new)
        .push(crate::model::node::NodeFacts::from_api(&node));
    state
}

#[test]
fn on_sqlite_no_etcd_code_fires_and_kine_s_compaction_is_judged_after_15_minutes() {
    let kine = |error: f64, success: f64, uptime: i64| DatastoreScrape {
        kine_compactions: Some(KineCompactions { success, error }),
        process_start: Some((now().as_second() - uptime) as f64),
        ..apiserver_size(50.0 * GIB)
    };
    let judged = |scrape| {
        let mut state = sqlite();
        state.server_metrics = Collected::Read(vec![read("s1", scrape, None)]);
        codes(&datastore_findings(&state))
    };
    assert_eq!(
        judged(kine(4.0, 0.0, 3600)),
        [(Severity::Warning, FindingCode::KineCompactionStalled)]
    );
    assert!(judged(kine(4.0, 0.0, 600)).is_empty(), "too soon to tell");
    assert!(judged(kine(4.0, 1.0, 3600)).is_empty());
    assert!(
        judged(apiserver_size(50.0 * GIB)).is_empty(),
        "kine has no quota"
    );
}

#[test]
fn a_slow_datastore_names_each_measure_over_its_bound_as_a_lifetime_p99() {
    let mut slow = Histogram::default();
    for (le, n) in [
        (0.1, 10.0),
        (1.0, 50.0),
        (4.0, 100.0),
        (f64::INFINITY, 100.0),
    ] {
        slow.add(le, n);
    }
    let mut fsync = Histogram::default();
    for (le, n) in [(0.008, 99.0), (1.024, 100.0), (f64::INFINITY, 100.0)] {
        fsync.add(le, n);
    }
    let c = held_locks(TestCluster::k3s().server("a", V), 1);
    let apiserver = DatastoreScrape {
        object_requests: slow,
        ..apiserver_size(MIB)
    };
    let etcd = DatastoreScrape {
        wal_fsync: fsync,
        ..DatastoreScrape::default()
    };
    let found = datastore_findings(&with_metrics(c, vec![read("a", apiserver, Some(etcd))]));
    assert_eq!(
        codes(&found),
        [(Severity::Warning, FindingCode::DatastoreSlow)]
    );
    let message = &found[0].message;
    assert!(
        message.contains("single-object storage requests"),
        "{message}"
    );
    assert!(
        !message.contains("WAL fsync"),
        "p99 at 8 ms is fine: {message}"
    );
    assert!(message.contains("lifetime"), "{message}");
}

#[test]
fn servers_not_read_are_named_in_the_check_and_none_read_is_not_checked() {
    let c = held_locks(TestCluster::k3s().server("a", V).server("b", V), 1);
    let mut refused = read("b", DatastoreScrape::default(), None);
    refused.apiserver = Err("https://b:6443/metrics was refused (HTTP 403)".into());
    let state = with_metrics(
        c,
        vec![read("a", apiserver_size(MIB), None), refused.clone()],
    );
    let check = analyse_check(&state, Distro::K3s, now());
    let run = check.checks.iter().find(|c| c.name == "datastore").unwrap();
    assert!(run.ran);
    assert!(
        run.note
            .contains("Node b: https://b:6443/metrics was refused"),
        "{}",
        run.note
    );

    let c = held_locks(TestCluster::k3s().server("b", V), 1);
    let state = with_metrics(c, vec![refused]);
    let check = analyse_check(&state, Distro::K3s, now());
    let run = check.checks.iter().find(|c| c.name == "datastore").unwrap();
    assert!(!run.ran, "{run:?}");
    assert!(
        run.note.contains("no server's metrics were read"),
        "{}",
        run.note
    );
}

#[test]
fn a_size_the_apiserver_could_not_ask_for_is_named_as_such_not_as_missing() {
    let c = held_locks(TestCluster::k3s().server("a", V).server("b", V), 1);
    let failed = DatastoreScrape {
        storage_size_failed: true,
        ..DatastoreScrape::default()
    };
    let state = with_metrics(
        c,
        vec![
            read("a", failed, None),
            read("b", DatastoreScrape::default(), None),
        ],
    );
    let check = analyse_check(&state, Distro::K3s, now());
    let run = check.checks.iter().find(|c| c.name == "datastore").unwrap();
    assert!(
        run.note
            .contains("Node a: its apiserver could not ask the datastore for its size"),
        "{}",
        run.note
    );
    assert!(
        run.note
            .contains("Node b: no datastore size in its metrics"),
        "{}",
        run.note
    );
}

fn probe(minutes_ago: i64, behind: u64, answer: ProbeAnswer) -> KineProbe {
    KineProbe {
        written: WrittenRevision {
            revision: 500,
            at: now() - jiff::SignedDuration::from_mins(minutes_ago),
            object: "Job kube-system/helm-install-traefik".into(),
        },
        current: 500 + behind,
        answer,
    }
}

#[test]
fn a_revision_kine_still_serves_long_after_it_was_written_is_a_stalled_compaction() {
    let judged = |probe: KineProbe, metrics: Option<DatastoreScrape>| {
        let mut state = sqlite();
        state.kine_probe = Some(probe);
        state.server_metrics = match metrics {
            Some(m) => Collected::Read(vec![read("s1", m, None)]),
            None => Collected::Refused("needs get on /metrics".into()),
        };
        datastore_findings(&state)
    };
    let stalled = judged(probe(60, 50_000, ProbeAnswer::Retained), None);
    assert_eq!(
        codes(&stalled),
        [(Severity::Warning, FindingCode::KineCompactionStalled)],
        "found without metrics"
    );
    assert!(
        stalled[0]
            .message
            .contains("revision 500 (50000 revisions behind")
    );
    assert!(stalled[0].message.contains("helm-install-traefik"));
    let quiet = Some(apiserver_size(GIB));
    assert!(judged(probe(60, 50_000, ProbeAnswer::Compacted), quiet.clone()).is_empty());
    assert!(
        judged(probe(10, 50_000, ProbeAnswer::Retained), quiet.clone()).is_empty(),
        "written too recently for a pass to have reached it"
    );
    assert!(
        judged(probe(60, 1_500, ProbeAnswer::Retained), quiet.clone()).is_empty(),
        "inside the revisions kine keeps"
    );
    let failing = DatastoreScrape {
        kine_compactions: Some(KineCompactions {
            success: 0.0,
            error: 3.0,
        }),
        process_start: Some((now().as_second() - 3600) as f64),
        ..apiserver_size(GIB)
    };
    assert_eq!(
        judged(probe(60, 50_000, ProbeAnswer::Retained), Some(failing)).len(),
        1,
        "said once, from the metrics"
    );
}

#[test]
fn the_probe_is_not_judged_on_etcd_and_a_failed_probe_is_a_note() {
    let mut etcd = TestCluster::k3s().server("s1", V).build();
    etcd.kine_probe = Some(probe(60, 50_000, ProbeAnswer::Retained));
    assert!(datastore_findings(&etcd).is_empty());

    let mut state = sqlite();
    state.server_metrics = Collected::Read(vec![read("s1", apiserver_size(GIB), None)]);
    state.kine_probe = Some(probe(
        60,
        50_000,
        ProbeAnswer::Failed("list nodes at revision 500 (exact): 500 Internal Server Error".into()),
    ));
    let analysis = analyse_check(&state, Distro::K3s, now());
    assert!(datastore_findings(&state).is_empty());
    let run = analysis
        .checks
        .iter()
        .find(|c| c.name == "datastore")
        .expect("the datastore check");
    assert!(
        run.note
            .contains("kine compaction probe: list nodes at revision 500"),
        "{run:?}"
    );
}

#[test]
fn near_its_quota_a_member_s_pace_between_serve_s_polls_says_when_it_is_reached() {
    let near = |growth: Option<SizeGrowth>| {
        let c = held_locks(TestCluster::k3s().server("a", V), 1);
        let mut scrape = apiserver_size(1.8 * GIB);
        scrape.growth = growth;
        let found = datastore_findings(&with_metrics(c, vec![read("a", scrape, None)]));
        assert_eq!(
            codes(&found),
            [(Severity::Warning, FindingCode::EtcdDbNearQuota)]
        );
        found[0].message.clone()
    };
    let growing = near(Some(SizeGrowth {
        bytes: 51.2 * MIB,
        over: jiff::SignedDuration::from_mins(30),
    }));
    assert!(
        growing.contains("it grew 51.2 MiB in the last 30m (102.4 MiB an hour)")
            && growing.contains("reaches the quota in about 120m"),
        "{growing}"
    );
    let flat = near(Some(SizeGrowth {
        bytes: 0.0,
        over: jiff::SignedDuration::from_mins(40),
    }));
    assert!(flat.contains("it has not grown in the last 40m"), "{flat}");
    assert!(
        !near(None).contains("grew"),
        "one read says nothing of a pace"
    );
}
