//! `etcd-config-drift`: etcd servers that run with different snapshot or S3 flags. Each server
//! takes its snapshots, prunes and uploads with its own flags (pkg/etcd/snapshot.go), so one
//! server with another schedule, retention or bucket silently breaks what the others promise.
//! Compared: `--etcd-snapshot-*`, `--etcd-s3*`, `--etcd-disable-snapshots` from node-args and
//! `<PROG>_ETCD_*` from node-env; secrets are never compared or printed. Pure.

use std::collections::{BTreeMap, BTreeSet};

use super::etcd_settings::{EtcdServer, etcd_servers, node_refs};
use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::distro::Distro;
use crate::model::cluster_state::ClusterState;

/// Values that are secrets (redacted or not): never compared, never shown.
const SECRET: [&str; 3] = [
    "etcd-s3-access-key",
    "etcd-s3-secret-key",
    "etcd-s3-session-token",
];

/// Paths on each server's own disk: they may differ without changing what is kept.
const LOCAL_PATHS: [&str; 2] = ["etcd-snapshot-dir", "etcd-s3-endpoint-ca"];

fn compared(flag: &str) -> bool {
    !LOCAL_PATHS.contains(&flag)
        && (flag.starts_with("etcd-snapshot")
            || flag.starts_with("etcd-s3")
            || flag == "etcd-disable-snapshots")
        && !SECRET.contains(&flag)
}

/// Each compared setting's value on one server; a flag left out has k3s's default.
fn settings(server: &EtcdServer, distro: Distro) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Some(args) = &server.args {
        for f in args.flags.iter().filter(|f| compared(&f.name)) {
            let value = args.value(&f.name).unwrap_or_default().to_string();
            out.insert(format!("--{}", f.name), value);
        }
    }
    let env_prefix = format!("{}_ETCD_", distro.prog().to_ascii_uppercase());
    if let Some(Ok(env)) = server.node.node_env(distro) {
        for (k, v) in env {
            let lower = k.to_ascii_lowercase();
            if k.starts_with(&env_prefix)
                && !["token", "secret", "access_key"]
                    .iter()
                    .any(|w| lower.contains(w))
            {
                out.insert(k, v);
            }
        }
    }
    out
}

pub(crate) fn analyse_etcd_config_drift(state: &ClusterState, distro: Distro) -> Vec<Finding> {
    let servers: Vec<EtcdServer> = etcd_servers(state.nodes(), distro)
        .into_iter()
        .filter(|s| s.args.is_some())
        .collect();
    if servers.len() < 2 {
        return Vec::new();
    }
    let per_server: Vec<(&str, BTreeMap<String, String>)> = servers
        .iter()
        .map(|s| (s.node.name.as_str(), settings(s, distro)))
        .collect();
    let keys: BTreeSet<&String> = per_server.iter().flat_map(|(_, m)| m.keys()).collect();
    let mut findings = Vec::new();
    for key in keys {
        let values: Vec<(&str, Option<&String>)> =
            per_server.iter().map(|(n, m)| (*n, m.get(key))).collect();
        let distinct: BTreeSet<Option<&String>> = values.iter().map(|(_, v)| *v).collect();
        if distinct.len() < 2 {
            continue;
        }
        let listed: Vec<String> = values
            .iter()
            .map(|(n, v)| match v {
                Some(v) => format!("{n}={v}"),
                None => format!("{n}=(default)"),
            })
            .collect();
        findings.push(
            Finding::new(
                Severity::Warning,
                FindingCode::EtcdConfigDrift,
                "etcd server Nodes",
                format!(
                    "etcd servers run with different {key} ({}): each server snapshots, prunes and uploads with \
                     its own flags, so the cluster's snapshots follow neither setting",
                    listed.join(", ")
                ),
            )
            .listing(&listed)
            .about(node_refs(values.iter().map(|(n, _)| *n)))
            .fix(format!(
                "set {key} the same in /etc/rancher/{}/config.yaml on every server and restart {} there one at a time",
                distro.prog(),
                distro.server_unit()
            )),
        );
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::test_cluster::TestCluster;
    use serde_json::json;

    const V: &str = "v1.34.6+k3s1";

    fn args(a: &str) -> serde_json::Value {
        json!({"annotations": {"k3s.io/node-args": a}})
    }

    #[test]
    fn a_server_with_another_retention_or_a_missing_flag_fires() {
        let state = TestCluster::k3s()
            .server_with("s1", V, args(r#"["server","--etcd-s3","--etcd-s3-retention","10","--etcd-s3-access-key","********"]"#))
            .server_with("s2", V, args(r#"["server","--etcd-s3","true","--etcd-s3-retention=20","--etcd-s3-access-key","********"]"#))
            .server_with("s3", V, args(r#"["server","--etcd-s3-access-key","********"]"#))
            .build();
        let f = analyse_etcd_config_drift(&state, Distro::K3s);
        let messages: Vec<String> = f.iter().map(|f| f.message.to_string()).collect();
        assert_eq!(f.len(), 2, "{messages:#?}");
        assert!(
            messages[0].contains("--etcd-s3 (s1=true, s2=true, s3=(default))"),
            "{}",
            messages[0]
        );
        assert!(messages[1].contains("--etcd-s3-retention (s1=10, s2=20, s3=(default))"));
        assert!(messages.iter().all(|m| !m.contains("access-key")));
        assert_eq!(f[0].object_refs.len(), 3);
    }

    #[test]
    fn equal_settings_agents_and_other_flags_do_not_fire() {
        let state = TestCluster::k3s()
            .server_with(
                "s1",
                V,
                args(r#"["server","--node-name","s1","--etcd-snapshot-retention","9"]"#),
            )
            .server_with(
                "s2",
                V,
                args(r#"["server","--node-name","s2","--etcd-snapshot-retention","9"]"#),
            )
            .agent("a1", V)
            .build();
        assert!(analyse_etcd_config_drift(&state, Distro::K3s).is_empty());
        // Each server's own snapshot directory is its business.
        let dirs = TestCluster::k3s()
            .server_with("s1", V, args(r#"["server","--etcd-snapshot-dir","/a"]"#))
            .server_with("s2", V, args(r#"["server","--etcd-snapshot-dir","/b"]"#))
            .build();
        assert!(analyse_etcd_config_drift(&dirs, Distro::K3s).is_empty());
        // One server alone has nothing to disagree with.
        let one = TestCluster::k3s()
            .server_with(
                "s1",
                V,
                args(r#"["server","--etcd-snapshot-retention","9"]"#),
            )
            .build();
        assert!(analyse_etcd_config_drift(&one, Distro::K3s).is_empty());
    }
}
