//! What k3sdoctor needs to know about a Node: identity, role, readiness, version.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Node;
use serde::Serialize;

use super::node_args::{NodeArgs, parse_node_env};
use crate::distro::Distro;
use crate::version::ProductVersion;

const ROLE_PREFIX: &str = "node-role.kubernetes.io/";
const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NodeFacts {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub finalizers: Vec<String>,
    pub deleting: bool,
    /// `metadata.deletionTimestamp`.
    pub deletion_time: Option<Timestamp>,
    pub readiness: Readiness,
    /// `status.nodeInfo.kubeletVersion` as reported.
    pub kubelet_version: String,
    /// The parsed version; `None` when the kubelet reports something unparseable.
    pub version: Option<ProductVersion>,
    /// Conditions by type (`Ready`, `EtcdIsVoter`, ...).
    pub conditions: BTreeMap<String, Condition>,
    /// `metadata.creationTimestamp`: a Node younger than a reconcile interval may not have
    /// reconciled its snapshots yet.
    pub created: Option<Timestamp>,
    /// `status.addresses[].address` of the IP types (InternalIP, ExternalIP), as the kubelet
    /// reports them; `Hostname` entries are names, not addresses.
    pub addresses: Vec<String>,
    /// `spec.renewTime` of its Lease in kube-node-lease, when that was read: the kubelet's
    /// heartbeat every 10 s, in the kubelet's own clock. The Ready condition's
    /// `lastHeartbeatTime` is no heartbeat: kubelets refresh it every 5 minutes at most.
    pub heartbeat: Option<Timestamp>,
    /// When `etcd.<prog>.cattle.io/remove` was last set: the `time` of the `metadata.managedFields`
    /// entry that owns it. `None` when the input has no managedFields (`kubectl get -o yaml`
    /// drops them unless `--show-managed-fields`) or none owns it.
    pub removal_asked: Option<Timestamp>,
    /// `spec.unschedulable` (cordoned); `None` when schedulable.
    pub cordon: Option<Cordon>,
}

/// A cordoned Node, dated by the `node.kubernetes.io/unschedulable` taint's `timeAdded`,
/// which the node lifecycle controller adds with the cordon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cordon {
    pub since: Option<Timestamp>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub(crate) struct Condition {
    pub status: String,
    pub reason: Option<String>,
    pub message: Option<String>,
    pub last_heartbeat: Option<Timestamp>,
    /// `lastTransitionTime`: how long the status has held (a learner that stays one).
    pub last_transition: Option<Timestamp>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Readiness {
    Ready,
    NotReady,
    /// The node controller lost contact (`Ready=Unknown`) or there is no Ready condition.
    Unknown,
}

impl Readiness {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Readiness::Ready => "Ready",
            Readiness::NotReady => "NotReady",
            Readiness::Unknown => "Unknown",
        }
    }
}

/// How a lock holder identity was matched to a Node (wrangler's identity is `os.Hostname()`;
/// k3s `pkg/agent/run.go` `getHostname` writes it to `<prog>.io/hostname`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum IdentityMatch {
    /// `<prog>.io/hostname` annotation — what the server really uses.
    HostnameAnnotation,
    NodeName,
    /// `kubernetes.io/hostname` label.
    HostnameLabel,
    /// The identity contains `localhost`, so k3s wrote the node name into `<prog>.io/hostname`
    /// instead of it (`getHostname`, `pkg/agent/run.go`), and this is the only server whose
    /// annotation is its node name.
    LocalhostHostname,
}

impl NodeFacts {
    pub(crate) fn from_api(node: &Node) -> NodeFacts {
        let status = node.status.clone().unwrap_or_default();
        let conditions: BTreeMap<String, Condition> = status
            .conditions
            .unwrap_or_default()
            .into_iter()
            .map(|c| {
                (
                    c.type_,
                    Condition {
                        status: c.status,
                        reason: c.reason,
                        message: c.message,
                        last_heartbeat: c.last_heartbeat_time.map(|t| t.0),
                        last_transition: c.last_transition_time.map(|t| t.0),
                    },
                )
            })
            .collect();
        let readiness = match conditions.get("Ready").map(|c| c.status.as_str()) {
            Some("True") => Readiness::Ready,
            Some("False") => Readiness::NotReady,
            _ => Readiness::Unknown,
        };
        let addresses = status
            .addresses
            .iter()
            .flatten()
            .filter(|a| a.type_ != "Hostname")
            .map(|a| a.address.clone())
            .collect();
        let kubelet_version = status
            .node_info
            .map(|i| i.kubelet_version)
            .unwrap_or_default();
        NodeFacts {
            name: node.metadata.name.clone().unwrap_or_default(),
            labels: node.metadata.labels.clone().unwrap_or_default(),
            annotations: node.metadata.annotations.clone().unwrap_or_default(),
            finalizers: node.metadata.finalizers.clone().unwrap_or_default(),
            deleting: node.metadata.deletion_timestamp.is_some(),
            deletion_time: node.metadata.deletion_timestamp.as_ref().map(|t| t.0),
            readiness,
            version: ProductVersion::parse(&kubelet_version).ok(),
            kubelet_version,
            conditions,
            created: node.metadata.creation_timestamp.as_ref().map(|t| t.0),
            addresses,
            heartbeat: None,
            removal_asked: removal_asked(node),
            cordon: cordon(node),
        }
    }

