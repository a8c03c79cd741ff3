//! Two real apiservers behind the Rancher proxy: the management ("local") cluster with
//! Rancher's CRDs and the objects Rancher keeps for one v2prov cluster `prod`, and the
//! downstream cluster `prod` itself (start k3s sims on [`RancherBed::downstream`]). A second
//! cluster, `gone`, is known to Rancher but its agent is disconnected.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::crds;
use super::proxy::{Backend, Disconnected, RancherProxy};
use super::records::{self, Rancher, Record, Source, hex};
use crate::support::envtest::{EnvTest, User};

/// The provisioning Cluster's name, and its management cluster id.
pub(crate) const CLUSTER: &str = "prod";
pub(crate) const CLUSTER_ID: &str = "c-m-abcd1234";
/// The cluster whose agent is disconnected.
pub(crate) const GONE: &str = "gone";
pub(crate) const GONE_ID: &str = "c-m-gone5678";
/// The fleet workspace, the namespace of the provisioning objects.
pub(crate) const WORKSPACE: &str = "fleet-default";
/// The Feature gating 2.11+'s snapshot controller.
pub(crate) const BACKPOPULATE_FEATURE: &str = "v2prov-etcd-snapshot-backpopulate";

const USERS: [User; 4] = [User::Admin, User::Viewer, User::Repair, User::Nobody];

pub(crate) struct RancherBed {
    version: String,
    tokens: HashMap<&'static str, String>,
    // Dropped first: no request reaches an apiserver being torn down.
    proxy: RancherProxy,
    management: EnvTest,
    downstream: EnvTest,
}

/// A CAPI Machine the bed made for a downstream node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Machine {
    pub name: String,
    pub node: String,
    pub machine_id: String,
}

impl RancherBed {
    /// Starts both apiservers at once, installs Rancher's side on the management one and the
    /// proxy in front; `None` (after one line) when the test bed is not configured.
    /// `rancher_version` (e.g. `v2.11.4`) becomes the `server-version` Setting.
    pub(crate) fn start(test: &str, rancher_version: &str) -> Option<RancherBed> {
        let (management, downstream) = std::thread::scope(|s| {
            let management = s.spawn(|| start_env(&format!("{test} (management)")));
            let downstream = s.spawn(|| start_env(&format!("{test} (downstream)")));
            let joined = (management.join(), downstream.join());
            match joined {
                (Ok(m), Ok(d)) => (m, d),
                (Err(panic), _) | (_, Err(panic)) => std::panic::resume_unwind(panic),
            }
        });
        let (management, downstream) = (management?, downstream?);
        let proxy = RancherProxy::start();
        let seed = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let mut tokens = HashMap::new();
        for user in USERS {
            let secret =
                hex(&Sha256::digest(format!("{test}/{}/{seed}", user.name())))[..54].to_string();
            let token = format!("kubeconfig-u-{}:{secret}", user.name());
            proxy.add_user(user.name(), &token);
            tokens.insert(user.name(), token);
        }
        proxy.register("local", &backend(&management));
        proxy.register(CLUSTER_ID, &backend(&downstream));
        proxy.register_disconnected(GONE_ID, Disconnected::AgentDisconnected);
        let bed = RancherBed {
            version: rancher_version.to_string(),
            tokens,
            proxy,
            management,
            downstream,
        };
        crds::install(bed.management.admin());
        super::bed_objects::create(&bed);
        Some(bed)
    }

    /// The Rancher version the bed plays.
    pub(crate) fn version(&self) -> &str {
        &self.version
    }

    pub(crate) fn rancher(&self) -> Rancher {
        Rancher::parse(&self.version).unwrap_or(Rancher {
            minor: 14,
            patch: 0,
        })
    }

    pub(crate) fn management(&self) -> &EnvTest {
        &self.management
    }

    pub(crate) fn downstream(&self) -> &EnvTest {
        &self.downstream
    }

    pub(crate) fn proxy(&self) -> &RancherProxy {
        &self.proxy
    }

