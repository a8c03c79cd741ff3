//! The Rancher benchmark's management cluster, on a real apiserver with Rancher's CRDs: what
//! Rancher 2.11 keeps for N connected, administrated v2prov clusters in `fleet-default` (the
//! management and provisioning Clusters, an RKEControlPlane, a CAPI Machine per server, one
//! `etcdsnapshots.rke.cattle.io` record per downstream ETCDSnapshotFile), the backpopulate
//! Feature and the `server-version` Setting. The same shapes as the Rancher bed's objects
//! (`tests/support/rancher/bed_objects.rs`), made for many clusters.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::support::envtest::admin::AdminApi;
use crate::support::rancher::records::{self, MACHINE_ID_LABEL, Rancher, Source};

pub const WORKSPACE: &str = "fleet-default";
const MANAGEMENT: &str = "/apis/management.cattle.io/v3";
const PROVISIONING: &str = "/apis/provisioning.cattle.io/v1";
const FEATURE: &str = "v2prov-etcd-snapshot-backpopulate";
/// Separate clients on separate threads: one client's requests go one at a time, and a few
/// thousand creates one at a time would take most of a minute on two cores.
const SEEDERS: usize = 4;

/// One downstream cluster as Rancher knows it.
pub struct Member<'a> {
    /// The management cluster id, `c-m-<nnn>`.
    pub id: &'a str,
    /// The provisioning Cluster's name and the management Cluster's display name.
    pub name: &'a str,
    /// The downstream servers' node names, one Machine each.
    pub nodes: &'a [&'a str],
    /// The downstream ETCDSnapshotFiles, as stored: Rancher 2.11 keeps one record each.
    pub snapshot_files: Vec<Value>,
}

/// What was written, for the benchmark's description.
#[derive(Default)]
pub struct Written {
    pub records: usize,
    pub machines: usize,
}

/// Writes the global objects and every member's objects through `kubeconfig` (an admin).
pub fn seed(kubeconfig: &Path, rancher: Rancher, version: &str, members: &[Member<'_>]) -> Written {
    let admin = AdminApi::new(kubeconfig);
    globals(&admin, version);
    let chunk = members.len().div_ceil(SEEDERS).max(1);
    let written: Vec<Written> = std::thread::scope(|s| {
        let seeders: Vec<_> = members
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    let admin = AdminApi::new(kubeconfig);
                    let mut written = Written::default();
                    for member in part {
                        let (records, machines) = cluster(&admin, rancher, member);
                        written.records += records;
                        written.machines += machines;
                    }
                    written
                })
            })
            .collect();
        seeders
            .into_iter()
            .map(|h| h.join().expect("a seeding thread"))
            .collect()
    });
    written
        .into_iter()
        .fold(Written::default(), |a, b| Written {
            records: a.records + b.records,
            machines: a.machines + b.machines,
        })
}

fn globals(admin: &AdminApi, version: &str) {
    for ns in [WORKSPACE, "fleet-local"] {
        admin.create(
            "/api/v1/namespaces",
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        );
    }
    admin.create(
        &format!("{MANAGEMENT}/settings"),
        &json!({"apiVersion": "management.cattle.io/v3", "kind": "Setting",
            "metadata": {"name": "server-version"},
            "value": version, "default": "dev", "customized": false, "source": ""}),
    );
    admin.create(
        &format!("{MANAGEMENT}/features"),
        &json!({"apiVersion": "management.cattle.io/v3", "kind": "Feature",
            "metadata": {"name": FEATURE}, "spec": {"value": null},
            "status": {"dynamic": false, "default": true, "lockedValue": null, "prime": false}}),
    );
    management_cluster(admin, "local", "local", "fleet-local", true);
    provisioning_cluster(admin, "local", "fleet-local", "local");
}

/// Returns the number of records and Machines written.
fn cluster(admin: &AdminApi, rancher: Rancher, member: &Member<'_>) -> (usize, usize) {
    management_cluster(admin, member.id, member.name, WORKSPACE, false);
    provisioning_cluster(admin, member.name, WORKSPACE, member.id);
    let restore = json!({"generation": 0, "name": "", "restoreRKEConfig": ""});
    with_status(
        admin,
        &format!("/apis/rke.cattle.io/v1/namespaces/{WORKSPACE}/rkecontrolplanes"),
        json!({"apiVersion": "rke.cattle.io/v1", "kind": "RKEControlPlane",
            "metadata": {"name": member.name, "namespace": WORKSPACE,
                "labels": {"cluster.x-k8s.io/cluster-name": member.name}},
            "spec": {"etcdSnapshotRestore": restore, "clusterName": member.name,
                "kubernetesVersion": "v1.29.6+k3s1"},
            "status": {"etcdSnapshotRestore": restore, "initialized": true, "ready": true,
                "observedGeneration": 1}}),
    );
    let mut machine_ids = HashMap::new();
    for node in member.nodes {
        machine_ids.insert(node.to_string(), machine(admin, member.name, node));
    }
    let source = Source {
        cluster: member.name,
        namespace: WORKSPACE,
        snapshot_files: &member.snapshot_files,
        configmap: &Map::new(),
        machine_ids: &machine_ids,
    };
    let records = records::records(rancher, &source);
    records::write(admin, &records);
    (records.len(), machine_ids.len())
}