    fn has_role(&self, role: &str) -> bool {
        self.labels
            .get(&format!("{ROLE_PREFIX}{role}"))
            .is_some_and(|v| v == "true")
    }

    /// A server runs an apiserver and so campaigns for the k3s locks. k3s labels such nodes
    /// `control-plane` (and `master` until PR #12395); etcd-only servers carry just `etcd`
    /// and are never candidates (`--disable-apiserver` servers run no elected controllers:
    /// k3s `pkg/server/server.go` `runControllers`).
    pub(crate) fn runs_control_plane(&self) -> bool {
        self.has_role("control-plane") || self.has_role("master")
    }

    /// Carries the etcd role: a server of an embedded-etcd cluster, whether or not its member
    /// is still in the etcd cluster.
    pub(crate) fn has_etcd_role(&self) -> bool {
        self.has_role("etcd")
    }

    /// An etcd member that counts: the etcd role, and not removed. After removing a member,
    /// k3s's member controller sets `etcd.<prog>.cattle.io/removed-node-name` and deletes
    /// `…/node-name` and `…/node-address` (`pkg/etcd/member_controller.go`), while the Node and
    /// its role label stay.
    pub(crate) fn is_etcd_member(&self) -> bool {
        self.has_etcd_role() && !self.etcd_member_removed()
    }

    fn etcd_member_removed(&self) -> bool {
        let etcd_annotation = |suffix: &str| {
            self.annotations.iter().any(|(k, v)| {
                k.starts_with("etcd.")
                    && k.ends_with(&format!(".cattle.io/{suffix}"))
                    && !v.is_empty()
            })
        };
        etcd_annotation("removed-node-name") && !etcd_annotation("node-name")
    }

    pub(crate) fn is_server(&self) -> bool {
        self.runs_control_plane() || self.has_etcd_role()
    }

    /// Role names from `node-role.kubernetes.io/*` labels, sorted, as kubectl shows them.
    pub(crate) fn roles(&self) -> Vec<String> {
        self.labels
            .iter()
            .filter_map(|(k, v)| {
                let role = k.strip_prefix(ROLE_PREFIX)?;
                (v == "true" || v.is_empty()).then(|| role.to_string())
            })
            .collect()
    }

    pub(crate) fn hostname_annotation(&self, distro: Distro) -> Option<&str> {
        self.annotations
            .get(&distro.hostname_annotation())
            .map(String::as_str)
    }

    fn hostname_label(&self) -> Option<&str> {
        self.labels.get(HOSTNAME_LABEL).map(String::as_str)
    }

    /// The identity this node's server process campaigns with: its `os.Hostname()`.
    pub(crate) fn lock_identity(&self, distro: Distro) -> &str {
        self.hostname_annotation(distro).unwrap_or(&self.name)
    }

    /// `<prog>.io/node-args`: `None` when absent (agentless servers have no Node; agents
    /// before the annotation existed), `Err` when it is not the JSON array k3s writes.
    pub(crate) fn node_args(&self, distro: Distro) -> Option<Result<NodeArgs, String>> {
        let raw = self
            .annotations
            .get(&format!("{}.io/node-args", distro.prog()))?;
        Some(NodeArgs::parse(raw))
    }

    /// `<prog>.io/node-env`, like [`NodeFacts::node_args`].
    pub(crate) fn node_env(
        &self,
        distro: Distro,
    ) -> Option<Result<BTreeMap<String, String>, String>> {
        let raw = self
            .annotations
            .get(&format!("{}.io/node-env", distro.prog()))?;
        Some(parse_node_env(raw))
    }
}

