//! What k3s's snapshot ConfigMap reconcile (`reconcile` in `pkg/etcd/snapshot_controller.go`,
//! run when the controller starts on a new `<prog>-etcd` holder and every 600 minutes) does
//! with an entry that no listed ETCDSnapshotFile accounts for. Pure.
//!
//! The rules, as the source has them:
//! - nothing is deleted until some etcd Node carries `etcd.<prog>.cattle.io/local-snapshots-timestamp`
//!   or `…/s3-snapshots-timestamp` (it returns `errNotReconciled` first);
//! - an `s3-` key goes once any etcd Node has synced S3;
//! - a `local-` key is matched to the first etcd Node (in list order) whose name ends the key
//!   after `local-`, `.zip` and every trailing character of `-012345678` are trimmed (Go's
//!   `TrimRight` takes a set, and `9` is not in it); it goes when that Node has synced, and at
//!   once when no Node matches;
//! - any other key (the bare pre-2023 format) is left alone.

use serde::Serialize;

use crate::distro::Distro;
use crate::model::node::NodeFacts;

/// What the reconcile does with such an entry, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReconcileFate {
    /// `true`: the next reconcile deletes it (so `backfill --prune` may too).
    pub removes: bool,
    /// Why, in plain words.
    pub why: String,
    /// The k3s mechanics behind `why`: the annotations and key matching it reads (`-v`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl ReconcileFate {
    fn removes(why: String) -> ReconcileFate {
        ReconcileFate {
            removes: true,
            why,
            detail: None,
        }
    }

    fn keeps(why: String) -> ReconcileFate {
        ReconcileFate {
            removes: false,
            why,
            detail: None,
        }
    }

    fn because(mut self, detail: String) -> ReconcileFate {
        self.detail = Some(detail);
        self
    }
}

