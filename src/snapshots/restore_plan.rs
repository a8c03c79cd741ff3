//! Planning `snapshots restore`: put the `data` of a backup that `snapshots backfill --fix`
//! saved back into the snapshot ConfigMap, exactly. Pure: the backup, the ConfigMap as it is
//! now and this cluster's identity in, the plan out.
//!
//! Whose backup it is: a backup records the ConfigMap's UID (`metadata.uid`, as read) and,
//! from this version on, the cluster's identity (the `kube-system` Namespace UID, the usual
//! cluster ID) in the annotation `k3sdoctor.io/cluster-id`. The rules:
//! - a backup of another object, or one that names no namespace, is refused (exit 2);
//! - a backup recording another cluster's identity is refused (exit 2), `--force` or not: its
//!   entries point at another cluster's nodes and snapshot files;
//! - the same ConfigMap UID is the same object, so the same cluster: restored as is (this is
//!   how a backup from before the identity was recorded restores without `--force`);
//! - otherwise — a ConfigMap recreated since the backup (another UID), or a cluster identity
//!   that cannot be confirmed (an older backup, or `get namespaces` not allowed) — the plan
//!   says why and the write needs `--force`.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::ConfigMap;
use serde::Serialize;

use super::backup_file::CLUSTER_ID_ANNOTATION;
use super::restore_foreign::{ClusterInventory, ForeignEntry, foreign_entries};
use crate::distro::LOCK_NAMESPACE;
use crate::follow::follow_plan::Refusal;
pub(crate) use crate::model::cluster_identity::ClusterIdentity;
use crate::model::snapshot_key::is_current_format;

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RestorePlan {
    pub configmap: String,
    /// The resourceVersion the backup was taken at.
    pub backup_resource_version: Option<String>,
    /// The resourceVersion the write is conditioned on (`None`: the ConfigMap is created).
    pub current_resource_version: Option<String>,
    pub create: bool,
    pub add: Vec<String>,
    pub update: Vec<String>,
    pub remove: Vec<String>,
    /// Why this backup cannot be confirmed as taken from this very ConfigMap: each one makes
    /// the write need `--force`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub needs_force: Vec<String>,
    /// The backup's entries that name a node or an S3 location this cluster does not have:
    /// shown, not refused (`restore_foreign.rs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub foreign: Vec<ForeignEntry>,
    /// The backup is older than snapshots the restore would drop (`outdated_backup`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outdated: Option<OutdatedBackup>,
    /// Exactly the backup's data.
    #[serde(skip)]
    pub data: BTreeMap<String, String>,
}

/// What restoring a backup would undo of the snapshots as they are now: entries of snapshots
/// that exist dropped, entries of snapshots deleted since brought back. Restoring is for undoing
/// the repair that saved the backup; the older the backup, the more it throws away.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct OutdatedBackup {
    /// When the newest snapshot the backup records was taken (from its key).
    #[schemars(with = "Option<String>")]
    pub backup_newest: Option<jiff::Timestamp>,
    /// Entries the restore removes whose snapshot exists (an ETCDSnapshotFile).
    pub drops_live: usize,
    /// When the newest of those was taken.
    #[schemars(with = "Option<String>")]
    pub newest_dropped: Option<jiff::Timestamp>,
    /// Entries the restore adds whose snapshot no longer exists.
    pub re_adds_deleted: usize,
}

/// When the snapshot behind a ConfigMap key was taken: the unix time k3s puts at its end.
fn key_time(key: &str) -> Option<jiff::Timestamp> {
    Some(crate::model::snapshot_key::key_timestamp(key))
        .filter(|&t| t > 0)
        .and_then(|t| jiff::Timestamp::from_second(t).ok())
}

/// `None` when the snapshots were not read or the restore undoes nothing of them.
fn outdated_backup(plan: &RestorePlan, snapshot_keys: &BTreeSet<String>) -> Option<OutdatedBackup> {
    let dropped: Vec<&String> = plan
        .remove
        .iter()
        .filter(|k| snapshot_keys.contains(*k))
        .collect();
    let re_adds_deleted = plan
        .add
        .iter()
        .filter(|k| is_current_format(k) && !snapshot_keys.contains(*k))
        .count();
    if dropped.is_empty() && re_adds_deleted == 0 {
        return None;
    }
    Some(OutdatedBackup {
        backup_newest: plan.data.keys().filter_map(|k| key_time(k)).max(),
        drops_live: dropped.len(),
        newest_dropped: dropped.iter().filter_map(|k| key_time(k)).max(),
        re_adds_deleted,
    })
}

