//! `snapshot-record-empty`: an ETCDSnapshotFile that claims nothing failed, yet has no
//! `spec.location` or size 0. It points nowhere and cannot be restored. The known cause is the
//! multi-server S3 save race (k3s-io/k3s#10989, rancher/rke2#6928): when several servers save to
//! S3 at the same moment, some saves leave records with node `s3`, an empty location and size 0,
//! and their entries go missing from `<prog>-etcd-snapshots`. All of them hash `s3` + "" into
//! the same name digest. Fixed in v1.28.15, v1.29.10, v1.30.6 and v1.31.2. A failed save also
//! has no location, but it carries `status.error` and is `snapshot-failed`'s. k3s-io/k3s#10989 (rancher/rke2#6928),
//! fixed in v1.28.15, v1.29.10, v1.30.6 and v1.31.2.
//! Pure.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::diagnose::object_ref::ObjectRef;
use crate::distro::Distro;
use crate::model::node::NodeFacts;
use crate::model::snapshot_file::SnapshotFile;
use crate::model::snapshot_key::name_digest;

/// A record with nothing to restore from: not being deleted, not a failed save, and no
/// location or a size of 0.
fn is_empty_record(f: &SnapshotFile) -> bool {
    !f.deleting && f.error.is_none() && (f.location.is_empty() || f.size_bytes() == Some(0))
}

/// Reads the CRs alone (Nodes only add the version), so it runs on any input that has them.
/// `named_by_key`: the records carry their ConfigMap keys, not their object names (pasted
/// `etcd-snapshot ls` output names no ETCDSnapshotFile), so the fix cannot name the objects.
pub(super) fn analyse_empty_records(
    files: &[Arc<SnapshotFile>],
    nodes: &[NodeFacts],
    distro: Distro,
    named_by_key: bool,
) -> Option<Finding> {
    let empty: Vec<&SnapshotFile> = files
        .iter()
        .map(|f| f.as_ref())
        .filter(|f| is_empty_record(f))
        .collect();
    if empty.is_empty() {
        return None;
    }
    // The newest S3 snapshot is the one a restore reaches for first.
    let newest_s3 = files
        .iter()
        .filter(|f| !f.deleting && f.in_s3(distro))
        .max_by_key(|f| f.taken_at());
    let newest_is_empty = newest_s3.is_some_and(|f| is_empty_record(f));
    let names: Vec<String> = empty.iter().map(|f| f.name.to_string()).collect();
    let shared_note = shared_digest_note(&empty);
    let (issue, product) = match distro {
        Distro::K3s => ("k3s-io/k3s#10989", "k3s"),
        Distro::Rke2 => ("rancher/rke2#6928", "RKE2"),
    };
    let affected: BTreeSet<(String, String)> = nodes
        .iter()
        .filter(|n| n.is_server())
        .filter_map(|n| {
            let v = n.version.as_ref()?;
            Some((v.to_string(), v.s3_save_race()??))
        })
        .collect();
    let cause = match affected.iter().next() {
        Some((version, fixed)) => format!(
            ". Servers run {version}, which has the multi-server S3 save race ({issue}): when several servers \
             save to S3 at once, some records are left with no location and size 0; fixed in {fixed}"
        ),
        None => String::new(),
    };
    let newest = if newest_is_empty {
        " The newest S3 snapshot is one of them: the latest snapshot a restore would use is not there."
    } else {
        ""
    };
    let message = format!(
        "{} not a failed save, yet {} no location or size 0: {} nowhere and cannot be restored: {}{shared_note}{cause}.{newest}",
        if names.len() == 1 {
            "1 ETCDSnapshotFile is".to_string()
        } else {
            format!("{} ETCDSnapshotFiles are", names.len())
        },
        if names.len() == 1 { "has" } else { "have" },
        if names.len() == 1 {
            "it points"
        } else {
            "they point"
        },
        names.join(", "),
    );
    let upgrade = affected
        .iter()
        .next()
        .map(|(_, fixed)| format!("upgrade to {fixed} or later, "))
        .unwrap_or_default();
    let delete = delete_command(&names, named_by_key);
    let fix = format!(
        "take a snapshot now ({product} etcd-snapshot save on a server), {upgrade}then delete the empty records: \
         {delete}"
    );
    Some(
        Finding::new(
            if newest_is_empty {
                Severity::Error
            } else {
                Severity::Warning
            },
            FindingCode::SnapshotRecordEmpty,
            "ETCDSnapshotFiles",
            message,
        )
        .about_listing(ObjectRef::snapshot_files(&names))
        .fix(fix),
    )
}

/// "; 3 of them share the name digest … (node s3, empty location), the mark of concurrent
/// saves": the race's records all hash node `s3` and an empty location into one digest.
fn shared_digest_note(empty: &[&SnapshotFile]) -> String {
    let race_digest = name_digest("s3", "");
    let shared = empty
        .iter()
        .filter(|f| f.node_name.as_str() == "s3" && f.name.ends_with(&format!("-{race_digest}")))
        .count();
    if shared > 1 {
        format!(
            "; {shared} of them share the name digest {race_digest} (node s3, empty location), the mark of \
             concurrent saves"
        )
    } else {
        String::new()
    }
}