/// Finds the Node a holder identity belongs to: `<prog>.io/hostname` first, then the node
/// name, then `kubernetes.io/hostname`; exact and case-sensitive (k3s `pkg/agent/run.go` `getHostname`,
/// `pkg/cloudprovider/instances.go` `HostnameKey`). The order
/// matters when a node's name equals another node's hostname.
pub(crate) fn node_for_identity<'a>(
    nodes: &'a [NodeFacts],
    distro: Distro,
    identity: &str,
) -> Option<(&'a NodeFacts, IdentityMatch)> {
    if identity.is_empty() {
        return None;
    }
    let by = |m: IdentityMatch, f: &dyn Fn(&NodeFacts) -> bool| {
        nodes.iter().find(|n| f(n)).map(|n| (n, m))
    };
    by(IdentityMatch::HostnameAnnotation, &|n| {
        n.hostname_annotation(distro) == Some(identity)
    })
    .or_else(|| by(IdentityMatch::NodeName, &|n| n.name == identity))
    .or_else(|| {
        by(IdentityMatch::HostnameLabel, &|n| {
            n.hostname_label() == Some(identity)
        })
    })
    .or_else(|| localhost_holder(nodes, distro, identity))
}

/// k3s uses the node name for `<prog>.io/hostname` when `os.Hostname()` is empty or contains
/// `localhost`, while the election identity stays `os.Hostname()`. Such a holder belongs to a
/// server whose annotation is its node name; when exactly one server is like that, it is that
/// one.
fn localhost_holder<'a>(
    nodes: &'a [NodeFacts],
    distro: Distro,
    identity: &str,
) -> Option<(&'a NodeFacts, IdentityMatch)> {
    if !identity.contains("localhost") {
        return None;
    }
    let mut candidates = nodes
        .iter()
        .filter(|n| n.is_server() && n.hostname_annotation(distro) == Some(n.name.as_str()));
    match (candidates.next(), candidates.next()) {
        (Some(only), None) => Some((only, IdentityMatch::LocalhostHostname)),
        _ => None,
    }
}

/// The newest `managedFields` entry that sets an `etcd.<prog>.cattle.io/remove` annotation
/// (the member controller's request, k3s `pkg/etcd/member_controller.go`): when removal was
/// asked. k3s records no Event for it, so this is the only age the API shows.
fn cordon(node: &Node) -> Option<Cordon> {
    let spec = node.spec.as_ref()?;
    let taint = spec
        .taints
        .iter()
        .flatten()
        .find(|t| t.key == "node.kubernetes.io/unschedulable");
    (spec.unschedulable == Some(true) || taint.is_some()).then(|| Cordon {
        since: taint.and_then(|t| t.time_added.as_ref()).map(|t| t.0),
    })
}

