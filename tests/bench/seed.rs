//! The benchmark cluster: 3 k3s v1.29.4+k3s1 servers and an agent, the `k3s` / `k3s-etcd`
//! locks plus the other kube-system elections, N ETCDSnapshotFiles with metadata, the
//! extra-metadata ConfigMap and a `k3s-etcd-snapshots` ConfigMap filled with the newest entries
//! up to the 1 MiB limit — as k3s leaves it once it has started pruning.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::support::fake_api::FakeApi;
use crate::support::k3s_sim::snapshot_entry::{S3ConfigShape, data_key, entry_value};
use crate::support::objects::{
    agent, extra_metadata, lease, micro_ago, server, snapshot_configmap, snapshot_cr,
};

pub const VERSION: &str = "v1.29.4+k3s1";
pub const SERVERS: [&str; 3] = ["prod-k3s-1", "prod-k3s-2", "prod-k3s-3"];
pub const AGENT: &str = "prod-k3s-worker-1";
/// k3s's ConfigMap limit: the sum of the entry values stays at or under this.
pub const CONFIGMAP_LIMIT: usize = 1_048_576;
/// The newest snapshot, 10 minutes before `objects::NOW` (2024-05-31T12:10:40Z).
const NEWEST: i64 = 1_717_156_840;
/// Every server takes a snapshot each hour, a second after the previous one.
const INTERVAL: i64 = 3_600;

/// What was seeded, for the report and for the expected number of list pages.
pub struct Seeded {
    pub snapshot_files: usize,
    pub configmap_entries: usize,
    pub configmap_bytes: usize,
    /// Objects per collection path, as the tools list them.
    pub collections: BTreeMap<&'static str, usize>,
}

/// kube-system Leases besides `k3s` and `k3s-etcd`: the other elections and the apiserver
/// identity heartbeats.
fn other_leases() -> Vec<Value> {
    let mut leases = vec![
        lease(
            "kube-controller-manager",
            "prod-k3s-1_3c1f7a52-8d2e-4f0b-9a61-2b7e5d0c9f14",
            2,
        ),
        lease(
            "kube-scheduler",
            "prod-k3s-1_0e9b4d27-51a8-4c3e-b7f2-6a1d8c5e3b90",
            1,
        ),
        lease("k3s-cloud-controller-manager", "prod-k3s-1", 3),
    ];
    for (i, hash) in [
        "c4xbkxbv3qyrmlpxw6v3mwj3zu",
        "jd5ssh4vq7x2pofbkd3aqqyhcm",
        "pjwq6ryzjjjphtj3mgvg7ozyfe",
    ]
    .iter()
    .enumerate()
    {
        leases.push(json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": format!("apiserver-{hash}"),
                "namespace": "kube-system",
                "labels": {"apiserver.kubernetes.io/identity": "kube-apiserver",
                           "kubernetes.io/hostname": SERVERS[i]}
            },
            "spec": {
                "holderIdentity": format!("apiserver-{hash}_8f1d2c3b-0a9e-4b7c-9d6f-{i:012}"),
                "leaseDurationSeconds": 3600,
                "renewTime": micro_ago(5),
            }
        }));
    }
    leases
}

/// The `i`-th newest snapshot: server `i % 3`, round `i / 3`.
fn snapshot(i: usize) -> Value {
    let node = SERVERS[i % SERVERS.len()];
    // Strictly older as `i` grows, so that "the newest N" is a prefix.
    let ts = NEWEST - (i / SERVERS.len()) as i64 * INTERVAL - (i % SERVERS.len()) as i64;
    let mut cr = snapshot_cr(node, ts, true);
    // Processed by a working snapshot controller.
    cr["metadata"]["finalizers"] = json!(["wrangler.cattle.io/managed-etcd-snapshots-controller"]);
    cr
}

/// Seed `fake` with the cluster and `files` ETCDSnapshotFiles.
pub fn seed(fake: &FakeApi, files: usize) -> Seeded {
    let mut leases = vec![
        lease("k3s", SERVERS[0], 1),
        lease("k3s-etcd", SERVERS[0], 2),
    ];
    leases.extend(other_leases());
    let nodes = vec![
        server(SERVERS[0], VERSION),
        server(SERVERS[1], VERSION),
        server(SERVERS[2], VERSION),
        agent(AGENT, VERSION),
    ];
    let (lease_count, node_count) = (leases.len(), nodes.len());
    for object in leases.into_iter().chain(nodes) {
        fake.put(object);
    }

    // Newest first: entries are kept for as many of the newest snapshots as fit.
    let mut entries = Vec::new();
    let mut bytes = 0;
    let mut full = false;
    for i in 0..files {
        let cr = snapshot(i);
        if !full {
            let value = entry_value(&cr, S3ConfigShape::Legacy);
            if bytes + value.len() <= CONFIGMAP_LIMIT {
                bytes += value.len();
                entries.push((data_key(&cr), value));
            } else {
                full = true;
            }
        }
        fake.put(cr);
    }
    let configmap_entries = entries.len();
    fake.put(snapshot_configmap("k3s", &entries));
    fake.put(extra_metadata("k3s"));

    let collections = BTreeMap::from([
        (
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
            lease_count,
        ),
        ("/api/v1/nodes", node_count),
        ("/apis/k3s.cattle.io/v1/etcdsnapshotfiles", files),
        ("/api/v1/namespaces/kube-system/configmaps", 2),
    ]);
    Seeded {
        snapshot_files: files,
        configmap_entries,
        configmap_bytes: bytes,
        collections,
    }
}
