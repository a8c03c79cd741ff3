//! API objects shaped like a real k3s/RKE2 cluster's, for seeding the fake API server or
//! writing dumps.

use std::path::Path;

use serde_json::{Value, json};

/// Fixed reference time for tests that pass `--now`.
pub(crate) const NOW: &str = "2024-05-31T12:10:40Z";

/// `NOW` minus `secs`, in the Lease MicroTime format (exactly 6 fractional digits).
pub(crate) fn micro_ago(secs: i64) -> String {
    let t: jiff::Timestamp = NOW.parse().unwrap();
    (t - jiff::SignedDuration::from_secs(secs))
        .strftime("%Y-%m-%dT%H:%M:%S.%6fZ")
        .to_string()
}

fn seconds_ago(secs: i64) -> String {
    let t: jiff::Timestamp = NOW.parse().unwrap();
    (t - jiff::SignedDuration::from_secs(secs))
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

pub(crate) struct NodeSpec<'a> {
    pub name: &'a str,
    pub hostname: &'a str,
    pub version: &'a str,
    pub prog: &'a str,
    pub server: bool,
    pub ready: bool,
}

pub(crate) fn server(name: &str, version: &str) -> Value {
    node(&NodeSpec {
        name,
        hostname: name,
        version,
        prog: prog_of(version),
        server: true,
        ready: true,
    })
}

pub(crate) fn agent(name: &str, version: &str) -> Value {
    node(&NodeSpec {
        name,
        hostname: name,
        version,
        prog: prog_of(version),
        server: false,
        ready: true,
    })
}

fn prog_of(version: &str) -> &'static str {
    if version.contains("rke2") {
        "rke2"
    } else {
        "k3s"
    }
}

pub(crate) fn node(spec: &NodeSpec<'_>) -> Value {
    let mut labels = json!({
        "kubernetes.io/hostname": spec.name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": spec.prog,
    });
    let mut annotations = json!({ format!("{}.io/hostname", spec.prog): spec.hostname });
    let mut finalizers = vec!["wrangler.cattle.io/node"];
    if spec.server {
        for role in ["control-plane", "etcd", "master"] {
            labels[format!("node-role.kubernetes.io/{role}")] = json!("true");
        }
        // What the metadata and member controllers leave on a synced etcd member.
        annotations[format!("etcd.{}.cattle.io/node-name", spec.prog)] =
            json!(format!("{}-5f2c1a9e", spec.name));
        annotations[format!("etcd.{}.cattle.io/node-address", spec.prog)] = json!("10.0.0.1");
        finalizers.push("wrangler.cattle.io/managed-etcd-controller");
    }
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": spec.name,
            "labels": labels,
            "annotations": annotations,
            "finalizers": finalizers,
        },
        "status": {
            "conditions": [{"type": "Ready", "status": if spec.ready { "True" } else { "False" },
                            "reason": "KubeletReady", "lastHeartbeatTime": seconds_ago(30)}],
            "nodeInfo": {"kubeletVersion": spec.version, "kubeProxyVersion": spec.version, "architecture": "amd64",
                         "bootID": "b", "containerRuntimeVersion": "containerd://1.7.15-k3s1", "kernelVersion": "6.1.0",
                         "machineID": "m", "operatingSystem": "linux", "osImage": "Debian GNU/Linux 12", "systemUUID": "u"}
        }
    })
}

/// A Lease renewed `secs_ago` seconds before `NOW` (`holder` "" = released).
pub(crate) fn lease(name: &str, holder: &str, secs_ago: i64) -> Value {
    json!({
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": "kube-system"},
        "spec": {
            "holderIdentity": holder,
            "leaseDurationSeconds": if holder.is_empty() { 1 } else { 45 },
            "acquireTime": micro_ago(3600),
            "renewTime": micro_ago(secs_ago),
            "leaseTransitions": 2
        }
    })
}

/// The identity Lease a 1.27+ kube-apiserver on `hostname` renews (an hour's duration, its
/// hostname as a label), renewed `secs_ago` seconds before `NOW`.
/// A Lease renewed just now by the real clock: `--watch` and `serve` judge freshness on the
/// API server's clock (the fake's `Date` header), where the fixed `NOW` of [`lease`] is long
/// past.
pub(crate) fn renewed_now(name: &str, holder: &str) -> Value {
    let mut lease = lease(name, holder, 0);
    let now = jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S.%6fZ")
        .to_string();
    lease["spec"]["renewTime"] = Value::String(now);
    lease
}

