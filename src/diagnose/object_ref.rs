//! A finding's objects as programs address them: `{apiVersion, kind, namespace?, name}`, the
//! fields `kubectl get` needs, so a script never parses `object` or the message.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRef {
    pub api_version: String,
    pub kind: String,
    /// Absent for cluster-scoped objects (Node, ETCDSnapshotFile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub name: String,
}

impl ObjectRef {
    /// An object of a kind k3sdoctor reads; `None` for any other kind.
    pub fn new(kind: &str, namespace: Option<&str>, name: &str) -> Option<ObjectRef> {
        let api_version = match kind {
            "Lease" => "coordination.k8s.io/v1",
            "ConfigMap" | "Node" => "v1",
            "ETCDSnapshotFile" => "k3s.cattle.io/v1",
            "Endpoints" => "v1",
            "EndpointSlice" => "discovery.k8s.io/v1",
            _ => return None,
        };
        Some(ObjectRef {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
            namespace: namespace.map(str::to_string),
            name: name.to_string(),
        })
    }

    /// Reads a finding's `object` text, `Lease kube-system/k3s` or `Node server-1`; text that
    /// names no single object (`ETCDSnapshotFiles`) gives `None`.
    pub fn parse(object: &str) -> Option<ObjectRef> {
        let (kind, rest) = object.split_once(' ')?;
        if rest.contains(' ') || rest.is_empty() {
            return None;
        }
        match rest.split_once('/') {
            Some((namespace, name)) => ObjectRef::new(kind, Some(namespace), name),
            None => ObjectRef::new(kind, None, rest),
        }
    }

    /// ETCDSnapshotFiles by name (cluster-scoped).
    pub fn snapshot_files(names: &[String]) -> Vec<ObjectRef> {
        names
            .iter()
            .filter_map(|n| ObjectRef::new("ETCDSnapshotFile", None, n))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_object_texts_findings_use() {
        let lease = ObjectRef::parse("Lease kube-system/k3s").unwrap();
        assert_eq!(
            (
                lease.api_version.as_str(),
                lease.kind.as_str(),
                lease.namespace.as_deref(),
                lease.name.as_str()
            ),
            (
                "coordination.k8s.io/v1",
                "Lease",
                Some("kube-system"),
                "k3s"
            )
        );
        let node = ObjectRef::parse("Node prod-k3s-1").unwrap();
        assert_eq!((node.api_version.as_str(), node.namespace), ("v1", None));
        assert_eq!(ObjectRef::parse("ETCDSnapshotFiles"), None);
        assert_eq!(ObjectRef::parse("Node objects here"), None);
        assert_eq!(ObjectRef::parse("Pod default/x"), None);
    }
}