impl RestorePlan {
    pub(crate) fn is_empty(&self) -> bool {
        !self.create && self.add.is_empty() && self.update.is_empty() && self.remove.is_empty()
    }

    /// The plan against what `cluster` holds: the entries it would write that name what the
    /// cluster does not have, and what it would undo of the snapshots that exist.
    pub(crate) fn against_cluster(mut self, cluster: &ClusterInventory) -> RestorePlan {
        self.foreign = foreign_entries(&self.data, cluster);
        self.outdated = cluster
            .snapshot_keys
            .as_ref()
            .and_then(|keys| outdated_backup(&self, keys));
        self
    }
}

/// `backup` as read from the file, `current` as read from the cluster (`None`: absent);
/// `expected` is the snapshot ConfigMap of this cluster's distro; `cluster` is this cluster's
/// identity. A backup of another object or another cluster is refused rather than written over
/// the snapshot ConfigMap.
pub(crate) fn plan_restore(
    backup: &ConfigMap,
    current: Option<&ConfigMap>,
    expected: &str,
    cluster: &ClusterIdentity,
) -> Result<RestorePlan, Refusal> {
    let name = backup.metadata.name.as_deref().unwrap_or_default();
    let Some(namespace) = backup.metadata.namespace.as_deref() else {
        return Err(Refusal(format!(
            "the backup holds ConfigMap {} without a namespace, so it cannot be told from a ConfigMap of another namespace; snapshots restore only puts back backups of {LOCK_NAMESPACE}/{expected} as snapshots backfill --fix saved them (with metadata.namespace)",
            if name.is_empty() { "(no name)" } else { name }
        )));
    };
    if name != expected || namespace != LOCK_NAMESPACE {
        return Err(Refusal(format!(
            "the backup holds ConfigMap {namespace}/{}, not {LOCK_NAMESPACE}/{expected}; snapshots restore only puts \
             back backups of the snapshot ConfigMap that snapshots backfill --fix saved",
            if name.is_empty() { "(no name)" } else { name }
        )));
    }
    let recorded = backup
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(CLUSTER_ID_ANNOTATION));
    if let (Some(recorded), ClusterIdentity::Known(this)) = (recorded, cluster)
        && recorded != this
    {
        return Err(Refusal(format!(
            "the backup is of another cluster: it records cluster ID {recorded} (the kube-system Namespace UID), this \
             cluster's is {this}; its entries name that cluster's nodes and snapshot files, so it is never restored \
             here"
        )));
    }
    let backup_uid = backup.metadata.uid.as_deref();
    let current_uid = current.and_then(|c| c.metadata.uid.as_deref());
    let same_object = backup_uid.is_some() && backup_uid == current_uid;
    let mut needs_force = Vec::new();
    if !same_object {
        if let (Some(was), Some(now)) = (backup_uid, current_uid) {
            needs_force.push(format!(
                "ConfigMap {LOCK_NAMESPACE}/{expected} was recreated since the backup (UID {was} then, {now} now): \
                 the backup is of an earlier object"
            ));
        } else if current.is_some() && backup_uid.is_none() {
            needs_force.push(
                "the backup records no ConfigMap UID, so it cannot be matched to this ConfigMap"
                    .into(),
            );
        }
        match (recorded, cluster) {
            (Some(_), ClusterIdentity::Known(_)) => {}
            (None, _) => needs_force.push(
                "the backup records no cluster identity (saved by an older k3sdoctor, or with a role that may \
                 not get namespace kube-system), so it cannot be confirmed as this cluster's"
                    .into(),
            ),
            (Some(_), ClusterIdentity::Unknown(why)) => needs_force.push(format!(
                "this cluster's identity could not be checked ({why}), so the backup cannot be confirmed as this \
                 cluster's"
            )),
        }
    }
    let data: BTreeMap<String, String> = backup.data.clone().unwrap_or_default();
    let now: BTreeMap<String, String> = current.and_then(|c| c.data.clone()).unwrap_or_default();
    let add = data
        .keys()
        .filter(|k| !now.contains_key(*k))
        .cloned()
        .collect();
    let update = data
        .iter()
        .filter(|(k, v)| now.get(*k).is_some_and(|n| n != *v))
        .map(|(k, _)| k.clone())
        .collect();
    let remove = now
        .keys()
        .filter(|k| !data.contains_key(*k))
        .cloned()
        .collect();
    Ok(RestorePlan {
        configmap: expected.to_string(),
        backup_resource_version: backup.metadata.resource_version.clone(),
        current_resource_version: current.and_then(|c| c.metadata.resource_version.clone()),
        create: current.is_none(),
        add,
        update,
        remove,
        needs_force,
        foreign: Vec::new(),
        outdated: None,
        data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::api::ObjectMeta;

    const UID: &str = "0b9a1f57-0000-4000-8000-000000000001";
    const CLUSTER: &str = "6f3c2a10-0000-4000-8000-00000000000a";

    fn this_cluster() -> ClusterIdentity {
        ClusterIdentity::Known(CLUSTER.into())
    }

    fn plan_restore(
        backup: &ConfigMap,
        current: Option<&ConfigMap>,
        expected: &str,
    ) -> Result<RestorePlan, Refusal> {
        super::plan_restore(backup, current, expected, &this_cluster())
    }

    fn cm(name: &str, rv: &str, data: &[(&str, &str)]) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("kube-system".into()),
                resource_version: Some(rv.into()),
                uid: Some(UID.into()),
                annotations: Some(
                    [(CLUSTER_ID_ANNOTATION.to_string(), CLUSTER.to_string())].into(),
                ),
                ..Default::default()
            },
            data: Some(
                data.iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            ..Default::default()
        }
    }

    fn inventory(snapshot_keys: Option<&[&str]>) -> ClusterInventory {
        ClusterInventory {
            nodes: None,
            s3_locations: None,
            snapshot_keys: snapshot_keys.map(|keys| keys.iter().map(|k| k.to_string()).collect()),
        }
    }

    #[test]
    fn an_old_backup_says_what_it_would_undo_of_the_snapshots_that_exist() {
        const DELETED: &str = "local-etcd-snapshot-s1-1717056000";
        const KEPT: &str = "local-etcd-snapshot-s1-1717142400";
        const NEWER: &str = "local-etcd-snapshot-s1-1717401600";
        let backup = cm("k3s-etcd-snapshots", "10", &[(DELETED, "1"), (KEPT, "2")]);
        let current = cm("k3s-etcd-snapshots", "90", &[(KEPT, "2"), (NEWER, "3")]);
        let plan = plan_restore(&backup, Some(&current), "k3s-etcd-snapshots")
            .unwrap()
            .against_cluster(&inventory(Some(&[KEPT, NEWER])));
        assert_eq!(
            plan.outdated,
            Some(OutdatedBackup {
                backup_newest: Some(jiff::Timestamp::from_second(1_717_142_400).unwrap()),
                drops_live: 1,
                newest_dropped: Some(jiff::Timestamp::from_second(1_717_401_600).unwrap()),
                re_adds_deleted: 1,
            })
        );

        // Undoing nothing of the snapshots, or not knowing them: no warning.
        let fresh = cm("k3s-etcd-snapshots", "10", &[(KEPT, "2")]);
        let same = cm("k3s-etcd-snapshots", "11", &[(KEPT, "changed")]);
        let plan = plan_restore(&fresh, Some(&same), "k3s-etcd-snapshots").unwrap();
        assert_eq!(
            plan.clone()
                .against_cluster(&inventory(Some(&[KEPT])))
                .outdated,
            None
        );
        let plan = plan_restore(&backup, Some(&current), "k3s-etcd-snapshots").unwrap();
        assert_eq!(plan.against_cluster(&inventory(None)).outdated, None);
    }

    #[test]
    fn the_plan_brings_back_exactly_the_backed_up_data() {
        let backup = cm("k3s-etcd-snapshots", "10", &[("a", "1"), ("b", "2")]);
        let current = cm(
            "k3s-etcd-snapshots",
            "15",
            &[("b", "changed"), ("c", "new")],
        );
        let plan = plan_restore(&backup, Some(&current), "k3s-etcd-snapshots").unwrap();
        assert_eq!(
            (plan.add, plan.update, plan.remove),
            (vec!["a".into()], vec!["b".into()], vec!["c".into()])
        );
        assert_eq!(plan.data, backup.data.unwrap());
        assert_eq!(plan.current_resource_version.as_deref(), Some("15"));
        assert!(!plan.create);
    }

    #[test]
    fn an_identical_configmap_needs_nothing_and_an_absent_one_is_created() {
        let backup = cm("k3s-etcd-snapshots", "10", &[("a", "1")]);
        let same = cm("k3s-etcd-snapshots", "12", &[("a", "1")]);
        assert!(
            plan_restore(&backup, Some(&same), "k3s-etcd-snapshots")
                .unwrap()
                .is_empty()
        );
        let created = plan_restore(&backup, None, "k3s-etcd-snapshots").unwrap();
        assert!(created.create && !created.is_empty());
    }

    #[test]
    fn a_backup_of_another_object_is_refused() {
        let other = cm("coredns", "1", &[]);
        let err = plan_restore(&other, None, "k3s-etcd-snapshots").unwrap_err();
        assert!(
            err.0.contains("holds ConfigMap kube-system/coredns"),
            "{err}"
        );
        let rke2 = cm("rke2-etcd-snapshots", "1", &[]);
        assert!(plan_restore(&rke2, None, "k3s-etcd-snapshots").is_err());
    }

    #[test]
    fn a_backup_without_a_namespace_is_refused() {
        let mut backup = cm("k3s-etcd-snapshots", "1", &[]);
        backup.metadata.namespace = None;
        let err = plan_restore(&backup, None, "k3s-etcd-snapshots").unwrap_err();
        assert!(err.0.contains("without a namespace"), "{err}");
    }

    #[test]
    fn another_clusters_backup_is_refused() {
        let backup = cm("k3s-etcd-snapshots", "1", &[("a", "1")]);
        let current = cm("k3s-etcd-snapshots", "5", &[]);
        let elsewhere = ClusterIdentity::Known("another-cluster".into());
        let err = super::plan_restore(&backup, Some(&current), "k3s-etcd-snapshots", &elsewhere)
            .unwrap_err();
        assert!(err.0.contains("another cluster"), "{err}");
        assert!(
            err.0.contains(CLUSTER) && err.0.contains("another-cluster"),
            "{err}"
        );
    }

    #[test]
    fn a_recreated_configmap_needs_force_and_the_plan_says_why() {
        let backup = cm("k3s-etcd-snapshots", "1", &[("a", "1")]);
        let mut current = cm("k3s-etcd-snapshots", "5", &[]);
        current.metadata.uid = Some("new-uid".into());
        let plan = plan_restore(&backup, Some(&current), "k3s-etcd-snapshots").unwrap();
        assert_eq!(plan.needs_force.len(), 1, "{:?}", plan.needs_force);
        assert!(plan.needs_force[0].contains("recreated since the backup"));
        assert!(plan.needs_force[0].contains(UID) && plan.needs_force[0].contains("new-uid"));
        // The same object needs nothing; an absent one on a confirmed cluster is created.
        let same = cm("k3s-etcd-snapshots", "5", &[]);
        assert!(
            plan_restore(&backup, Some(&same), "k3s-etcd-snapshots")
                .unwrap()
                .needs_force
                .is_empty()
        );
        assert!(
            plan_restore(&backup, None, "k3s-etcd-snapshots")
                .unwrap()
                .needs_force
                .is_empty()
        );
    }

    #[test]
    fn an_old_backup_restores_onto_its_own_configmap_and_otherwise_needs_force() {
        let mut old = cm("k3s-etcd-snapshots", "1", &[("a", "1")]);
        old.metadata.annotations = None;
        // The same UID is the same object, hence the same cluster.
        let same = cm("k3s-etcd-snapshots", "5", &[]);
        assert!(
            plan_restore(&old, Some(&same), "k3s-etcd-snapshots")
                .unwrap()
                .needs_force
                .is_empty()
        );
        // Recreated, and no identity to confirm the cluster: both reasons.
        let mut recreated = cm("k3s-etcd-snapshots", "5", &[]);
        recreated.metadata.uid = Some("new-uid".into());
        let plan = plan_restore(&old, Some(&recreated), "k3s-etcd-snapshots").unwrap();
        assert_eq!(plan.needs_force.len(), 2, "{:?}", plan.needs_force);
        assert!(plan.needs_force[1].contains("records no cluster identity"));
    }

    #[test]
    fn an_unreadable_identity_needs_force_unless_the_configmap_is_the_same_object() {
        let backup = cm("k3s-etcd-snapshots", "1", &[("a", "1")]);
        let unknown = ClusterIdentity::Unknown("get namespaces kube-system: forbidden".into());
        let absent = super::plan_restore(&backup, None, "k3s-etcd-snapshots", &unknown).unwrap();
        assert!(
            absent.needs_force[0]
                .contains("could not be checked (get namespaces kube-system: forbidden)")
        );
        let same = cm("k3s-etcd-snapshots", "5", &[]);
        let plan =
            super::plan_restore(&backup, Some(&same), "k3s-etcd-snapshots", &unknown).unwrap();
        assert!(plan.needs_force.is_empty());
    }
}
