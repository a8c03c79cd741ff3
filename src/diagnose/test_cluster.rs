//! Builds `ClusterState`s for unit tests, the way a real k3s/RKE2 cluster shapes its objects.

// Test-only (declared under `#[cfg(test)]`): its panics are assertions, never reached on
// bad input.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Node};
use serde_json::{Value, json};

use crate::distro::Distro;
use crate::model::apiserver_endpoints::PublishedAddresses;
use crate::model::cluster_state::{ClusterState, Origin};
use crate::model::collected::Collected;
use crate::model::configmap::ConfigMapFacts;
use crate::model::lease::LeaseFacts;
use crate::model::node::NodeFacts;
use crate::model::node_event::NodeEvent;
use crate::model::packaged_charts::PackagedCharts;
use crate::model::secret_metadata::{SecretMeta, SecretOwner};
use crate::model::server_metrics::{DatastoreScrape, ServerMetrics, StorageSize};

pub(crate) const NOW: &str = "2024-05-31T12:10:40Z";

pub(crate) fn now() -> Timestamp {
    NOW.parse().unwrap()
}

fn ago(secs: i64) -> Timestamp {
    now() - SignedDuration::from_secs(secs)
}

pub(crate) struct TestCluster {
    distro: Distro,
    state: ClusterState,
}

impl TestCluster {
    pub(crate) fn new(distro: Distro) -> TestCluster {
        TestCluster {
            distro,
            state: ClusterState {
                origin: Origin::Live {
                    server: "https://test".into(),
                },
                nodes: Some(Vec::new()),
                leases: Some(Vec::new()),
                configmaps: Some(Vec::new()),
                snapshot_files: Some(Vec::new()),
                apiserver_addresses: Collected::Read(PublishedAddresses {
                    endpoints: Some(Vec::new()),
                    slices: Some(Vec::new()),
                }),
                node_events: Collected::Read(Vec::new()),
                secret_metadata: Collected::Read(Vec::new()),
                packaged_charts: Collected::Read(PackagedCharts {
                    charts: Some(Vec::new()),
                    jobs: Some(Vec::new()),
                }),
                upgrade_plans: Collected::Read(crate::model::upgrade_plans::UpgradePlans {
                    plans: Some(Vec::new()),
                    jobs: Some(Vec::new()),
                    controller_env: Some(Vec::new()),
                    crd_missing: false,
                }),
                ..ClusterState::default()
            },
        }
    }

    pub(crate) fn k3s() -> TestCluster {
        TestCluster::new(Distro::K3s)
    }

    fn node(&mut self, name: &str, hostname: &str, version: &str, roles: &[&str], ready: &str) {
        self.node_with(name, hostname, version, roles, ready, json!({}));
    }

    fn node_with(
        &mut self,
        name: &str,
        hostname: &str,
        version: &str,
        roles: &[&str],
        ready: &str,
        extra: Value,
    ) {
        let mut labels = serde_json::Map::new();
        labels.insert("kubernetes.io/hostname".into(), json!(name));
        for role in roles {
            labels.insert(format!("node-role.kubernetes.io/{role}"), json!("true"));
        }
        let mut annotations = json!({self.distro.hostname_annotation(): hostname});
        if let Some(more) = extra.get("annotations").and_then(Value::as_object) {
            for (k, v) in more {
                annotations[k] = v.clone();
            }
        }
        let mut metadata = json!({"name": name, "labels": labels, "annotations": annotations});
        for key in [
            "finalizers",
            "deletionTimestamp",
            "creationTimestamp",
            "managedFields",
        ] {
            if let Some(v) = extra.get(key) {
                metadata[key] = v.clone();
            }
        }
        let node: Node = serde_json::from_value(json!({
            "metadata": metadata,
            "status": {
                "conditions": [{"type": "Ready", "status": ready}],
                "nodeInfo": {"kubeletVersion": version, "architecture": "amd64", "bootID": "", "containerRuntimeVersion": "",
                             "kernelVersion": "", "kubeProxyVersion": version, "machineID": "", "operatingSystem": "linux",
                             "osImage": "", "systemUUID": ""}
            }
        }))
        .unwrap();
        self.state
            .nodes
            .get_or_insert_with(Vec::new)
            .push(NodeFacts::from_api(&node));
    }

