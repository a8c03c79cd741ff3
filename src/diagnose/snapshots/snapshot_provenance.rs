//! Where snapshots came from: the server token they were taken under, and the cluster whose
//! servers uploaded them to S3. Part of the `snapshot-files` analyser.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::diagnose::object_ref::ObjectRef;
use crate::distro::Distro;
use crate::model::node::NodeFacts;
use crate::model::snapshot_file::SnapshotFile;

/// `snapshot-token-rotated`: k3s stamps each successful snapshot with the first 12 hex of
/// sha256 of the server token (`AnnotationTokenHash`, pkg/etcd/snapshot/types.go; pkg/util/
/// token.go). Two values among ready snapshots mean the token changed in between, and a
/// restore of the older ones needs the old token. Failed snapshots and local files found by a
/// directory scan carry none, so a missing hash is no mismatch (k3s
/// `pkg/etcd/snapshot.go`, `annotationTokenHash`).
pub(super) fn token_rotated(
    files: &[Arc<SnapshotFile>],
    distro: Distro,
    foreign: &[&str],
) -> Option<Finding> {
    let mut newest: BTreeMap<&str, (&SnapshotFile, usize)> = BTreeMap::new();
    for f in files
        .iter()
        .filter(|f| f.ready_to_use && !f.deleting && !foreign.contains(&&*f.name))
    {
        let Some(hash) = f.token_hash(distro) else {
            continue;
        };
        let slot = newest.entry(hash).or_insert((f, 0));
        slot.1 += 1;
        if f.taken_at() > slot.0.taken_at() {
            slot.0 = f;
        }
    }
    if newest.len() < 2 {
        return None;
    }
    let mut hashes: Vec<(&str, &SnapshotFile, usize)> =
        newest.into_iter().map(|(h, (f, n))| (h, f, n)).collect();
    // Newest hash first: that is the token in use now.
    hashes.sort_by_key(|(_, f, _)| std::cmp::Reverse(f.taken_at()));
    let listed: Vec<String> = hashes
        .iter()
        .map(|(hash, f, n)| {
            format!(
                "{hash}: {n} snapshot{}, newest {} ({})",
                if *n == 1 { "" } else { "s" },
                f.snapshot_name,
                f.taken_at()
                    .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
                    .unwrap_or_else(|| "time unknown".into())
            )
        })
        .collect();
    let names: Vec<String> = hashes.iter().map(|(_, f, _)| f.name.to_string()).collect();
    Some(
        Finding::new(
            Severity::Info,
            FindingCode::SnapshotTokenRotated,
            "ETCDSnapshotFiles",
            format!(
                "ready snapshots carry {} different {} values: the server token was rotated, and restoring one \
                 taken before that needs the token it was taken with (the current one is {}): {}",
                hashes.len(),
                distro.etcd_annotation("snapshot-token-hash"),
                hashes[0].0,
                listed.join("; ")
            ),
        )
        .about(ObjectRef::snapshot_files(&names))
        .fix(format!(
            "keep the old token with those snapshots: {} server --cluster-reset --cluster-reset-restore-path=FILE \
             --token=OLD-TOKEN restores one",
            distro.prog()
        )),
    )
}

/// Whether `snapshot_name` is `<prefix>-<node>-<unix>[.zip]` for one of `nodes` (the file name
/// k3s gives a snapshot, pkg/etcd/snapshot.go `Snapshot()`).
fn names_a_node(snapshot_name: &str, nodes: &[&str]) -> bool {
    let stem = snapshot_name.strip_suffix(".zip").unwrap_or(snapshot_name);
    let Some((rest, unix)) = stem.rsplit_once('-') else {
        return false;
    };
    if unix.is_empty() || !unix.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    nodes.iter().any(|node| {
        rest.strip_suffix(node)
            .is_some_and(|prefix| prefix.len() > 1 && prefix.ends_with('-'))
    })
}

/// `snapshot-s3-foreign`: k3s lists every object under the folder as a snapshot and filters
/// by neither name nor cluster ID (pkg/etcd/s3/s3.go `ListSnapshots`), and retention counts
/// them all, so a bucket folder shared with another cluster mixes both clusters' snapshots
/// (k3s-io/k3s#13934). A node removed from this cluster also matches (spec's last table).
pub(super) fn s3_foreign(
    files: &[Arc<SnapshotFile>],
    nodes: &[NodeFacts],
    distro: Distro,
) -> Vec<Finding> {
    let known: Vec<&str> = nodes
        .iter()
        .filter(|n| n.is_server())
        .map(|n| n.name.as_str())
        .collect();
    let mut by_folder: BTreeMap<String, Vec<&SnapshotFile>> = BTreeMap::new();
    for f in files.iter().filter(|f| f.in_s3(distro) && !f.deleting) {
        let uploader_known = f.node_name.as_str() == "s3" || known.contains(&f.node_name.as_str());
        if names_a_node(&f.snapshot_name, &known) && uploader_known {
            continue;
        }
        let folder =
            f.s3.as_ref()
                .map(|s| format!("s3://{}/{}", s.bucket, s.prefix))
                .unwrap_or_else(|| "S3".into());
        by_folder.entry(folder).or_default().push(f);
    }
    by_folder
        .into_iter()
        .map(|(folder, files)| {
            let names: Vec<String> = files.iter().map(|f| f.name.to_string()).collect();
            let shown: Vec<String> = files
                .iter()
                .map(|f| format!("{} (uploaded by {})", f.snapshot_name, f.node_name))
                .collect();
            Finding::new(
                Severity::Warning,
                FindingCode::SnapshotS3Foreign,
                "ETCDSnapshotFiles",
                format!(
                    "{} in {folder} not named <name>-<node>-<unix> for a server of this cluster: the bucket folder \
                     is shared with another cluster (k3s-io/k3s#13934), or holds a removed node's uploads, and S3 \
                     retention counts them with this cluster's: {}",
                    if files.len() == 1 {
                        "1 S3 snapshot".to_string()
                    } else {
                        format!("{} S3 snapshots", files.len())
                    },
                    shown.join(", ")
                ),
            )
            .listing(&shown)
            .about(ObjectRef::snapshot_files(&names))
            .fix("give each cluster its own --etcd-s3-folder (or bucket)")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::names_a_node;

    #[test]
    fn snapshot_names_follow_prefix_node_unix() {
        let nodes = ["s1", "ip-10-0-0-11"];
        assert!(names_a_node("etcd-snapshot-s1-1717142400", &nodes));
        assert!(names_a_node(
            "on-demand-ip-10-0-0-11-1717142400.zip",
            &nodes
        ));
        assert!(!names_a_node("etcd-snapshot-other-1717142400", &nodes));
        assert!(!names_a_node("etcd-snapshot-s1-17171424x0", &nodes));
        assert!(
            !names_a_node("s1-1717142400", &nodes),
            "a prefix is required"
        );
        assert!(!names_a_node("backup.tar.gz", &nodes));
        // `xs1` is not `s1`: the node must follow a dash.
        assert!(!names_a_node("etcd-snapshot-xs1-1717142400", &nodes));
    }
}
