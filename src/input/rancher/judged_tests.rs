//! Rancher's side judged from the management objects as Rancher writes them, selected for a
//! cluster as `--rancher-from-file` and the live reads select them.
// Test-only: its panics are assertions, never reached on bad input.
#![cfg(test)]

use serde_json::{Value, json};

use crate::diagnose::check::analyse_check;
use crate::diagnose::finding::{FindingCode, Severity};
use crate::diagnose::rancher::*;
use crate::diagnose::test_cluster::{TestCluster, now, snapshot_json};
use crate::distro::Distro;
use crate::input::rancher::rancher_selection::ManagementObjects;
use crate::model::rancher::view::RancherView;

const V: &str = "v1.29.4+k3s1";
const T0: i64 = 1_717_142_400;

/// A record as Rancher 2.11+ writes it for `cr` (the tests' own mapping of rancher/rancher
/// `snapshotbackpopulate`).
fn record_211(cr: &Value) -> Value {
    let esf = cr["metadata"]["name"].as_str().unwrap();
    let file = cr["spec"]["snapshotName"].as_str().unwrap();
    let node = cr["spec"]["nodeName"].as_str().unwrap();
    json!({
        "apiVersion": "rke.cattle.io/v1", "kind": "ETCDSnapshot",
        "metadata": {"name": format!("prod-{file}-local"), "namespace": "fleet-default",
            "creationTimestamp": cr["metadata"]["creationTimestamp"],
            "labels": {"rke.cattle.io/cluster-name": "prod", "rke.cattle.io/node-name": node,
                       "rke.cattle.io/machine-id": format!("id-{node}")},
            "annotations": {"etcdsnapshot.rke.io/storage": "local",
                            "etcdsnapshot.rke.io/snapshot-name": esf}},
        "spec": {"clusterName": "prod"},
        "snapshotFile": {"name": file, "nodeName": node, "location": cr["spec"]["location"],
            "createdAt": cr["status"]["creationTime"], "size": 8417312, "status": "successful",
            "metadata": "bnVsbA=="}
    })
}

fn management(version: &str, records: &[Value], extra: &[Value]) -> ManagementObjects {
    let mut objects = ManagementObjects {
        source: "test".into(),
        kubectl_target: "--context local".into(),
        version: Some(version.into()),
        backpopulate: Some(true),
        ..ManagementObjects::default()
    };
    for object in [
        json!({"apiVersion": "provisioning.cattle.io/v1", "kind": "Cluster",
               "metadata": {"name": "prod", "namespace": "fleet-default"},
               "spec": {"rkeConfig": {}}, "status": {"clusterName": "c-m-abcd1234"}}),
        json!({"apiVersion": "management.cattle.io/v3", "kind": "Cluster",
               "metadata": {"name": "c-m-abcd1234",
                            "annotations": {"provisioning.cattle.io/administrated": "true"}},
               "status": {"conditions": [{"type": "Connected", "status": "True"}]}}),
    ]
    .iter()
    .chain(records)
    .chain(extra)
    {
        assert!(objects.add(object));
    }
    for kind in [
        "etcdsnapshots.rke.cattle.io",
        "machines.cluster.x-k8s.io",
        "rkecontrolplanes.rke.cattle.io",
    ] {
        objects.mark_read(kind);
    }
    objects
}

fn machine(node: &str) -> Value {
    json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Machine",
           "metadata": {"name": format!("m-{node}"), "namespace": "fleet-default",
                        "labels": {"cluster.x-k8s.io/cluster-name": "prod",
                                   "rke.cattle.io/machine-id": format!("id-{node}")}},
           "status": {"nodeRef": {"name": node}}})
}

fn healthy() -> TestCluster {
    TestCluster::k3s()
        .server("s1", V)
        .lease("k3s", "s1", 1)
        .lease("k3s-etcd", "s1", 1)
        .extra_metadata()
}

fn analyse(down: TestCluster, objects: &ManagementObjects) -> RancherAnalysis {
    let mut state = down.build();
    let picked = objects.select(None, &state).unwrap();
    state.rancher = Some(RancherView::Read(Box::new(picked)));
    analyse_rancher(&state, Distro::K3s, now(), &[]).unwrap()
}

fn codes(a: &RancherAnalysis) -> Vec<FindingCode> {
    a.findings.iter().map(|f| f.code).collect()
}

#[test]
fn every_snapshot_recorded_is_healthy() {
    let cr = snapshot_json("s1", T0, false);
    let a = analyse(
        healthy().snapshot_json(cr.clone()),
        &management("v2.11.4", &[record_211(&cr)], &[machine("s1")]),
    );
    assert!(a.findings.is_empty(), "{:#?}", a.findings);
    assert_eq!((a.summary.recorded, a.summary.records), (Some(1), Some(1)));
}

