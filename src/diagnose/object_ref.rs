//! A finding's objects as programs address them: `{apiVersion, kind, namespace?, name}`, the
//! fields `kubectl get` needs, so a script never parses `object` or the message.

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::model::kinds::Kind;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRef {
    // The kinds k3sdoctor names are constants: no allocation for them in a finding that names
    // 50,000 snapshots.
    pub api_version: Cow<'static, str>,
    pub kind: Cow<'static, str>,
    /// Absent for cluster-scoped objects (Node, ETCDSnapshotFile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub name: String,
}

impl ObjectRef {
    /// An object of a kind k3sdoctor reads; `None` for any other kind.
    pub fn new(kind: &str, namespace: Option<&str>, name: &str) -> Option<ObjectRef> {
        let (api_version, kind) = match Kind::named(kind) {
            Some(kind) => (kind.row().api_version, kind.name()),
            // Rancher's record, on the management cluster.
            None if kind == "ETCDSnapshot" => ("rke.cattle.io/v1", "ETCDSnapshot"),
            None => return None,
        };
        Some(ObjectRef {
            api_version: Cow::Borrowed(api_version),
            kind: Cow::Borrowed(kind),
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

    /// ETCDSnapshotFiles by name (cluster-scoped), in one allocation of the exact size: a
    /// list of 50,000 grown by doubling, then copied into place, was three times its size at
    /// its peak.
    pub fn snapshot_files<S: AsRef<str>>(names: &[S]) -> Arc<[ObjectRef]> {
        names
            .iter()
            .map(|name| ObjectRef {
                api_version: Cow::Borrowed(Kind::SnapshotFile.row().api_version),
                kind: Cow::Borrowed(Kind::SnapshotFile.name()),
                namespace: None,
                name: name.as_ref().to_string(),
            })
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
                lease.api_version.as_ref(),
                lease.kind.as_ref(),
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
        assert_eq!((node.api_version.as_ref(), node.namespace), ("v1", None));
        assert_eq!(ObjectRef::parse("ETCDSnapshotFiles"), None);
        assert_eq!(ObjectRef::parse("Node objects here"), None);
        assert_eq!(ObjectRef::parse("Pod default/x"), None);
    }
}