    /// The Rancher API token of `user` (the same for every cluster, as Rancher's).
    pub(crate) fn rancher_token(&self, user: User) -> &str {
        &self.tokens[user.name()]
    }

    /// A Rancher-generated kubeconfig for `user`: contexts `prod` (the downstream cluster),
    /// `local` (the management cluster) and `gone` (the disconnected one), each through the
    /// proxy's `/k8s/clusters/<id>`, current-context `prod`. Written in the downstream's
    /// scratch directory.
    pub(crate) fn kubeconfig(&self, user: User) -> PathBuf {
        let ca = base64::engine::general_purpose::STANDARD.encode(self.proxy.ca_pem());
        let token = self.rancher_token(user);
        let mut clusters = String::new();
        let mut users = String::new();
        let mut contexts = String::new();
        for (name, id) in [(CLUSTER, CLUSTER_ID), ("local", "local"), (GONE, GONE_ID)] {
            let server = self.proxy.cluster_url(id);
            clusters.push_str(&format!(
                "- name: \"{name}\"\n  cluster:\n    server: \"{server}\"\n    certificate-authority-data: \"{ca}\"\n"
            ));
            users.push_str(&format!(
                "- name: \"{name}\"\n  user:\n    token: \"{token}\"\n"
            ));
            contexts.push_str(&format!(
                "- name: \"{name}\"\n  context:\n    user: \"{name}\"\n    cluster: \"{name}\"\n"
            ));
        }
        let text = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n{clusters}users:\n{users}contexts:\n{contexts}current-context: \"{CLUSTER}\"\n"
        );
        let path = self
            .downstream
            .scratch()
            .join(format!("rancher-{}.yaml", user.name()));
        std::fs::write(&path, text).expect("write the Rancher kubeconfig");
        path
    }

    /// A CAPI Machine in the workspace for downstream node `node`, as Rancher keeps one per
    /// custom-cluster node: `status.nodeRef.name`, the cluster-name and machine-id labels.
    pub(crate) fn add_machine(&self, node: &str) -> Machine {
        let digest = hex(&Sha256::digest(node.as_bytes()));
        let machine = Machine {
            name: format!("custom-{}", &digest[..12]),
            node: node.to_string(),
            machine_id: hex(&Sha256::digest(format!("machine-id/{node}").as_bytes()))[..32]
                .to_string(),
        };
        super::bed_objects::create_machine(self.management.admin(), &machine);
        machine
    }

    /// A Machine for every downstream Node that has none yet.
    pub(crate) fn add_machines_for_nodes(&self) -> Vec<Machine> {
        let known = self.machine_ids();
        let nodes = self
            .downstream
            .admin()
            .get("/api/v1/nodes")
            .and_then(|l| l["items"].as_array().cloned())
            .unwrap_or_default();
        nodes
            .iter()
            .filter_map(|n| n["metadata"]["name"].as_str())
            .filter(|n| !known.contains_key(*n))
            .map(|n| self.add_machine(n))
            .collect()
    }

    /// Node name → machine-id of every Machine of `prod`.
    pub(crate) fn machine_ids(&self) -> HashMap<String, String> {
        let path = format!(
            "/apis/cluster.x-k8s.io/v1beta1/namespaces/{WORKSPACE}/machines?labelSelector=cluster.x-k8s.io/cluster-name={CLUSTER}"
        );
        let items = self
            .management
            .admin()
            .get(&path)
            .and_then(|l| l["items"].as_array().cloned())
            .unwrap_or_default();
        items
            .iter()
            .filter_map(|m| {
                let node = m["status"]["nodeRef"]["name"].as_str()?;
                let id = m["metadata"]["labels"][records::MACHINE_ID_LABEL].as_str()?;
                Some((node.to_string(), id.to_string()))
            })
            .collect()
    }

    /// The records the bed's Rancher version keeps for the downstream's snapshots now
    /// (`prog`: `k3s` or `rke2`, naming the ConfigMap ≤2.10 reads).
    pub(crate) fn snapshot_records(&self, prog: &str) -> Vec<Record> {
        self.snapshot_records_as(prog, self.rancher(), WORKSPACE)
    }

    /// The records `rancher` would keep for the downstream's snapshots now, in `namespace`
    /// (to compare lines side by side without their names colliding).
    pub(crate) fn snapshot_records_as(
        &self,
        prog: &str,
        rancher: Rancher,
        namespace: &str,
    ) -> Vec<Record> {
        let files = self.downstream.admin().snapshot_files();
        let configmap = self
            .downstream
            .admin()
            .configmap_data(&format!("{prog}-etcd-snapshots"));
        let machine_ids = self.machine_ids();
        let source = Source {
            cluster: CLUSTER,
            namespace,
            snapshot_files: &files,
            configmap: &configmap,
            machine_ids: &machine_ids,
        };
        records::records(rancher, &source)
    }

    /// Computes [`RancherBed::snapshot_records`] and writes them on the management cluster.
    pub(crate) fn write_snapshot_records(&self, prog: &str) -> Vec<Record> {
        let records = self.snapshot_records(prog);
        records::write(self.management.admin(), &records);
        records
    }

    /// Every `etcdsnapshots.rke.cattle.io` object of the workspace, as stored.
    pub(crate) fn stored_records(&self) -> Vec<Value> {
        let path = format!("/apis/rke.cattle.io/v1/namespaces/{WORKSPACE}/etcdsnapshots");
        self.management
            .admin()
            .get(&path)
            .and_then(|l| l["items"].as_array().cloned())
            .unwrap_or_default()
    }

    /// Connects or disconnects `prod`'s agent: the proxy answers as for `gone` (or routes
    /// again), and its management Cluster's Connected/Ready conditions follow, as Rancher's
    /// `clusterconnected` controller sets them.
    pub(crate) fn set_prod_connected(&self, connected: bool) {
        if connected {
            self.proxy.register(CLUSTER_ID, &backend(&self.downstream));
        } else {
            self.proxy
                .register_disconnected(CLUSTER_ID, Disconnected::AgentDisconnected);
        }
        super::bed_objects::set_connected(self.management.admin(), CLUSTER_ID, connected);
    }

    /// Sets `spec.value` of the backpopulate Feature (`None`: the default).
    pub(crate) fn set_backpopulate_feature(&self, value: Option<bool>) {
        self.management.admin().merge_patch(
            &format!("/apis/management.cattle.io/v3/features/{BACKPOPULATE_FEATURE}"),
            &json!({"spec": {"value": value}}),
        );
    }
}

