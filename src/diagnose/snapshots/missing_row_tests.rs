//! Missing rows hold no ConfigMap value: with 50,000 CRs and no snapshot
//! controller, every row is missing, and a value kept per row was ~25 MiB no report shows.

use super::*;
use crate::diagnose::finding::{FindingCode, Severity, Spelled};
use crate::diagnose::leases::analyse_leases;
use crate::diagnose::test_cluster::{TestCluster, now, snapshot_json};
use crate::model::snapshot_entry::encode;
use crate::model::snapshot_key::data_key;

/// NOW is 2024-05-31T12:10:40Z; snapshots are hours older.
const T0: i64 = 1_717_142_400;
const SERVERS: [&str; 3] = ["s1", "s2", "s3"];

/// `count` snapshots, no Leases (no controller runs), no finalizers, an empty ConfigMap.
fn all_missing(count: usize) -> SnapshotAnalysis {
    let mut cluster = TestCluster::k3s()
        .server("s1", "v1.29.4+k3s1")
        .server("s2", "v1.29.4+k3s1")
        .server("s3", "v1.29.4+k3s1")
        .extra_metadata()
        .snapshot_configmap(&[]);
    for i in 0..count {
        cluster = cluster.snapshot(SERVERS[i % 3], T0 - i as i64 * 3_600, true);
    }
    let state = cluster.build();
    let leases = analyse_leases(&state, Distro::K3s, now());
    analyse_snapshots(&state, Distro::K3s, now(), &leases)
}

#[test]
fn missing_rows_hold_no_value_until_a_backfill_asks() {
    let count = 200;
    let a = all_missing(count);
    let missing: Vec<&SnapshotRow> = a
        .snapshots
        .iter()
        .filter(|r| r.state == EntryState::Missing)
        .collect();
    assert_eq!(missing.len(), count, "{:?}", a.findings);
    // The structure, not a figure: no row carries anything beyond its CR and its state.
    assert!(
        missing.iter().all(|r| !r.has_detail()),
        "a missing row holds a value"
    );
    // Worked out on demand, the value is still k3s's, byte for byte.
    let written: BTreeMap<String, String> = (0..count)
        .map(|i| {
            let cr = snapshot_json(SERVERS[i % 3], T0 - i as i64 * 3_600, true);
            let file = SnapshotFile::from_json(&cr);
            (data_key(&file), encode(&file, S3Shape::Legacy))
        })
        .collect();
    for row in missing {
        assert_eq!(Some(&a.expected_value(row)), written.get(&row.key()));
    }
}

/// Every CR missing: the finding's message keeps the list of its objects (the same
/// allocation as its `objectRefs`) instead of its joined text (50,000 names were megabytes
/// per finding), and reads exactly as the joined text did.
#[test]
fn a_finding_spells_its_objects_from_their_list_only_when_written() {
    let a = all_missing(40);
    let missing = a
        .findings
        .iter()
        .find(|f| {
            f.code == FindingCode::SnapshotMissingFromConfigmap && f.severity == Severity::Error
        })
        .expect("the missing finding");
    assert_eq!(missing.object_refs.len(), 40);
    let Some(Spelled::ObjectNames(list)) = missing.message.spelled() else {
        panic!("the message keeps its list: {:?}", missing.message);
    };
    assert!(Arc::ptr_eq(list, &missing.object_refs));
    let names: Vec<&str> = list.iter().map(|r| r.name.as_str()).collect();
    let text = missing.message.to_string();
    assert!(text.contains(&names.join(", ")), "{text}");
    assert_eq!(
        serde_json::to_value(missing).unwrap()["message"],
        text.as_str()
    );
}