#[test]
fn a_new_snapshot_is_pending_not_missing() {
    let cr = snapshot_json("s1", now().as_second() - 60, false);
    let a = analyse(
        healthy().snapshot_json(cr),
        &management("v2.11.4", &[], &[machine("s1")]),
    );
    assert!(a.findings.is_empty());
    assert_eq!(a.summary.pending, Some(1));
}

#[test]
fn a_missing_record_names_its_cause() {
    let cr = snapshot_json("s1", T0, false);
    let a = analyse(
        healthy().snapshot_json(cr.clone()),
        &management("v2.12.1", &[], &[machine("s1")]),
    );
    assert_eq!(codes(&a), [FindingCode::RancherSnapshotMissing]);
    assert!(
        a.findings[0]
            .message
            .contains("nothing in the objects explains it")
    );
    // No Machine for the node on 2.11–2.14.
    let a = analyse(
        healthy().snapshot_json(cr.clone()),
        &management("v2.12.1", &[], &[]),
    );
    assert!(
        a.findings[0]
            .message
            .contains("no Machine in fleet-default has status.nodeRef.name=s1"),
        "{}",
        a.findings[0].message
    );
    // A restore in progress: info, on purpose.
    let restoring = json!({"apiVersion": "rke.cattle.io/v1", "kind": "RKEControlPlane",
        "metadata": {"name": "prod", "namespace": "fleet-default"},
        "spec": {"etcdSnapshotRestore": {"generation": 2, "name": "prod-x"}},
        "status": {"etcdSnapshotRestore": {"generation": 1}}});
    let a = analyse(
        healthy().snapshot_json(cr.clone()),
        &management("v2.12.1", &[], &[machine("s1"), restoring]),
    );
    assert_eq!(a.findings[0].severity, Severity::Info);
    assert!(
        a.findings[0]
            .message
            .contains("restore of prod-x is in progress")
    );
}

/// A management dump taken while the Feature is off holds no records at all: the Feature is
/// the finding, not "not read".
#[test]
fn the_feature_off_without_records_is_found() {
    let cr = snapshot_json("s1", T0, false);
    let mut objects = management("v2.11.4", &[], &[machine("s1")]);
    objects.records = None;
    objects.backpopulate = Some(false);
    let a = analyse(healthy().snapshot_json(cr.clone()), &objects);
    assert_eq!(codes(&a), [FindingCode::RancherBackpopulateOff]);
    assert!(a.summary.checked, "{:#?}", a.summary);
    // With the Feature on, missing records stay "not checked", said once.
    objects.backpopulate = Some(true);
    let a = analyse(healthy().snapshot_json(cr), &objects);
    assert!(a.findings.is_empty());
    let note = a.summary.note.unwrap();
    assert_eq!(note.matches("not read").count(), 1, "{note}");
    assert!(
        note.starts_with("Rancher's snapshot records were not read (add `kubectl get"),
        "{note}"
    );
}

#[test]
fn the_feature_off_is_the_root_of_every_missing_record() {
    let cr = snapshot_json("s1", T0, false);
    let mut objects = management("v2.11.4", &[], &[machine("s1")]);
    objects.backpopulate = Some(false);
    let a = analyse(healthy().snapshot_json(cr), &objects);
    assert_eq!(
        codes(&a),
        [
            FindingCode::RancherBackpopulateOff,
            FindingCode::RancherSnapshotMissing
        ]
    );
    assert_eq!(
        a.findings[1].caused_by,
        Some(FindingCode::RancherBackpopulateOff)
    );
}

#[test]
fn the_2_11_0_loop_is_told_by_the_unannotated_record_holding_the_name() {
    let cr = snapshot_json("s1", T0, false);
    let mut legacy = record_211(&cr);
    legacy["metadata"]["annotations"] = json!({"etcdsnapshot.rke.io/storage": "local"});
    let a = analyse(
        healthy().snapshot_json(cr),
        &management("v2.11.1", &[legacy], &[machine("s1")]),
    );
    let missing = a
        .findings
        .iter()
        .find(|f| f.code == FindingCode::RancherSnapshotMissing)
        .unwrap();
    assert!(
        missing.message.contains("already exists"),
        "{}",
        missing.message
    );
    assert!(missing.remediation.starts_with("kubectl --context local -n fleet-default delete etcdsnapshots.rke.cattle.io prod-etcd-snapshot-s1-1717142400-local"));
}