/// `EnvTest::start`, tried twice: with several instances starting at once, up.sh sometimes
/// loses a port to another instance between picking it and binding it ("etcd exited at start",
/// the log saying "address already in use"), and a bed starts two instances at a time.
fn start_env(name: &str) -> Option<EnvTest> {
    match std::panic::catch_unwind(|| EnvTest::start(name)) {
        Ok(env) => env,
        Err(_) => {
            eprintln!("{name}: the test cluster did not start (above); trying once more");
            EnvTest::start(name)
        }
    }
}

/// An EnvTest as the proxy's backend: its URL, its CA and each user's static token.
fn backend(env: &EnvTest) -> Backend {
    let pki = env.scratch().join("pki");
    Backend {
        server: env.server().to_string(),
        ca_pem: std::fs::read_to_string(pki.join("ca.crt")).expect("the test bed's CA"),
        tokens: static_tokens(&pki.join("tokens.csv")),
    }
}

/// `tokens.csv` (token,user,uid[,groups]) → user → token.
fn static_tokens(path: &Path) -> HashMap<String, String> {
    let text = std::fs::read_to_string(path).expect("the test bed's tokens.csv");
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split(',');
            let token = fields.next()?;
            let user = fields.next()?;
            Some((user.to_string(), token.to_string()))
        })
        .collect()
}