/// `internal`: the local cluster, which is neither administrated nor in a fleet workspace.
fn management_cluster(admin: &AdminApi, id: &str, display: &str, workspace: &str, internal: bool) {
    let annotations = if internal {
        json!({})
    } else {
        json!({"provisioning.cattle.io/administrated": "true"})
    };
    let conditions: Vec<Value> = ["Provisioned", "Connected", "Ready"]
        .into_iter()
        .map(|kind| {
            json!({"type": kind, "status": "True", "reason": "", "message": "",
                "lastUpdateTime": "2026-01-01T00:00:00Z"})
        })
        .collect();
    with_status(
        admin,
        &format!("{MANAGEMENT}/clusters"),
        json!({"apiVersion": "management.cattle.io/v3", "kind": "Cluster",
            "metadata": {"name": id, "annotations": annotations,
                "labels": {"provider.cattle.io": "k3s"}},
            "spec": {"displayName": display, "fleetWorkspaceName": workspace,
                "internal": internal},
            "status": {"conditions": conditions, "driver": "k3s", "provider": "k3s"}}),
    );
}

fn provisioning_cluster(admin: &AdminApi, name: &str, namespace: &str, id: &str) {
    with_status(
        admin,
        &format!("{PROVISIONING}/namespaces/{namespace}/clusters"),
        json!({"apiVersion": "provisioning.cattle.io/v1", "kind": "Cluster",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"kubernetesVersion": "v1.29.6+k3s1", "rkeConfig": {}},
            "status": {"clusterName": id, "ready": true,
                "clientSecretName": format!("{name}-kubeconfig"), "observedGeneration": 1}}),
    );
}

/// A custom-cluster Machine for `node` of `cluster`; returns its machine-id.
fn machine(admin: &AdminApi, cluster: &str, node: &str) -> String {
    let digest = |text: String| {
        Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    // Node names repeat across the benchmark's identical clusters; names and ids must not.
    let name = format!("custom-{}", &digest(format!("{cluster}/{node}"))[..12]);
    let machine_id = digest(format!("machine-id/{cluster}/{node}"))[..32].to_string();
    with_status(
        admin,
        &format!("/apis/cluster.x-k8s.io/v1beta1/namespaces/{WORKSPACE}/machines"),
        json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Machine",
            "metadata": {"name": name, "namespace": WORKSPACE,
                "labels": {
                    "cluster.x-k8s.io/cluster-name": cluster,
                    "cluster.x-k8s.io/control-plane": "true",
                    MACHINE_ID_LABEL: machine_id,
                    "rke.cattle.io/control-plane-role": "true",
                    "rke.cattle.io/etcd-role": "true",
                    "rke.cattle.io/worker-role": "true"}},
            "spec": {"clusterName": cluster,
                "bootstrap": {"configRef": {"apiVersion": "rke.cattle.io/v1", "kind": "RKEBootstrap",
                    "name": name, "namespace": WORKSPACE}},
                "infrastructureRef": {"apiVersion": "rke.cattle.io/v1", "kind": "CustomMachine",
                    "name": name, "namespace": WORKSPACE}},
            "status": {"nodeRef": {"apiVersion": "v1", "kind": "Node", "name": node},
                "phase": "Running"}}),
    );
    machine_id
}

/// Creates `object`, then sets its status through the status subresource, which a create
/// ignores on these kinds.
fn with_status(admin: &AdminApi, collection: &str, mut object: Value) {
    let status = object
        .as_object_mut()
        .and_then(|o| o.remove("status"))
        .unwrap_or(Value::Null);
    let mut created = admin.create(collection, &object);
    created["status"] = status;
    let name = created["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let path = format!("{collection}/{name}/status");
    admin
        .replace(&path, &created)
        .unwrap_or_else(|e| panic!("admin PUT {path}: {e:?}"));
}