/// A fake API server holding healthy k3s v1.29.4 servers named `servers`, the first holding
/// both locks, renewed just now.
pub(crate) fn fresh_cluster(servers: &[&str]) -> super::fake_api::FakeApi {
    let fake = super::fake_api::FakeApi::start();
    for name in servers {
        fake.put(server(name, "v1.29.4+k3s1"));
    }
    fake.put(renewed_now("k3s", servers[0]));
    fake.put(renewed_now("k3s-etcd", servers[0]));
    fake
}

pub(crate) fn apiserver_identity(hostname: &str, secs_ago: i64) -> Value {
    let name = "apiserver-wj467rbl25eeviqacfhvg2yvnm";
    let mut identity = lease(name, "", secs_ago);
    identity["spec"]["holderIdentity"] = json!(format!("{name}_0c8914f7"));
    identity["spec"]["leaseDurationSeconds"] = json!(3600);
    identity["metadata"]["labels"] = json!({
        "apiserver.kubernetes.io/identity": "kube-apiserver",
        "kubernetes.io/hostname": hostname
    });
    identity
}

/// The ConfigMap copy of a lock (≤ 1.27), with client-go's annotation.
pub(crate) fn configmap_lock(name: &str, holder: &str, secs_ago: i64) -> Value {
    let record = json!({
        "holderIdentity": holder, "leaseDurationSeconds": 45, "acquireTime": seconds_ago(3600),
        "renewTime": seconds_ago(secs_ago), "leaderTransitions": 2
    });
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "kube-system",
                     "annotations": {"control-plane.alpha.kubernetes.io/leader": record.to_string()}}
    })
}

/// Every object in a dump file or directory (Lists flattened), as the fixtures hold them.
pub(crate) fn read_dump_objects(path: &Path) -> Vec<Value> {
    let mut files = Vec::new();
    if path.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        files.extend(entries);
    } else {
        files.push(path.to_path_buf());
    }
    let mut objects = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for doc in serde_yaml_ng::Deserializer::from_str(&text) {
            let value: Value = serde::Deserialize::deserialize(doc).unwrap();
            match value.get("items").and_then(Value::as_array) {
                Some(items) => objects.extend(items.iter().cloned()),
                None if !value.is_null() => objects.push(value),
                None => {}
            }
        }
    }
    objects
}

/// Writes objects as one `kind: List` YAML file, as `kubectl get -o yaml` prints it.
pub(crate) fn write_dump(path: &Path, objects: &[Value]) {
    let list = json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": objects});
    std::fs::write(path, serde_yaml_ng::to_string(&list).unwrap()).unwrap();
}

/// A local ETCDSnapshotFile as k3s creates it for a snapshot taken on `node` at unix time `ts`
/// (name digest included), created at that time.
pub(crate) fn snapshot_cr(node: &str, ts: i64, with_metadata: bool) -> Value {
    use sha2::{Digest, Sha256};
    let file = format!("on-demand-{node}-{ts}");
    let location = format!("file:///var/lib/rancher/k3s/server/db/snapshots/{file}");
    let digest: String = Sha256::digest(format!("{node}{location}").as_bytes())
        .iter()
        .take(3)
        .map(|b| format!("{b:02x}"))
        .collect();
    let time = jiff::Timestamp::from_second(ts).unwrap().to_string();
    // `GenerateName`: a node literally named `s3` gets `s3-` names (pkg/etcd/snapshot/types.go).
    let prefix = if node == "s3" { "s3" } else { "local" };
    let mut cr = json!({
        "apiVersion": "k3s.cattle.io/v1",
        "kind": "ETCDSnapshotFile",
        "metadata": {
            "name": format!("{prefix}-{file}-{digest}"),
            "creationTimestamp": time,
            "labels": {"etcd.k3s.cattle.io/snapshot-storage-node": node},
        },
        "spec": {"snapshotName": file, "nodeName": node, "location": location},
        "status": {"readyToUse": true, "size": "8417312", "creationTime": time}
    });
    if with_metadata {
        cr["spec"]["metadata"] =
            json!({"provisioning-cluster-spec": "H4sIAAAAAAAA/6quVkrLz1eyUkpKLFKqBQQAAP//"});
    }
    cr
}

/// `<prog>-etcd-snapshot-extra-metadata`, as Rancher creates it.
pub(crate) fn extra_metadata(prog: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": format!("{prog}-etcd-snapshot-extra-metadata"), "namespace": "kube-system"},
        "data": {"provisioning-cluster-spec": "H4sIAAAAAAAA/6quVkrLz1eyUkpKLFKqBQQAAP//"}
    })
}

