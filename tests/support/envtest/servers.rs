//! A cluster of simulated k3s/RKE2 servers on one test apiserver, brought into the states the
//! tests need the way they happen on real clusters.

use std::time::Duration;

use serde_json::json;

use super::EnvTest;
use crate::support::wait::wait_for;

/// Long enough for the slowest real transition: a renew deadline (10 s), a restart (2 s) and
/// a lease expiry judged from a candidate's own observation (15 s), with room for a busy CI.
pub(crate) const TRANSITION: Duration = Duration::from_secs(60);

/// One simulated server: the hostname is its election identity, the node name differs on
/// purpose so every test also checks the hostname → node mapping.
#[derive(Clone, Debug)]
pub(crate) struct SimServer {
    pub hostname: String,
    pub node: String,
    pub internal_ip: String,
}

pub(crate) struct SimCluster<'a> {
    pub env: &'a EnvTest,
    pub prog: &'static str,
    pub version: String,
    pub servers: Vec<SimServer>,
    flags: Vec<String>,
}

impl<'a> SimCluster<'a> {
    /// `count` servers `server-1…` on `version`, server-1 leading both locks. The extra-metadata
    /// ConfigMap Rancher creates exists from the start, so every snapshot gets an entry on
    /// versions with the metadata rule.
    pub(crate) fn start(
        env: &'a EnvTest,
        prog: &'static str,
        version: &str,
        count: usize,
        extra_flags: &[&str],
    ) -> SimCluster<'a> {
        env.admin().create(
            "/api/v1/namespaces/kube-system/configmaps",
            &json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": format!("{prog}-etcd-snapshot-extra-metadata"), "namespace": "kube-system"},
                "data": {"provisioning-cluster-spec": "H4sIAAAAAAAA/6pWSs7PS8tMB9GpxcWZ+XlKVkq5iXmZSgq1AAAAAP//AQAA//8="}
            }),
        );
        let mut flags: Vec<String> = [
            "--program",
            prog,
            "--version",
            version,
            // Few, slow snapshot rounds and no retention deletes keep the snapshot state still
            // between the moments a test looks at it.
            "--snapshot-interval",
            "20s",
            "--snapshot-retention",
            "100",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        flags.extend(extra_flags.iter().map(|s| s.to_string()));
        let servers = (1..=count)
            .map(|i| SimServer {
                hostname: format!("server-{i}"),
                node: format!("ip-10-0-0-{}", 10 + i),
                internal_ip: format!("10.0.0.{}", 10 + i),
            })
            .collect();
        let cluster = SimCluster {
            env,
            prog,
            version: version.to_string(),
            servers,
            flags,
        };
        for (i, server) in cluster.servers.iter().enumerate() {
            cluster.start_server(server);
            if i == 0 {
                // The first server takes both locks before anyone else campaigns.
                for lock in [cluster.core_lock(), cluster.etcd_lock()] {
                    assert!(
                        cluster.wait_log(&server.hostname, &format!("became leader of {lock} "), 1),
                        "{} did not become leader of {lock}",
                        server.hostname
                    );
                }
            }
        }
        cluster
    }

    fn start_server(&self, server: &SimServer) {
        let mut flags = vec![
            "--node-name".to_string(),
            server.node.clone(),
            "--internal-ip".to_string(),
            server.internal_ip.clone(),
        ];
        flags.extend(self.flags.iter().cloned());
        if let Err(e) = self.env.start_sim(&server.hostname, &flags) {
            panic!("start {}: {e}", server.hostname);
        }
    }

    pub(crate) fn core_lock(&self) -> String {
        self.prog.to_string()
    }

    pub(crate) fn etcd_lock(&self) -> String {
        format!("{}-etcd", self.prog)
    }

    pub(crate) fn server(&self, hostname: &str) -> &SimServer {
        self.servers
            .iter()
            .find(|s| s.hostname == hostname)
            .unwrap_or_else(|| panic!("no simulated server {hostname}"))
    }

    /// The holders named by every copy of `lock` that exists (one entry when they agree).
    pub(crate) fn holders(&self, lock: &str) -> Vec<String> {
        let admin = self.env.admin();
        let mut holders: Vec<String> = [admin.configmap_record(lock), admin.lease_record(lock)]
            .into_iter()
            .flatten()
            .map(|r| r.holder)
            .collect();
        holders.dedup();
        holders
    }

    /// The single holder of `lock`; panics when its copies disagree.
    pub(crate) fn holder(&self, lock: &str) -> String {
        let holders = self.holders(lock);
        assert_eq!(holders.len(), 1, "copies of {lock} name {holders:?}");
        holders[0].clone()
    }

    /// How often `needle` appears in server `hostname`'s log.
    pub(crate) fn log_count(&self, hostname: &str, needle: &str) -> usize {
        self.env.sim_log(hostname).matches(needle).count()
    }

    /// What `hostname` logged after the last line containing `marker` (everything if none).
    pub(crate) fn log_since_last(&self, hostname: &str, marker: &str) -> String {
        let log = self.env.sim_log(hostname);
        match log.rfind(marker) {
            Some(at) => log[at..].to_string(),
            None => log,
        }
    }

    /// Waits (bounded by `TRANSITION`) until `needle` appears `times` times in `hostname`'s log.
    pub(crate) fn wait_log(&self, hostname: &str, needle: &str, times: usize) -> bool {
        wait_for(TRANSITION, || self.log_count(hostname, needle) >= times)
    }

    /// Brings about a split the realistic way: `<prog>-etcd` is edited onto `target`; its old
    /// holder cannot renew, exits, restarts and, finding its own name in `<prog>`, keeps it.
    /// Returns once both holders are settled and renewing.
    pub(crate) fn split_etcd_onto(&self, target: &str) {
        let core = self.core_lock();
        let etcd = self.etcd_lock();
        let old = self.holder(&etcd);
        assert_ne!(old, target, "{target} already holds {etcd}");
        assert_eq!(self.holder(&core), old, "start from a healthy cluster");
        let became_core = format!("became leader of {core} (identity {old})");
        let before = self.log_count(&old, &became_core);
        let target_before = self.log_count(target, &format!("became leader of {etcd} "));
        self.env.admin().set_holder(&etcd, target);
        assert!(
            self.wait_log(&old, &became_core, before + 1),
            "{old} did not restart and keep {core}"
        );
        assert!(
            self.wait_log(
                target,
                &format!("became leader of {etcd} "),
                target_before + 1
            ),
            "{target} did not take {etcd}"
        );
        assert_eq!(self.holder(&core), old);
        assert_eq!(self.holder(&etcd), target);
    }
}
