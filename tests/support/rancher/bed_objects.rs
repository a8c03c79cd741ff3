//! The management-cluster objects Rancher keeps for the bed's clusters. Field names and values
//! as rancher/rancher writes them: conditions from `clusterconnected.go` (a disconnected agent
//! gives Connected False and Ready False, reason `Disconnected`, "Cluster agent is not
//! connected"), the Feature from `pkg/features/feature.go`, the Setting from
//! `management.cattle.io/v3` `global_types.go`.

use serde_json::{Value, json};

use super::bed::{
    BACKPOPULATE_FEATURE, CLUSTER, CLUSTER_ID, GONE, GONE_ID, Machine, RancherBed, WORKSPACE,
};
use super::records::MACHINE_ID_LABEL;
use crate::support::envtest::admin::AdminApi;

const PROVISIONING: &str = "/apis/provisioning.cattle.io/v1";
const MANAGEMENT: &str = "/apis/management.cattle.io/v3";

pub(super) fn create(bed: &RancherBed) {
    let admin = bed.management().admin();
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
            "value": bed.version(), "default": "dev", "customized": false, "source": ""}),
    );
    admin.create(
        &format!("{MANAGEMENT}/features"),
        &json!({"apiVersion": "management.cattle.io/v3", "kind": "Feature",
            "metadata": {"name": BACKPOPULATE_FEATURE},
            "spec": {"value": null},
            "status": {"dynamic": false, "default": true, "lockedValue": null, "prime": false,
                "description": "Allow Rancher to create ETCD Snapshot CRs for downstream clusters in the local cluster"}}),
    );
    management_cluster(admin, "local", "local", "fleet-local", None);
    management_cluster(admin, CLUSTER_ID, CLUSTER, WORKSPACE, Some(true));
    management_cluster(admin, GONE_ID, GONE, WORKSPACE, Some(false));
    provisioning_cluster(admin, "local", "fleet-local", "local", true);
    provisioning_cluster(admin, CLUSTER, WORKSPACE, CLUSTER_ID, true);
    provisioning_cluster(admin, GONE, WORKSPACE, GONE_ID, false);
    for name in [CLUSTER, GONE] {
        let restore = json!({"generation": 0, "name": "", "restoreRKEConfig": ""});
        with_status(
            admin,
            &format!("/apis/rke.cattle.io/v1/namespaces/{WORKSPACE}/rkecontrolplanes"),
            json!({"apiVersion": "rke.cattle.io/v1", "kind": "RKEControlPlane",
                "metadata": {"name": name, "namespace": WORKSPACE,
                    "labels": {"cluster.x-k8s.io/cluster-name": name}},
                "spec": {"etcdSnapshotRestore": restore, "clusterName": name,
                    "kubernetesVersion": "v1.29.4+k3s1"},
                "status": {"etcdSnapshotRestore": restore, "initialized": true, "ready": true,
                    "observedGeneration": 1}}),
        );
    }
}

/// `connected`: `None` for the internal local cluster, else whether its agent is connected.
fn management_cluster(
    admin: &AdminApi,
    id: &str,
    display: &str,
    workspace: &str,
    connected: Option<bool>,
) {
    let mut annotations = json!({});
    if connected.is_some() {
        annotations["provisioning.cattle.io/administrated"] = json!("true");
    }
    let conditions = conditions(connected);
    with_status(
        admin,
        &format!("{MANAGEMENT}/clusters"),
        json!({"apiVersion": "management.cattle.io/v3", "kind": "Cluster",
            "metadata": {"name": id, "annotations": annotations,
                "labels": {"provider.cattle.io": "k3s"}},
            "spec": {"displayName": display, "fleetWorkspaceName": workspace,
                "internal": connected.is_none()},
            "status": {"conditions": conditions, "driver": "k3s", "provider": "k3s"}}),
    );
}

pub(super) fn set_connected(admin: &AdminApi, id: &str, connected: bool) {
    let path = format!("{MANAGEMENT}/clusters/{id}");
    let mut cluster = admin.get(&path).expect("the management Cluster");
    cluster["status"]["conditions"] = json!(conditions(Some(connected)));
    admin
        .replace(&format!("{path}/status"), &cluster)
        .unwrap_or_else(|e| panic!("admin PUT {path}/status: {e:?}"));
}

fn provisioning_cluster(admin: &AdminApi, name: &str, namespace: &str, id: &str, ready: bool) {
    with_status(
        admin,
        &format!("{PROVISIONING}/namespaces/{namespace}/clusters"),
        json!({"apiVersion": "provisioning.cattle.io/v1", "kind": "Cluster",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"kubernetesVersion": "v1.29.4+k3s1", "rkeConfig": {}},
            "status": {"clusterName": id, "ready": ready,
                "clientSecretName": format!("{name}-kubeconfig"), "observedGeneration": 1}}),
    );
}

pub(super) fn create_machine(admin: &AdminApi, machine: &Machine) {
    with_status(
        admin,
        &format!("/apis/cluster.x-k8s.io/v1beta1/namespaces/{WORKSPACE}/machines"),
        json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Machine",
            "metadata": {"name": machine.name, "namespace": WORKSPACE,
                "labels": {
                    "cluster.x-k8s.io/cluster-name": CLUSTER,
                    "cluster.x-k8s.io/control-plane": "true",
                    MACHINE_ID_LABEL: machine.machine_id,
                    "rke.cattle.io/control-plane-role": "true",
                    "rke.cattle.io/etcd-role": "true",
                    "rke.cattle.io/worker-role": "true"}},
            "spec": {"clusterName": CLUSTER,
                "bootstrap": {"configRef": {"apiVersion": "rke.cattle.io/v1", "kind": "RKEBootstrap",
                    "name": machine.name, "namespace": WORKSPACE}},
                "infrastructureRef": {"apiVersion": "rke.cattle.io/v1", "kind": "CustomMachine",
                    "name": machine.name, "namespace": WORKSPACE}},
            "status": {"nodeRef": {"apiVersion": "v1", "kind": "Node", "name": machine.node},
                "phase": "Running"}}),
    );
}

/// `connected`: `None` for the internal local cluster.
fn conditions(connected: Option<bool>) -> Vec<Value> {
    if connected == Some(false) {
        vec![
            condition("Provisioned", true, "", ""),
            condition("Connected", false, "", ""),
            condition(
                "Ready",
                false,
                "Disconnected",
                "Cluster agent is not connected",
            ),
        ]
    } else {
        vec![
            condition("Provisioned", true, "", ""),
            condition("Connected", true, "", ""),
            condition("Ready", true, "", ""),
        ]
    }
}

fn condition(kind: &str, status: bool, reason: &str, message: &str) -> Value {
    json!({"type": kind, "status": if status { "True" } else { "False" },
        "reason": reason, "message": message,
        "lastUpdateTime": "2026-01-01T00:00:00Z"})
}

/// Creates `object` in `collection`, then sets its status through the status subresource (a
/// create drops it on kinds that have one).
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