/// `nodes`: every Node (the reconcile lists those labelled `node-role.kubernetes.io/etcd=true`).
pub(super) fn reconcile_fate(key: &str, nodes: &[NodeFacts], distro: Distro) -> ReconcileFate {
    let local_annotation = distro.etcd_annotation("local-snapshots-timestamp");
    let s3_annotation = distro.etcd_annotation("s3-snapshots-timestamp");
    let mut etcd_nodes: Vec<&NodeFacts> = nodes
        .iter()
        .filter(|n| {
            n.labels
                .get("node-role.kubernetes.io/etcd")
                .map(String::as_str)
                == Some("true")
        })
        .collect();
    // The API lists Nodes by name; the first match wins.
    etcd_nodes.sort_by(|a, b| a.name.cmp(&b.name));
    let synced = |n: &NodeFacts| n.annotations.contains_key(&local_annotation);
    let s3_synced = etcd_nodes
        .iter()
        .any(|n| n.annotations.contains_key(&s3_annotation));
    if !s3_synced && !etcd_nodes.iter().any(|n| synced(n)) {
        return ReconcileFate::keeps(
            "no etcd server has finished a snapshot reconcile yet, and until one has, k3s's reconcile deletes nothing"
                .into(),
        )
        .because(format!(
            "no etcd Node carries {local_annotation} or {s3_annotation}"
        ));
    }
    if key.starts_with("s3-") {
        return if s3_synced {
            ReconcileFate::removes(
                "an etcd server has synced its S3 snapshots and no ETCDSnapshotFile gets this key"
                    .into(),
            )
            .because(format!("an etcd Node carries {s3_annotation}"))
        } else {
            ReconcileFate::keeps(
                "no etcd server has synced S3 snapshots yet; k3s keeps S3 entries until one has"
                    .into(),
            )
            .because(format!("no etcd Node carries {s3_annotation}"))
        };
    }
    let Some(rest) = key.strip_prefix("local-") else {
        return ReconcileFate::keeps(
            "a key in the pre-2023 format, which k3s's reconcile leaves alone".into(),
        );
    };
    let rest = rest.strip_suffix(".zip").unwrap_or(rest);
    let trimmed = rest.trim_end_matches(|c: char| "-012345678".contains(c));
    match etcd_nodes
        .iter()
        .find(|n| trimmed.ends_with(n.name.as_str()))
    {
        Some(node) if synced(node) => ReconcileFate::removes(format!(
            "etcd Node {} has reconciled its local snapshots and no ETCDSnapshotFile gets this key",
            node.name
        ))
        .because(format!("{} carries {local_annotation}", node.name)),
        Some(node) => ReconcileFate::keeps(format!(
            "etcd Node {} has not reconciled its local snapshots yet",
            node.name
        ))
        .because(format!("{} lacks {local_annotation}", node.name)),
        // The operator needs the consequence; the trim is for -v and JSON.
        None => ReconcileFate::removes(
            "k3s cannot tell which etcd node this entry belongs to (its reading of node names from keys fails \
             for names that end in a digit, and for times that end in 9), so its reconcile removes the entry"
                .into(),
        )
        .because(format!(
            "no etcd Node matches it: k3s matches Node names against {trimmed:?}, the key with its trailing \
             digits 0-8 and dashes trimmed (TrimRight with the set \"-012345678\")"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::test_cluster::TestCluster;
    use serde_json::json;

    const V: &str = "v1.29.4+k3s1";
    const LOCAL: &str = "etcd.k3s.cattle.io/local-snapshots-timestamp";
    const S3: &str = "etcd.k3s.cattle.io/s3-snapshots-timestamp";

    fn fate(key: &str, cluster: TestCluster) -> ReconcileFate {
        reconcile_fate(key, cluster.build().nodes(), Distro::K3s)
    }

    fn synced(extra: &[&str]) -> serde_json::Value {
        let annotations: serde_json::Map<String, serde_json::Value> = extra
            .iter()
            .map(|a| (a.to_string(), json!("2024-05-31T12:00:00Z")))
            .collect();
        json!({"annotations": annotations})
    }

    #[test]
    fn nothing_is_deleted_before_any_node_has_reconciled() {
        let c = TestCluster::k3s().server("web", V).server("db", V);
        let f = fate("local-etcd-snapshot-web-1717142400", c);
        assert!(!f.removes, "{f:?}");
        assert!(f.why.contains("deletes nothing"));
        assert!(f.detail.unwrap().contains(LOCAL));
    }

    #[test]
    fn local_keys_go_once_their_node_has_reconciled() {
        let c = || {
            TestCluster::k3s()
                .server_with("web", V, synced(&[LOCAL]))
                .server("db", V)
        };
        assert!(fate("local-etcd-snapshot-web-1717142400", c()).removes);
        assert!(fate("local-etcd-snapshot-web-1717142400.zip", c()).removes);
        // db has not reconciled: its keys stay.
        assert!(!fate("local-etcd-snapshot-db-1717142400", c()).removes);
        // A key that matches no Node goes even though nothing about it synced.
        assert!(fate("local-etcd-snapshot-gone-1717142400", c()).removes);
        // Legacy bare keys are never touched.
        assert!(!fate("etcd-snapshot-gone-1717142400", c()).removes);
    }

    #[test]
    fn trim_right_takes_a_set_without_nine() {
        let c = || {
            TestCluster::k3s()
                .server("db", V)
                .server_with("web", V, synced(&[LOCAL]))
        };
        // Trailing "9" stops the trim: "…-db-1717142409" keeps its digits, matches no Node,
        // and goes although db never reconciled.
        let f = fate("local-etcd-snapshot-db-1717142409", c());
        assert!(f.removes, "{f:?}");
        // Plain words first; the trim is in the detail.
        assert!(f.why.contains("cannot tell which etcd node"), "{f:?}");
        assert!(!f.why.contains("0-8"), "{f:?}");
        assert!(
            f.detail.as_deref().unwrap().contains("trailing digits 0-8"),
            "{f:?}"
        );
        // Node names ending in digits lose them to the trim too: node1's keys match no Node.
        let numbered =
            TestCluster::k3s()
                .server("node1", V)
                .server_with("web", V, synced(&[LOCAL]));
        assert!(fate("local-etcd-snapshot-node1-1717142400", numbered).removes);
    }

    #[test]
    fn s3_keys_go_only_once_s3_has_synced() {
        let local_only = TestCluster::k3s().server_with("web", V, synced(&[LOCAL]));
        assert!(!fate("s3-etcd-snapshot-web-1717142400", local_only).removes);
        let with_s3 = TestCluster::k3s().server_with("web", V, synced(&[S3]));
        assert!(fate("s3-etcd-snapshot-web-1717142400", with_s3).removes);
    }
}
