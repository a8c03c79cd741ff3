//! Planning `snapshots restore`: put the `data` of a backup that `snapshots backfill --fix`
//! saved back into the snapshot ConfigMap, exactly. Pure: the backup and the ConfigMap as it is
//! now in, the plan out.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use serde::Serialize;

use super::follow_plan::Refusal;
use crate::distro::LOCK_NAMESPACE;

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RestorePlan {
    pub configmap: String,
    /// The resourceVersion the backup was taken at.
    pub backup_resource_version: Option<String>,
    /// The resourceVersion the write is conditioned on (`None`: the ConfigMap is created).
    pub current_resource_version: Option<String>,
    pub create: bool,
    pub add: Vec<String>,
    pub update: Vec<String>,
    pub remove: Vec<String>,
    /// Exactly the backup's data.
    #[serde(skip)]
    pub data: BTreeMap<String, String>,
}

impl RestorePlan {
    pub fn is_empty(&self) -> bool {
        !self.create && self.add.is_empty() && self.update.is_empty() && self.remove.is_empty()
    }
}

/// `backup` as read from the file, `current` as read from the cluster (`None`: absent);
/// `expected` is the snapshot ConfigMap of this cluster's distro. A backup of another object is
/// refused rather than written over the snapshot ConfigMap.
pub fn plan_restore(
    backup: &ConfigMap,
    current: Option<&ConfigMap>,
    expected: &str,
) -> Result<RestorePlan, Refusal> {
    let name = backup.metadata.name.as_deref().unwrap_or_default();
    let namespace = backup
        .metadata
        .namespace
        .as_deref()
        .unwrap_or(LOCK_NAMESPACE);
    if name != expected || namespace != LOCK_NAMESPACE {
        return Err(Refusal(format!(
            "the backup holds ConfigMap {namespace}/{}, not {LOCK_NAMESPACE}/{expected}; snapshots restore only puts \
             back backups of the snapshot ConfigMap that snapshots backfill --fix saved",
            if name.is_empty() { "(no name)" } else { name }
        )));
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
        data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::api::ObjectMeta;

    fn cm(name: &str, rv: &str, data: &[(&str, &str)]) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("kube-system".into()),
                resource_version: Some(rv.into()),
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
}
