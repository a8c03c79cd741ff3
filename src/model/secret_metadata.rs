//! The metadata of Secrets in kube-system, the only part of a Secret k3sdoctor ever holds: read
//! live as a `PartialObjectMetadataList` (the API server never sends `data`), or from a dump
//! whose `data` and `stringData` are dropped before anything else looks at the object. A
//! metadata object carries no `type`, so nothing here may depend on it.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::model::kinds::Kind;

/// Where the Secrets the checks read live: the node passwords and the serving certificate.
pub(crate) const NAMESPACE: &str = "kube-system";

/// An `ownerReferences` entry: newer k3s makes a node password Secret owned by its Node, so the
/// garbage collector deletes it with the Node (`pkg/nodepassword/controller.go`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SecretOwner {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub uid: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SecretMeta {
    pub name: String,
    pub namespace: String,
    pub created: Option<Timestamp>,
    pub annotations: BTreeMap<String, String>,
    pub labels: BTreeMap<String, String>,
    pub owners: Vec<SecretOwner>,
}

impl SecretMeta {
    pub(crate) fn from_meta(meta: &ObjectMeta) -> SecretMeta {
        SecretMeta {
            name: meta.name.clone().unwrap_or_default(),
            namespace: meta.namespace.clone().unwrap_or_default(),
            created: meta.creation_timestamp.as_ref().map(|t| t.0),
            annotations: meta.annotations.clone().unwrap_or_default(),
            labels: meta.labels.clone().unwrap_or_default(),
            owners: meta
                .owner_references
                .iter()
                .flatten()
                .map(|o| SecretOwner {
                    api_version: o.api_version.clone(),
                    kind: o.kind.clone(),
                    name: o.name.clone(),
                    uid: o.uid.clone(),
                })
                .collect(),
        }
    }

    /// The Nodes that own this Secret (`kind: Node` in the core group).
    pub(crate) fn owner_nodes(&self) -> impl Iterator<Item = &SecretOwner> {
        self.owners
            .iter()
            .filter(|o| Kind::of(&o.api_version, &o.kind) == Some(Kind::Node))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_names_times_annotations_labels_and_owners() {
        let meta: ObjectMeta = serde_json::from_value(serde_json::json!({
            "name": "agent-1.node-password.k3s",
            "namespace": "kube-system",
            "creationTimestamp": "2024-05-31T12:00:00Z",
            "labels": {"a": "b"},
            "annotations": {"c": "d"},
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": "agent-1", "uid": "u1"},
                {"apiVersion": "apps/v1", "kind": "Node", "name": "x", "uid": "u2"}
            ]
        }))
        .unwrap();
        let s = SecretMeta::from_meta(&meta);
        assert_eq!(s.name, "agent-1.node-password.k3s");
        assert_eq!(s.created, Some("2024-05-31T12:00:00Z".parse().unwrap()));
        assert_eq!(s.labels["a"], "b");
        assert_eq!(s.annotations["c"], "d");
        let owners: Vec<&str> = s.owner_nodes().map(|o| o.name.as_str()).collect();
        assert_eq!(owners, ["agent-1"]);
    }
}