    /// A Ready server (control-plane, etcd, master) whose hostname is its node name.
    pub(crate) fn server(mut self, name: &str, version: &str) -> Self {
        self.node(
            name,
            name,
            version,
            &["control-plane", "etcd", "master"],
            "True",
        );
        self
    }

    /// A server whose kernel hostname differs from its node name (`--node-name`, cloud names).
    pub(crate) fn server_named(mut self, node: &str, hostname: &str, version: &str) -> Self {
        self.node(
            node,
            hostname,
            version,
            &["control-plane", "etcd", "master"],
            "True",
        );
        self
    }

    /// A Ready server with extra metadata: `finalizers`, `annotations`, `deletionTimestamp`,
    /// `creationTimestamp`, `managedFields`.
    pub(crate) fn server_with(mut self, name: &str, version: &str, extra: Value) -> Self {
        self.node_with(
            name,
            name,
            version,
            &["control-plane", "etcd", "master"],
            "True",
            extra,
        );
        self
    }

    /// Sets a node condition (`Ready` also sets readiness).
    pub(crate) fn condition(mut self, node: &str, type_: &str, status: &str, reason: &str) -> Self {
        let facts = self
            .state
            .nodes
            .iter_mut()
            .flatten()
            .find(|n| n.name == node)
            .expect("node");
        facts.conditions.insert(
            type_.to_string(),
            crate::model::node::Condition {
                status: status.to_string(),
                reason: Some(reason.to_string()),
                message: None,
                last_heartbeat: None,
                last_transition: None,
            },
        );
        if type_ == "Ready" {
            facts.readiness = match status {
                "True" => crate::model::node::Readiness::Ready,
                "False" => crate::model::node::Readiness::NotReady,
                _ => crate::model::node::Readiness::Unknown,
            };
        }
        self
    }

    /// Sets when a node's condition last changed and last had a heartbeat, `secs_ago`
    /// seconds before `NOW` (after [`TestCluster::condition`]).
    pub(crate) fn condition_times(
        mut self,
        node: &str,
        type_: &str,
        transition_secs_ago: i64,
        heartbeat_secs_ago: i64,
    ) -> Self {
        let condition = self
            .state
            .nodes
            .iter_mut()
            .flatten()
            .find(|n| n.name == node)
            .and_then(|n| n.conditions.get_mut(type_))
            .expect("condition");
        condition.last_transition = Some(ago(transition_secs_ago));
        condition.last_heartbeat = Some(ago(heartbeat_secs_ago));
        self
    }

    /// Adds a finalizer to a node.
    pub(crate) fn finalizer(mut self, node: &str, finalizer: &str) -> Self {
        self.state
            .nodes
            .iter_mut()
            .flatten()
            .find(|n| n.name == node)
            .expect("node")
            .finalizers
            .push(finalizer.to_string());
        self
    }

    pub(crate) fn not_ready_server(mut self, name: &str, version: &str) -> Self {
        self.node(
            name,
            name,
            version,
            &["control-plane", "etcd", "master"],
            "False",
        );
        self
    }

    pub(crate) fn agent(mut self, name: &str, version: &str) -> Self {
        self.node(name, name, version, &[], "True");
        self
    }

    /// The identity Lease of the kube-apiserver on `hostname`, renewed `secs_ago` seconds before
    /// `NOW` (1.27+: `apiserver-<hash>`, an hour's duration, a hostname label).
    pub(crate) fn apiserver_identity(mut self, hostname: &str, secs_ago: i64) -> Self {
        let mut json = lease_json(&format!("apiserver-{hostname}hash"), "", secs_ago);
        json["spec"]["holderIdentity"] = json!(format!("apiserver-{hostname}hash_0c8914f7"));
        json["spec"]["leaseDurationSeconds"] = json!(3600);
        json["metadata"]["labels"] = json!({
            "apiserver.kubernetes.io/identity": "kube-apiserver",
            "kubernetes.io/hostname": hostname
        });
        let lease: Lease = serde_json::from_value(json).unwrap();
        self.state
            .leases
            .get_or_insert_with(Vec::new)
            .push(LeaseFacts::from_api(&lease));
        self
    }