#[test]
fn records_of_gone_snapshots_are_orphaned_or_unmanaged() {
    let cr = snapshot_json("s1", T0, false);
    let gone = snapshot_json("s1", T0 - 3600, false);
    let mut unmanaged = record_211(&gone);
    unmanaged["metadata"]["name"] = json!("by-hand");
    unmanaged["metadata"]["annotations"] = json!({});
    let kept_legacy = {
        let mut r = record_211(&cr);
        r["metadata"]["name"] = json!("legacy-of-a-live-snapshot");
        r["metadata"]["annotations"] = json!({});
        r
    };
    let objects = management(
        "v2.11.4",
        &[record_211(&cr), record_211(&gone), unmanaged, kept_legacy],
        &[machine("s1")],
    );
    let a = analyse(healthy().snapshot_json(cr), &objects);
    assert_eq!(
        codes(&a),
        [
            FindingCode::RancherSnapshotOrphaned,
            FindingCode::RancherSnapshotUnmanaged
        ]
    );
    assert!(
        a.findings[1].message.contains("by-hand") && !a.findings[1].message.contains("legacy-of")
    );
    assert!(a.findings[1].remediation.starts_with(
        "kubectl --context local -n fleet-default delete etcdsnapshots.rke.cattle.io by-hand;"
    ));
    assert!(a.findings[1].remediation.contains("disaster recovery"));
}

#[test]
fn duplicates_and_drift() {
    let cr = snapshot_json("s1", T0, false);
    let mut twin = record_211(&cr);
    twin["metadata"]["name"] = json!("twin");
    let a = analyse(
        healthy().snapshot_json(cr.clone()),
        &management("v2.11.4", &[record_211(&cr), twin], &[machine("s1")]),
    );
    assert_eq!(codes(&a), [FindingCode::RancherSnapshotDuplicate]);
    let mut stale = record_211(&cr);
    stale["snapshotFile"]["size"] = json!(0);
    let a = analyse(
        healthy().snapshot_json(cr),
        &management("v2.11.3", &[stale], &[machine("s1")]),
    );
    assert_eq!(codes(&a), [FindingCode::RancherSnapshotDrift]);
    assert!(a.findings[0].message.contains("size 0 ≠ 8417312"));
    assert!(
        a.findings[0].message.contains("0x0"),
        "{}",
        a.findings[0].message
    );
}

#[test]
fn restore_mode_none_names_the_missing_extra_metadata_configmap() {
    let cr = snapshot_json("s1", T0, false);
    let mut record = record_211(&cr);
    record["metadata"]["annotations"]["etcdsnapshot.rke.io/restore-mode-options"] = json!("none");
    let down = TestCluster::k3s()
        .server("s1", V)
        .lease("k3s", "s1", 1)
        .lease("k3s-etcd", "s1", 1)
        .snapshot_configmap(&[])
        .snapshot_json(cr);
    let a = analyse(down, &management("v2.14.0", &[record], &[machine("s1")]));
    assert_eq!(codes(&a), [FindingCode::RancherRestoreUnavailable]);
    assert!(
        a.findings[0]
            .message
            .contains("kube-system/k3s-etcd-snapshot-extra-metadata ConfigMap does not exist")
    );
}

#[test]
fn an_imported_cluster_before_2_15_is_not_judged() {
    let mut objects = management("v2.14.2", &[], &[]);
    objects.provisioning.as_mut().unwrap()[0].imported = true;
    let a = analyse(
        healthy().snapshot_json(snapshot_json("s1", T0, false)),
        &objects,
    );
    assert!(!a.summary.checked && a.findings.is_empty());
    assert!(
        a.summary
            .note
            .as_deref()
            .unwrap()
            .contains("imported cluster")
    );
}

/// ≤ 2.10: a "0 B" record under the missing ConfigMap entry, under the split that caused it.
#[test]
fn a_zero_byte_record_hangs_under_the_split() {
    let mut cr = snapshot_json("s2", T0, true);
    cr["metadata"]["finalizers"] = json!([]);
    let mut record = record_211(&cr);
    record["metadata"]["annotations"] = json!({"etcdsnapshot.rke.io/storage": "local",
        "etcdsnapshot.rke.io/snapshotbackpopulate-reconciled": "true"});
    record["snapshotFile"] = json!({"name": cr["spec"]["snapshotName"], "nodeName": "s2",
                                    "location": cr["spec"]["location"]});
    let synced = |name: &str| {
        json!({"finalizers": ["wrangler.cattle.io/managed-etcd-controller"],
               "annotations": {"etcd.k3s.cattle.io/node-name": format!("{name}-1a2b3c4d")}})
    };
    let mut state = TestCluster::k3s()
        .server_with("s1", V, synced("s1"))
        .server_with("s2", V, synced("s2"))
        .lease("k3s", "s1", 1)
        .lease("k3s-etcd", "s2", 1)
        .extra_metadata()
        .snapshot_configmap(&[])
        .snapshot_json(cr)
        .build();
    let objects = management("v2.10.3", &[record], &[]);
    state.rancher = Some(RancherView::Read(Box::new(
        objects.select(None, &state).unwrap(),
    )));
    let a = analyse_check(&state, Distro::K3s, now());
    assert_eq!(
        a.findings[0].finding.code,
        FindingCode::LeaseSplit,
        "{:#?}",
        a.findings
    );
    let children: Vec<FindingCode> = a.findings[0].children.iter().map(|c| c.code).collect();
    assert!(
        children.contains(&FindingCode::RancherSnapshotSizeUnknown),
        "{children:?}"
    );
    let rancher = a.rancher.unwrap();
    assert_eq!(rancher.version.as_deref(), Some("v2.10.3"));
    assert_eq!(rancher.recorded, Some(1));
}

