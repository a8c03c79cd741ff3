//! The writes k3s's and RKE2's control plane must make to keep running, as admission sees
//! them: the group, version, resource, subresource and namespace of each request, and the
//! labels of the objects where they were read (spec upgrades-admission.md §3, k3s-facts.md).
//! Every one is a CREATE or an UPDATE (a PATCH is admitted as UPDATE).

use std::collections::BTreeMap;

use crate::distro::{Distro, LOCK_NAMESPACE};
use crate::model::cluster_state::ClusterState;

/// Which bookkeeping a write keeps; the findings it can cause follow from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum WriteTarget {
    /// The `<prog>` and `<prog>-etcd` locks.
    LockLeases,
    /// Their ConfigMap copies (MultiLock versions) and the snapshot ConfigMap.
    LockConfigMaps,
    SnapshotConfigMap,
    /// kube-controller-manager's, kube-scheduler's and the cloud controller's leases.
    ElectionLeases,
    /// The kubelets' heartbeats in kube-node-lease.
    NodeHeartbeats,
    /// Node objects (k3s's etcd and encryption annotations, labels).
    Nodes,
    /// `nodes/status`: the kubelet's status, Ready among it.
    NodeStatus,
    Events,
    SnapshotFiles,
    /// Node passwords and `<prog>-serving` in kube-system.
    Secrets,
}

/// Labels of the objects a write concerns: all known, or not read.
pub(crate) type KnownLabels = Option<Vec<BTreeMap<String, String>>>;

/// One kind of request the control plane makes.
#[derive(Debug, Clone)]
pub(crate) struct ControlPlaneWrite {
    pub target: WriteTarget,
    /// How a message names it: `Lease kube-system/k3s, k3s-etcd (the k3s locks)`.
    pub what: String,
    pub group: &'static str,
    pub version: &'static str,
    pub resource: &'static str,
    pub subresource: &'static str,
    /// `None` for a cluster-scoped object.
    pub namespace: Option<&'static str>,
    /// The labels of the objects concerned, when they were read.
    pub labels: KnownLabels,
}

/// The events.k8s.io group: its `events` and core's are equivalent resources (one storage),
/// so a rule on either matches both under `matchPolicy: Equivalent`.
pub(crate) const EVENTS_GROUP: &str = "events.k8s.io";

/// Every write the control plane of `distro` makes that a webhook can block.
pub(crate) fn control_plane_writes(state: &ClusterState, distro: Distro) -> Vec<ControlPlaneWrite> {
    let mut writes = lock_writes(state, distro);
    writes.extend(object_writes(state, distro));
    writes
}

fn write(
    target: WriteTarget,
    what: String,
    (group, resource, subresource): (&'static str, &'static str, &'static str),
    namespace: Option<&'static str>,
    labels: KnownLabels,
) -> ControlPlaneWrite {
    ControlPlaneWrite {
        target,
        what,
        group,
        version: "v1",
        resource,
        subresource,
        namespace,
        labels,
    }
}

const LEASES: (&str, &str, &str) = ("coordination.k8s.io", "leases", "");
const CONFIGMAPS: (&str, &str, &str) = ("", "configmaps", "");
const SYSTEM: Option<&str> = Some(LOCK_NAMESPACE);

/// The elections' Leases and ConfigMaps, the heartbeats and the snapshot ConfigMap.
fn lock_writes(state: &ClusterState, distro: Distro) -> Vec<ControlPlaneWrite> {
    let prog = distro.prog();
    let lock_labels: KnownLabels = [distro.core_lock(), distro.etcd_lock()]
        .iter()
        .map(|name| state.lease(name).map(|l| l.labels.clone()))
        .collect();
    vec![
        write(
            WriteTarget::LockLeases,
            format!("Lease kube-system/{prog}, {prog}-etcd (the {prog} locks)"),
            LEASES,
            SYSTEM,
            lock_labels,
        ),
        write(
            WriteTarget::ElectionLeases,
            format!(
                "Lease kube-system/kube-controller-manager, kube-scheduler, \
                 {prog}-cloud-controller-manager"
            ),
            LEASES,
            SYSTEM,
            None,
        ),
        write(
            WriteTarget::NodeHeartbeats,
            "Lease kube-node-lease/<node> (the kubelets' heartbeats)".into(),
            LEASES,
            Some("kube-node-lease"),
            None,
        ),
        write(
            WriteTarget::LockConfigMaps,
            format!("ConfigMap kube-system/{prog}, {prog}-etcd (the locks' copies)"),
            CONFIGMAPS,
            SYSTEM,
            None,
        ),
        write(
            WriteTarget::SnapshotConfigMap,
            format!("ConfigMap kube-system/{}", distro.snapshots_configmap()),
            CONFIGMAPS,
            SYSTEM,
            None,
        ),
    ]
}

/// Nodes and their status, Events, snapshot records and kube-system's Secrets.
fn object_writes(state: &ClusterState, distro: Distro) -> Vec<ControlPlaneWrite> {
    let node_labels: KnownLabels = state
        .nodes
        .as_ref()
        .map(|nodes| nodes.iter().map(|n| n.labels.clone()).collect());
    let secret_labels: KnownLabels = state
        .secret_metadata
        .as_read()
        .map(|secrets| secrets.iter().map(|s| s.labels.clone()).collect());
    vec![
        write(
            WriteTarget::Nodes,
            format!("Node ({}'s annotations and labels)", distro.prog()),
            ("", "nodes", ""),
            None,
            node_labels.clone(),
        ),
        write(
            WriteTarget::NodeStatus,
            "nodes/status (the kubelets' status)".into(),
            ("", "nodes", "status"),
            None,
            node_labels,
        ),
        write(
            WriteTarget::Events,
            "Event default/<node>.* (Node events)".into(),
            ("", "events", ""),
            Some("default"),
            None,
        ),
        write(
            WriteTarget::SnapshotFiles,
            "ETCDSnapshotFile (k3s.cattle.io)".into(),
            ("k3s.cattle.io", "etcdsnapshotfiles", ""),
            None,
            None,
        ),
        write(
            WriteTarget::Secrets,
            format!(
                "Secret kube-system/* (node passwords, {})",
                distro.serving_secret()
            ),
            ("", "secrets", ""),
            SYSTEM,
            secret_labels,
        ),
    ]
}