fn removal_asked(node: &Node) -> Option<Timestamp> {
    let sets_remove = |fields: &serde_json::Value| {
        fields
            .pointer("/f:metadata/f:annotations")
            .and_then(serde_json::Value::as_object)
            .is_some_and(|annotations| {
                annotations.keys().any(|key| {
                    key.strip_prefix("f:etcd.")
                        .is_some_and(|rest| rest.ends_with(".cattle.io/remove"))
                })
            })
    };
    node.metadata
        .managed_fields
        .iter()
        .flatten()
        .filter(|entry| entry.fields_v1.as_ref().is_some_and(|f| sets_remove(&f.0)))
        .filter_map(|entry| entry.time.as_ref().map(|t| t.0))
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(name: &str, hostname: Option<&str>, label: Option<&str>) -> NodeFacts {
        let mut annotations = serde_json::Map::new();
        if let Some(h) = hostname {
            annotations.insert("k3s.io/hostname".into(), json!(h));
        }
        let mut labels = serde_json::Map::new();
        labels.insert(
            "node-role.kubernetes.io/control-plane".into(),
            json!("true"),
        );
        if let Some(l) = label {
            labels.insert("kubernetes.io/hostname".into(), json!(l));
        }
        let api: Node = serde_json::from_value(json!({
            "metadata": {"name": name, "annotations": annotations, "labels": labels},
            "status": {"nodeInfo": {"kubeletVersion": "v1.29.4+k3s1", "architecture": "", "bootID": "",
                "containerRuntimeVersion": "", "kernelVersion": "", "kubeProxyVersion": "", "machineID": "",
                "operatingSystem": "", "osImage": "", "systemUUID": ""},
                "conditions": [{"type": "Ready", "status": "True"}]}
        }))
        .unwrap();
        NodeFacts::from_api(&api)
    }

    #[test]
    fn a_localhost_holder_maps_to_the_only_server_named_by_its_node_name() {
        let mut a = node("a", Some("a"), None);
        let mut b = node("b", Some("web-2.lan"), None);
        for n in [&mut a, &mut b] {
            n.labels.insert(
                "node-role.kubernetes.io/control-plane".into(),
                "true".into(),
            );
        }
        let nodes = [a.clone(), b];
        let (n, how) = node_for_identity(&nodes, Distro::K3s, "localhost.localdomain").unwrap();
        assert_eq!(
            (n.name.as_str(), how),
            ("a", IdentityMatch::LocalhostHostname)
        );
        // Two candidates: it could be either, so it is neither.
        let mut c = node("c", Some("c"), None);
        c.labels.insert(
            "node-role.kubernetes.io/control-plane".into(),
            "true".into(),
        );
        assert!(node_for_identity(&[a, c], Distro::K3s, "localhost.localdomain").is_none());
    }

    #[test]
    fn hostname_annotation_beats_node_name() {
        // Node "b" is called "a" by its kernel; node "a" has hostname "c".
        let nodes = [node("a", Some("c"), None), node("b", Some("a"), None)];
        let (n, how) = node_for_identity(&nodes, Distro::K3s, "a").unwrap();
        assert_eq!(
            (n.name.as_str(), how),
            ("b", IdentityMatch::HostnameAnnotation)
        );
    }

    #[test]
    fn falls_back_to_name_then_label() {
        let nodes = [
            node("srv-1", None, Some("srv-1.lan")),
            node("srv-2", None, None),
        ];
        assert_eq!(
            node_for_identity(&nodes, Distro::K3s, "srv-2").unwrap().1,
            IdentityMatch::NodeName
        );
        let (n, how) = node_for_identity(&nodes, Distro::K3s, "srv-1.lan").unwrap();
        assert_eq!(
            (n.name.as_str(), how),
            ("srv-1", IdentityMatch::HostnameLabel)
        );
        assert!(node_for_identity(&nodes, Distro::K3s, "SRV-2").is_none());
        assert!(node_for_identity(&nodes, Distro::K3s, "").is_none());
    }

    #[test]
    fn reads_roles_readiness_and_version() {
        let n = node("a", None, None);
        assert!(n.runs_control_plane() && !n.is_etcd_member());
        assert_eq!(n.roles(), ["control-plane"]);
        assert_eq!(n.readiness, Readiness::Ready);
        assert_eq!(n.version.as_ref().unwrap().as_str(), "v1.29.4+k3s1");
        assert_eq!(n.lock_identity(Distro::K3s), "a");
        assert_eq!(n.cordon, None);
    }

    #[test]
    fn a_cordon_is_dated_by_its_taint() {
        let cordoned: Node = serde_json::from_value(json!({"metadata": {"name": "s1"},
            "spec": {"unschedulable": true, "taints": [{"key": "node.kubernetes.io/unschedulable",
                     "effect": "NoSchedule", "timeAdded": "2025-09-01T10:00:10Z"}]}}))
        .unwrap();
        let since = NodeFacts::from_api(&cordoned).cordon.unwrap().since;
        assert_eq!(since, Some("2025-09-01T10:00:10Z".parse().unwrap()));
        let undated: Node = serde_json::from_value(
            json!({"metadata": {"name": "s1"}, "spec": {"unschedulable": true}}),
        )
        .unwrap();
        assert_eq!(
            NodeFacts::from_api(&undated).cordon,
            Some(Cordon { since: None })
        );
    }

    #[test]
    fn removal_is_dated_by_the_newest_entry_that_sets_the_annotation() {
        let node: Node = serde_json::from_value(serde_json::json!({"metadata": {"name": "s3",
        "managedFields": [
            {"manager": "a", "time": "2024-05-31T10:00:00Z", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:metadata": {"f:annotations": {"f:etcd.rke2.cattle.io/remove": {}}}}},
            {"manager": "b", "time": "2024-05-31T11:00:00Z", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:metadata": {"f:annotations": {"f:etcd.rke2.cattle.io/remove": {}}}}},
            {"manager": "kubelet", "time": "2024-05-31T12:00:00Z", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:metadata": {"f:annotations": {"f:etcd.rke2.cattle.io/node-name": {}}}}}
        ]}}))
        .unwrap();
        assert_eq!(
            NodeFacts::from_api(&node).removal_asked,
            Some("2024-05-31T11:00:00Z".parse().unwrap())
        );
        let bare: Node =
            serde_json::from_value(serde_json::json!({"metadata": {"name": "s3"}})).unwrap();
        assert_eq!(NodeFacts::from_api(&bare).removal_asked, None);
    }
}