    /// A Lease renewed `secs_ago` seconds before `NOW`.
    pub(crate) fn lease(mut self, name: &str, holder: &str, secs_ago: i64) -> Self {
        let lease: Lease = serde_json::from_value(lease_json(name, holder, secs_ago)).unwrap();
        self.state
            .leases
            .get_or_insert_with(Vec::new)
            .push(LeaseFacts::from_api(&lease));
        self
    }

    /// A ConfigMap lock copy (annotation) renewed `secs_ago` seconds before `NOW`.
    pub(crate) fn configmap_lock(self, name: &str, holder: &str, secs_ago: i64) -> Self {
        let record = json!({
            "holderIdentity": holder, "leaseDurationSeconds": if holder.is_empty() { 1 } else { 45 },
            "acquireTime": ago(3600).strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
            "renewTime": ago(secs_ago).strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
            "leaderTransitions": 1
        });
        self.configmap_annotation(name, &record.to_string())
    }

    pub(crate) fn configmap_annotation(mut self, name: &str, value: &str) -> Self {
        let cm: ConfigMap = serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "kube-system",
                         "annotations": {"control-plane.alpha.kubernetes.io/leader": value}}
        }))
        .unwrap();
        self.state
            .configmaps
            .get_or_insert_with(Vec::new)
            .push(ConfigMapFacts::from_api(&cm));
        self
    }

    /// A local ETCDSnapshotFile taken on `node` at unix time `ts`, created by k3s at `ts`.
    pub(crate) fn snapshot(self, node: &str, ts: i64, with_metadata: bool) -> Self {
        self.snapshot_json(snapshot_json(node, ts, with_metadata))
    }

    pub(crate) fn snapshot_json(mut self, cr: Value) -> Self {
        let file = crate::model::snapshot_file::SnapshotFile::from_json(&cr);
        self.state
            .snapshot_files
            .get_or_insert_with(Vec::new)
            .push(std::sync::Arc::new(file));
        self
    }

    /// The snapshot ConfigMap with these data entries.
    pub(crate) fn snapshot_configmap(mut self, entries: &[(&str, &str)]) -> Self {
        let data: serde_json::Map<String, Value> = entries
            .iter()
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect();
        let cm: ConfigMap = serde_json::from_value(json!({
            "metadata": {"name": self.distro.snapshots_configmap(), "namespace": "kube-system", "resourceVersion": "77"},
            "data": data
        }))
        .unwrap();
        self.state
            .configmaps
            .get_or_insert_with(Vec::new)
            .push(ConfigMapFacts::from_api(&cm));
        self
    }

    pub(crate) fn extra_metadata(mut self) -> Self {
        let cm: ConfigMap = serde_json::from_value(json!({
            "metadata": {"name": self.distro.extra_metadata_configmap(), "namespace": "kube-system"},
            "data": {"provisioning-cluster-spec": "H4sI"}
        }))
        .unwrap();
        self.state
            .configmaps
            .get_or_insert_with(Vec::new)
            .push(ConfigMapFacts::from_api(&cm));
        self
    }

    pub(crate) fn into_dump(mut self) -> Self {
        self.state.origin = Origin::Dump {
            paths: vec!["dump".into()],
        };
        self
    }

    /// A core/v1 Event about Node `node`, last recorded `secs_ago`, as k3s's recorders write
    /// them (Warning for the reasons that warn or report an error).
    pub(crate) fn node_event(
        mut self,
        node: &str,
        reason: &str,
        message: &str,
        secs_ago: i64,
    ) -> Self {
        let warns = reason.contains("Warning") || reason.contains("Error");
        let event = NodeEvent {
            name: format!("{node}.{reason}.{secs_ago}"),
            reason: reason.into(),
            type_: if warns { "Warning" } else { "Normal" }.into(),
            message: message.into(),
            node: node.into(),
            count: 1,
            first_seen: Some(ago(secs_ago)),
            last_seen: Some(ago(secs_ago)),
            source: String::new(),
        };
        self.state.node_events.add(Vec::new, |e| e.push(event));
        self
    }

    pub(crate) fn without_events(mut self) -> Self {
        self.state.node_events = Collected::NotAsked;
        self
    }

    /// The metadata of Secret kube-system/`name`, created `secs_ago`, with `annotations` and
    /// owned by the Nodes `owners`.
    pub(crate) fn secret(
        mut self,
        name: &str,
        secs_ago: i64,
        annotations: &[(&str, &str)],
        owners: &[&str],
    ) -> Self {
        let secret = SecretMeta {
            name: name.into(),
            namespace: "kube-system".into(),
            created: Some(ago(secs_ago)),
            annotations: annotations
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            labels: Default::default(),
            owners: owners
                .iter()
                .map(|o| SecretOwner {
                    api_version: "v1".into(),
                    kind: "Node".into(),
                    name: o.to_string(),
                    uid: format!("uid-{o}"),
                })
                .collect(),
        };
        self.state.secret_metadata.add(Vec::new, |s| s.push(secret));
        self
    }

    pub(crate) fn without_secrets(mut self) -> Self {
        self.state.secret_metadata = Collected::NotAsked;
        self
    }

    pub(crate) fn without_nodes(mut self) -> Self {
        self.state.nodes = None;
        self
    }

    /// The state; unless a test set them, every server's metrics read, small and quick.
    pub(crate) fn build(mut self) -> ClusterState {
        if matches!(self.state.server_metrics, Collected::NotAsked) {
            let reads = self
                .state
                .nodes()
                .iter()
                .filter(|n| n.is_server())
                .map(|n| ServerMetrics {
                    node: Some(n.name.clone()),
                    from: format!("{}:6443", n.name),
                    apiserver: Ok(DatastoreScrape {
                        storage_size: Some(StorageSize {
                            bytes: 50.0 * 1024.0 * 1024.0,
                            metric: "apiserver_storage_size_bytes",
                        }),
                        ..DatastoreScrape::default()
                    }),
                    etcd: None,
                })
                .collect();
            self.state.server_metrics = Collected::Read(reads);
        }
        // A cluster without admission webhooks, as most are.
        if matches!(self.state.webhooks, Collected::NotAsked) {
            self.state.webhooks = Collected::Read(Vec::new());
        }
        self.state
    }
}