/// The command that deletes the empty records; by key where the input named no object.
fn delete_command(names: &[String], named_by_key: bool) -> String {
    if named_by_key {
        // An object's name is its key, a dash and a 6-hex digest (pkg/etcd/snapshot.go).
        let patterns: Vec<String> = names
            .iter()
            .map(|n| format!("-e '^etcdsnapshotfile.k3s.cattle.io/{n}-'"))
            .collect();
        format!(
            "kubectl get etcdsnapshotfiles -o name | grep {} | xargs kubectl delete",
            patterns.join(" ")
        )
    } else {
        format!("kubectl delete etcdsnapshotfile {}", names.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::test_cluster::{TestCluster, snapshot_json};
    use serde_json::json;

    const AFFECTED: &str = "v1.29.4+k3s1";
    const FIXED: &str = "v1.29.10+k3s1";
    /// 2024-05-31T12:00:00Z.
    const T0: i64 = 1_717_156_800;

    /// An S3 record as k3s writes it for an upload by `node` at `ts`.
    fn s3_record(node: &str, ts: i64) -> serde_json::Value {
        let file = format!("etcd-snapshot-{node}-{ts}");
        let location = format!("s3://bucket/folder/{file}");
        let time = jiff::Timestamp::from_second(ts).unwrap().to_string();
        json!({
            "metadata": {"name": format!("s3-{file}-{}", name_digest(node, &location)),
                         "creationTimestamp": time,
                         "labels": {"etcd.k3s.cattle.io/snapshot-storage-node": "s3"}},
            "spec": {"snapshotName": file, "nodeName": node, "location": location,
                     "s3": {"bucket": "bucket", "prefix": "folder"}},
            "status": {"creationTime": time, "readyToUse": true, "size": "8417312"}
        })
    }

    /// What the race leaves: node `s3`, no location, size 0, not failed.
    fn raced(node: &str, ts: i64) -> serde_json::Value {
        let mut cr = s3_record(node, ts);
        let file = format!("etcd-snapshot-{node}-{ts}");
        cr["metadata"]["name"] = json!(format!("s3-{file}-{}", name_digest("s3", "")));
        cr["spec"]["nodeName"] = json!("s3");
        cr["spec"]["location"] = json!("");
        cr["status"]["size"] = json!("0");
        cr
    }

    fn analyse(cluster: TestCluster) -> Option<Finding> {
        let state = cluster.build();
        let files = state.snapshot_files.clone().unwrap_or_default();
        analyse_empty_records(&files, state.nodes(), Distro::K3s, false)
    }

    fn servers(version: &str) -> TestCluster {
        TestCluster::k3s()
            .server("s1", version)
            .server("s2", version)
    }

    /// Pasted `etcd-snapshot ls` output names records by their keys: a delete by those names
    /// would name no object, so the fix finds the objects by the key and the digest's dash.
    #[test]
    fn records_named_by_their_keys_are_deleted_by_prefix_not_by_a_name_no_object_has() {
        let state = servers(AFFECTED).snapshot_json(raced("s1", T0)).build();
        let files = state.snapshot_files.clone().unwrap_or_default();
        let f = analyse_empty_records(&files, state.nodes(), Distro::K3s, true).expect("a finding");
        assert!(
            f.remediation.contains(
                "kubectl get etcdsnapshotfiles -o name | grep -e '^etcdsnapshotfile.k3s.cattle.io/"
            ),
            "{}",
            f.remediation
        );
        assert!(
            !f.remediation.contains("kubectl delete etcdsnapshotfile"),
            "{}",
            f.remediation
        );
    }

    #[test]
    fn the_newest_s3_snapshot_empty_is_an_error_naming_the_race_and_the_fix() {
        let f = analyse(
            servers(AFFECTED)
                .snapshot_json(s3_record("s1", T0 - 43_200))
                .snapshot_json(raced("s1", T0))
                .snapshot_json(raced("s2", T0)),
        )
        .expect("a finding");
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(f.code, FindingCode::SnapshotRecordEmpty);
        assert!(f.message.contains("k3s-io/k3s#10989"), "{}", f.message);
        assert!(
            f.message.contains("fixed in v1.29.10+k3s1"),
            "{}",
            f.message
        );
        assert!(
            f.message.contains("2 of them share the name digest"),
            "{}",
            f.message
        );
        assert!(
            f.message.contains("The newest S3 snapshot"),
            "{}",
            f.message
        );
        assert!(
            f.remediation.contains("upgrade to v1.29.10+k3s1"),
            "{}",
            f.remediation
        );
    }

    #[test]
    fn an_older_empty_record_is_a_warning_and_a_fixed_version_names_no_race() {
        let f = analyse(
            servers(FIXED)
                .snapshot_json(raced("s1", T0 - 43_200))
                .snapshot_json(s3_record("s1", T0)),
        )
        .expect("a finding");
        assert_eq!(f.severity, Severity::Warning);
        assert!(!f.message.contains("10989"), "{}", f.message);
        assert!(!f.message.contains("newest"), "{}", f.message);
    }

    #[test]
    fn failed_saves_and_whole_records_are_not_empty_records() {
        let mut failed = raced("s1", T0);
        failed["status"]["readyToUse"] = json!(false);
        failed["status"]["error"] =
            json!({"time": "2024-05-31T12:00:00Z", "message": "upload failed"});
        let healthy = servers(AFFECTED)
            .snapshot("s1", T0, true)
            .snapshot_json(s3_record("s1", T0))
            .snapshot_json(failed);
        assert_eq!(analyse(healthy), None);
        // Size 0 with a location is empty too.
        let mut zero = snapshot_json("s1", T0, true);
        zero["status"]["size"] = json!("0");
        let f = analyse(servers(AFFECTED).snapshot_json(zero)).expect("size 0");
        assert_eq!(f.severity, Severity::Warning);
    }
}