#[test]
fn several_clusters_are_told_apart_by_their_snapshots() {
    let cr = snapshot_json("s1", T0, false);
    let mut other = record_211(&snapshot_json("x9", T0, false));
    other["metadata"]["labels"]["rke.cattle.io/cluster-name"] = json!("edge");
    let mut objects = management("v2.11.4", &[record_211(&cr), other], &[]);
    objects.provisioning.as_mut().unwrap().push(
        crate::model::rancher::management::ProvisioningCluster {
            namespace: "fleet-default".into(),
            name: "edge".into(),
            ..Default::default()
        },
    );
    let state = healthy().snapshot_json(cr).build();
    assert_eq!(
        objects.select(None, &state).unwrap().provisioning.name,
        "prod"
    );
    assert_eq!(
        objects
            .select(Some("edge"), &state)
            .unwrap()
            .provisioning
            .name,
        "edge"
    );
    assert_eq!(
        objects
            .select(Some("c-m-abcd1234"), &state)
            .unwrap()
            .provisioning
            .name,
        "prod"
    );
    let err = objects.select(Some("nope"), &state).unwrap_err();
    assert!(
        err.contains("fleet-default/prod, fleet-default/edge"),
        "{err}"
    );
}

/// ≤ 2.10: records of snapshots that exist nowhere downstream are judged as gone, whatever
/// their size says, and never offered a backfill; a "0 B" record of a live snapshot still is.
#[test]
fn legacy_records_without_a_snapshot_are_gone_not_size_unknown() {
    let live = snapshot_json("s1", T0, false);
    let legacy = |cr: &Value, sized: bool| {
        let mut record = record_211(cr);
        record["metadata"]["annotations"] = json!({"etcdsnapshot.rke.io/storage": "local",
            "etcdsnapshot.rke.io/snapshotbackpopulate-reconciled": "true"});
        if !sized {
            record["snapshotFile"] = json!({"name": cr["spec"]["snapshotName"],
                "nodeName": "s1", "location": cr["spec"]["location"]});
            record["status"] = json!({"missing": true});
        }
        record
    };
    let long_gone = snapshot_json("s1", T0 - 90 * 86_400, false);
    let gone_empty = snapshot_json("s1", T0 - 86_400, false);
    let records = [
        legacy(&live, false),
        legacy(&long_gone, true),
        legacy(&gone_empty, false),
    ];
    let a = analyse(
        healthy()
            .snapshot_json(live.clone())
            .snapshot_configmap(&[]),
        &management("v2.9.3", &records, &[machine("s1")]),
    );
    let mut found = codes(&a);
    found.sort_by_key(|c| c.as_str());
    assert_eq!(
        found,
        [
            FindingCode::RancherSnapshotOrphaned,
            FindingCode::RancherSnapshotSizeUnknown
        ],
        "{:#?}",
        a.findings
    );
    let gone = a
        .findings
        .iter()
        .find(|f| f.code == FindingCode::RancherSnapshotOrphaned)
        .unwrap();
    let names = |cr: &Value| {
        format!(
            "prod-{}-local",
            cr["spec"]["snapshotName"].as_str().unwrap()
        )
    };
    assert_eq!(gone.listed(), [names(&long_gone), names(&gone_empty)]);
    assert!(
        gone.remediation
            .contains("delete etcdsnapshots.rke.cattle.io")
    );
    assert!(!gone.remediation.contains("backfill --fix"));
    let unknown = a
        .findings
        .iter()
        .find(|f| f.code == FindingCode::RancherSnapshotSizeUnknown)
        .unwrap();
    assert_eq!(unknown.listed(), [names(&live)]);
    assert!(unknown.remediation.contains("backfill --fix"));
}
