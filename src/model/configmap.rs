//! The kube-system ConfigMaps k3sdoctor reads: lock copies (≤ 1.27) and, later, snapshot data.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;

use super::lock::{LEADER_ANNOTATION, LockRecord};

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ConfigMapFacts {
    pub name: String,
    pub namespace: String,
    pub resource_version: Option<String>,
    pub annotations: BTreeMap<String, String>,
    pub data: BTreeMap<String, String>,
}

impl ConfigMapFacts {
    pub(crate) fn from_api(cm: &ConfigMap) -> ConfigMapFacts {
        ConfigMapFacts {
            name: cm.metadata.name.clone().unwrap_or_default(),
            namespace: cm.metadata.namespace.clone().unwrap_or_default(),
            resource_version: cm.metadata.resource_version.clone(),
            annotations: cm.metadata.annotations.clone().unwrap_or_default(),
            data: cm.data.clone().unwrap_or_default(),
        }
    }

    /// Whether `new` is this lock ConfigMap with its leader record renewed by the same holder
    /// and nothing else changed (what MultiLock writes every retry period on 1.24-1.27).
    pub(crate) fn renewed_only(&self, new: &ConfigMapFacts) -> bool {
        let (Some(Ok(old_record)), Some(Ok(new_record))) =
            (self.leader_record(), new.leader_record())
        else {
            return false;
        };
        let others = |c: &ConfigMapFacts| {
            let mut annotations = c.annotations.clone();
            annotations.remove(LEADER_ANNOTATION);
            (annotations, c.data.clone(), c.name.clone())
        };
        old_record.without_renewal() == new_record.without_renewal() && others(self) == others(new)
    }

    /// The leader record kept in the annotation, if this ConfigMap is a lock.
    pub(crate) fn leader_record(&self) -> Option<Result<LockRecord, String>> {
        self.annotations
            .get(LEADER_ANNOTATION)
            .map(|v| LockRecord::from_annotation(v))
    }
}