/// `<prog>-etcd-snapshots` with these entries.
pub(crate) fn snapshot_configmap(prog: &str, entries: &[(String, String)]) -> Value {
    let data: serde_json::Map<String, Value> =
        entries.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": format!("{prog}-etcd-snapshots"), "namespace": "kube-system"},
        "data": data
    })
}

/// `Endpoints default/kubernetes` listing `ips` (ready) on 6443, as kube-apiserver's endpoint
/// reconciler writes it.
pub(crate) fn kubernetes_endpoints(ips: &[&str]) -> Value {
    let addresses: Vec<Value> = ips.iter().map(|ip| json!({"ip": ip})).collect();
    json!({
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": "kubernetes", "namespace": "default",
                     "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
        "subsets": [{"addresses": addresses, "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}]
    })
}

/// The `kubernetes` Service's EndpointSlice listing `ips` (ready) on 6443.
pub(crate) fn kubernetes_endpoint_slice(ips: &[&str]) -> Value {
    let endpoints: Vec<Value> = ips
        .iter()
        .map(|ip| json!({"addresses": [ip], "conditions": {"ready": true}}))
        .collect();
    json!({
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": "kubernetes", "namespace": "default",
                     "labels": {"kubernetes.io/service-name": "kubernetes"}},
        "addressType": "IPv4",
        "endpoints": endpoints,
        "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]
    })
}

/// A server Node whose kubelet reports `ip` as its InternalIP (and k3s the same in its
/// annotations).
pub(crate) fn server_at(name: &str, version: &str, ip: &str) -> Value {
    let mut node = server(name, version);
    let prog = prog_of(version);
    node["status"]["addresses"] =
        json!([{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}]);
    node["metadata"]["annotations"][format!("{prog}.io/internal-ip")] = json!(ip);
    node["metadata"]["annotations"][format!("etcd.{prog}.cattle.io/node-address")] = json!(ip);
    node
}

/// The `i`-th newest of many snapshots taken by `servers` hourly up to `newest`, as k3s writes
/// them: every fourth one in S3 (with the `spec.s3` block of a shared bucket), the rest local
/// to one of the servers; all with Rancher's `spec.metadata` and the token-hash annotation,
/// and no finalizer (the caller adds the controller's where it ran).
pub(crate) fn numbered_snapshot_cr(i: usize, servers: &[&str], newest: i64) -> Value {
    let node = servers[i % servers.len()];
    let ts = newest - (i / servers.len()) as i64 * 3_600 - (i % servers.len()) as i64;
    let mut cr = snapshot_cr(node, ts, true);
    cr["metadata"]["annotations"] =
        json!({"etcd.k3s.cattle.io/snapshot-token-hash": "37831a857fac"});
    if i % 4 == 3 {
        use sha2::{Digest, Sha256};
        let file = cr["spec"]["snapshotName"].as_str().unwrap().to_string();
        let location = format!("s3://k3s-backups/prod/{file}");
        // `GenerateName`: the 6-hex digest of node and location (pkg/etcd/snapshot/types.go).
        let digest: String = Sha256::digest(format!("s3{location}").as_bytes())
            .iter()
            .take(3)
            .map(|b| format!("{b:02x}"))
            .collect();
        cr["metadata"]["name"] = json!(format!("s3-{file}-{digest}"));
        cr["metadata"]["labels"]["etcd.k3s.cattle.io/snapshot-storage-node"] = json!("s3");
        cr["spec"]["nodeName"] = json!("s3");
        cr["spec"]["location"] = json!(location);
        cr["spec"]["s3"] = json!({"endpoint": "s3.eu-central-1.amazonaws.com", "bucket": "k3s-backups",
                                  "region": "eu-central-1", "prefix": "prod"});
    }
    cr
}

/// The `EtcdIsVoter` condition as k3s's `setEtcdStatusCondition` writes it: status `True`
/// (voter) or `False` with `reason`, changed `transition_secs_ago` and refreshed
/// `heartbeat_secs_ago` seconds before `NOW`.
pub(crate) fn etcd_voter_condition(
    status: &str,
    reason: &str,
    transition_secs_ago: i64,
    heartbeat_secs_ago: i64,
) -> Value {
    let message = match reason {
        "MemberNotLearner" => "Node is a voting member of the etcd cluster",
        "MemberIsLearner" => "Node has not been promoted to voting member of the etcd cluster",
        _ => "Node is not a healthy member of the etcd cluster",
    };
    json!({"type": "EtcdIsVoter", "status": status, "reason": reason, "message": message,
           "lastTransitionTime": seconds_ago(transition_secs_ago),
           "lastHeartbeatTime": seconds_ago(heartbeat_secs_ago)})
}
