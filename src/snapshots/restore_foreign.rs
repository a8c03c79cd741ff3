//! Which entries of a backup name what this cluster does not have.
//!
//! A backup whose ConfigMap UID matches this cluster's restores without `--force` (the same
//! object is the same cluster, `restore_plan.rs`). A hand-edited file can carry that UID and
//! still hold another cluster's entries, so the plan names every entry whose node is not a
//! Node of this cluster, or whose S3 location (endpoint, bucket, folder) none of this
//! cluster's ETCDSnapshotFiles use: k3s writes both from its own node name and S3 settings
//! (pkg/etcd/snapshot.go), so an entry of this cluster names only those. It does not refuse:
//! the UID rule decides that; the plan lets the person reading it decide. Pure.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::model::cluster_state::ClusterState;
use crate::model::snapshot_entry::decode;
use crate::model::snapshot_key::{alternate_key, data_key};

/// An S3 target as k3s records it: endpoint, bucket and folder (`prefix` in the CR).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct S3Location {
    pub endpoint: String,
    pub bucket: String,
    pub folder: String,
}

impl std::fmt::Display for S3Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let folder = self.folder.trim_matches('/');
        let path = if folder.is_empty() {
            self.bucket.clone()
        } else {
            format!("{}/{folder}", self.bucket)
        };
        match self.endpoint.as_str() {
            "" => write!(f, "s3://{path}"),
            endpoint => write!(f, "s3://{path} at {endpoint}"),
        }
    }
}

/// What this cluster has for a backup's entries to name; `None` where it was not read (a
/// dump without Nodes, a cluster without the ETCDSnapshotFile CRD), and then not checked.
#[derive(Debug, Clone, Default)]
pub(crate) struct ClusterInventory {
    pub nodes: Option<BTreeSet<String>>,
    pub s3_locations: Option<BTreeSet<S3Location>>,
    /// The ConfigMap keys of the snapshots that exist (every key k3s may give each
    /// ETCDSnapshotFile), when they were read.
    pub snapshot_keys: Option<BTreeSet<String>>,
}

impl ClusterInventory {
    pub(crate) fn of(state: &ClusterState) -> ClusterInventory {
        let nodes = state
            .nodes
            .as_ref()
            .map(|nodes| nodes.iter().map(|n| n.name.clone()).collect());
        let files = state
            .snapshot_files
            .as_ref()
            .filter(|_| !state.snapshot_crd_missing);
        let s3_locations = files.map(|files| {
            files
                .iter()
                .filter_map(|f| f.s3.as_deref())
                .map(|s3| S3Location {
                    endpoint: s3.endpoint.clone(),
                    bucket: s3.bucket.clone(),
                    folder: s3.prefix.clone(),
                })
                .collect()
        });
        let snapshot_keys = files.map(|files| {
            files
                .iter()
                .flat_map(|f| std::iter::once(data_key(f)).chain(alternate_key(f)))
                .collect()
        });
        ClusterInventory {
            nodes,
            s3_locations,
            snapshot_keys,
        }
    }
}

/// A backup entry that names a node or an S3 location this cluster does not have.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ForeignEntry {
    /// The ConfigMap key.
    pub key: String,
    /// `spec.nodeName` of the entry, when no Node of this cluster has that name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown_node: Option<String>,
    /// The entry's S3 location, when no ETCDSnapshotFile of this cluster uses it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown_s3_location: Option<String>,
}

/// The entries of `data` (a backup's, key to value) that name a node or S3 location not in
/// `cluster`, in key order. Entries that do not decode, and S3 entries recorded under the
/// node name `s3` (k3s's placeholder when the uploader is not known), are not judged on what
/// they do not say.
pub(crate) fn foreign_entries<'a>(
    data: impl IntoIterator<Item = (&'a String, &'a String)>,
    cluster: &ClusterInventory,
) -> Vec<ForeignEntry> {
    let mut foreign = Vec::new();
    for (key, value) in data {
        let Ok(entry) = decode(value) else { continue };
        let unknown_node = cluster.nodes.as_ref().and_then(|nodes| {
            let node = entry.node_name.as_str();
            (!node.is_empty() && node != "s3" && !nodes.contains(node)).then(|| node.to_string())
        });
        let location = entry.s3_config.as_ref().map(|s3| {
            let text = |k: &str| {
                s3.get(k)
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            S3Location {
                endpoint: text("endpoint"),
                bucket: text("bucket"),
                folder: text("folder"),
            }
        });
        let unknown_s3_location = match (location, &cluster.s3_locations) {
            (Some(location), Some(known)) if !known.contains(&location) => {
                Some(location.to_string())
            }
            _ => None,
        };
        if unknown_node.is_some() || unknown_s3_location.is_some() {
            foreign.push(ForeignEntry {
                key: key.clone(),
                unknown_node,
                unknown_s3_location,
            });
        }
    }
    foreign
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn inventory() -> ClusterInventory {
        ClusterInventory {
            nodes: Some(["s1".to_string(), "s2".to_string()].into()),
            s3_locations: Some(
                [S3Location {
                    endpoint: "minio:9000".into(),
                    bucket: "snaps".into(),
                    folder: "prod".into(),
                }]
                .into(),
            ),
            snapshot_keys: None,
        }
    }

    fn entry(node: &str, s3: Option<(&str, &str, &str)>) -> String {
        let mut value = serde_json::json!({
            "name": "etcd-snapshot-x", "location": "file:///x", "nodeName": node,
            "createdAt": "2024-05-31T08:00:00Z", "size": "1", "status": "successful",
            "compressed": false,
        });
        if let Some((endpoint, bucket, folder)) = s3 {
            value["s3Config"] =
                serde_json::json!({"endpoint": endpoint, "bucket": bucket, "folder": folder});
        }
        value.to_string()
    }

    #[test]
    fn entries_naming_another_node_or_s3_location_are_named() {
        let data: BTreeMap<String, String> = [
            ("local-s1".into(), entry("s1", None)),
            ("local-s9".into(), entry("s9", None)),
            (
                "s3-ours".into(),
                entry("s2", Some(("minio:9000", "snaps", "prod"))),
            ),
            (
                "s3-theirs".into(),
                entry("s9", Some(("minio:9000", "snaps", "staging"))),
            ),
            (
                "s3-unknown-uploader".into(),
                entry("s3", Some(("", "other", ""))),
            ),
            ("not-json".into(), "{".into()),
        ]
        .into();
        let foreign = foreign_entries(&data, &inventory());
        let keys: Vec<&str> = foreign.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(keys, ["local-s9", "s3-theirs", "s3-unknown-uploader"]);
        assert_eq!(foreign[0].unknown_node.as_deref(), Some("s9"));
        assert_eq!(foreign[0].unknown_s3_location, None);
        assert_eq!(
            foreign[1].unknown_s3_location.as_deref(),
            Some("s3://snaps/staging at minio:9000")
        );
        assert_eq!(foreign[2].unknown_node, None);
        assert_eq!(
            foreign[2].unknown_s3_location.as_deref(),
            Some("s3://other")
        );
    }

    #[test]
    fn what_was_not_read_is_not_judged() {
        let data: BTreeMap<String, String> =
            [("k".into(), entry("s9", Some(("e", "b", "f"))))].into();
        assert!(foreign_entries(&data, &ClusterInventory::default()).is_empty());
    }
}