pub(crate) fn snapshot_json(node: &str, ts: i64, with_metadata: bool) -> Value {
    let file = format!("etcd-snapshot-{node}-{ts}");
    let location = format!("file:///var/lib/rancher/k3s/server/db/snapshots/{file}");
    let digest = crate::model::snapshot_key::name_digest(node, &location);
    let time = Timestamp::from_second(ts).unwrap().to_string();
    // `GenerateName`: a node literally named `s3` gets `s3-` names (pkg/etcd/snapshot/types.go).
    let prefix = if node == "s3" { "s3" } else { "local" };
    let mut cr = json!({
        "metadata": {"name": format!("{prefix}-{file}-{digest}"), "creationTimestamp": time,
                     "finalizers": ["wrangler.cattle.io/managed-etcd-snapshots-controller"]},
        "spec": {"snapshotName": file, "nodeName": node, "location": location},
        "status": {"creationTime": time, "readyToUse": true, "size": "8417312"}
    });
    if with_metadata {
        cr["spec"]["metadata"] = json!({"provisioning-cluster-spec": "H4sI"});
    }
    cr
}

pub(crate) fn lease_json(name: &str, holder: &str, secs_ago: i64) -> Value {
    let micro = |t: Timestamp| t.strftime("%Y-%m-%dT%H:%M:%S.%6fZ").to_string();
    json!({
        "metadata": {"name": name, "namespace": "kube-system"},
        "spec": {
            "holderIdentity": holder,
            "leaseDurationSeconds": if holder.is_empty() { 1 } else { 45 },
            "acquireTime": micro(ago(3600)),
            "renewTime": micro(ago(secs_ago)),
            "leaseTransitions": 1
        }
    })
}
