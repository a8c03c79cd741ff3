//! `node-args-secret-exposed`: a `<prog>.io/node-args` or `node-env` annotation holding a
//! secret k3s did not replace by `********` (pkg/nodeconfig/nodeconfig.go `isSecret`). Every
//! Node is judged, agents too: anyone who can read Nodes reads the annotation. The message
//! names the setting, never its value. Pure.

use super::etcd_settings::node_refs;
use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::distro::Distro;
use crate::model::cluster_state::ClusterState;
use crate::model::node_args::exposed_env_secrets;

pub(crate) fn analyse_node_args_secrets(state: &ClusterState, distro: Distro) -> Vec<Finding> {
    let prog = distro.prog();
    let mut findings = Vec::new();
    for node in state.nodes() {
        let mut exposed = Vec::new();
        let mut annotations = Vec::new();
        if let Some(Ok(args)) = node.node_args(distro) {
            let found = args.exposed_secrets();
            if !found.is_empty() {
                annotations.push(format!("{prog}.io/node-args"));
            }
            exposed.extend(found);
        }
        if let Some(Ok(env)) = node.node_env(distro) {
            let found = exposed_env_secrets(&env);
            if !found.is_empty() {
                annotations.push(format!("{prog}.io/node-env"));
            }
            exposed.extend(found);
        }
        if exposed.is_empty() {
            continue;
        }
        let settings: Vec<String> = exposed
            .iter()
            .map(|s| format!("{} ({})", s.setting, s.why))
            .collect();
        let mut remove: Vec<String> = annotations.iter().map(|a| format!("{a}-")).collect();
        // Without its hash k3s writes the annotations again at its next start
        // (nodeconfig.go compares the hash before patching).
        remove.push(format!("{prog}.io/node-config-hash-"));
        findings.push(
            Finding::new(
                Severity::Error,
                FindingCode::NodeArgsSecretExposed,
                format!("Node {}", node.name),
                format!(
                    "Node {}'s {} holds an unredacted secret value for {}: anyone who can read Nodes can read it",
                    node.name,
                    annotations.join(" and "),
                    settings.join(", ")
                ),
            )
            .about(node_refs([node.name.as_str()]))
            .fix(format!(
                "kubectl annotate node {} {} (hides it now; k3s writes both again at its next start), then rotate \
                 the secret and take it off the command line and config file (S3 credentials: \
                 --etcd-s3-config-secret; the token: --token-file), and restart {} on that node",
                node.name,
                remove.join(" "),
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

    fn with_args(args: &str, env: &str) -> serde_json::Value {
        json!({"annotations": {"k3s.io/node-args": args, "k3s.io/node-env": env}})
    }

    #[test]
    fn an_unredacted_session_token_fires_and_never_prints_the_value() {
        let state = TestCluster::k3s()
            .server_with(
                "s1",
                V,
                with_args(
                    r#"["server","--etcd-s3-session-token","FwoGZXIvYXdzEXAMPLE"]"#,
                    "{}",
                ),
            )
            .build();
        let f = analyse_node_args_secrets(&state, Distro::K3s);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Error);
        assert!(
            f[0].message.contains("--etcd-s3-session-token"),
            "{}",
            f[0].message
        );
        let json = serde_json::to_string(&f[0]).unwrap();
        assert!(!json.contains("FwoGZXIvYXdzEXAMPLE"), "{json}");
        assert_eq!(
            f[0].remediation_command,
            [
                "kubectl",
                "annotate",
                "node",
                "s1",
                "k3s.io/node-args-",
                "k3s.io/node-config-hash-"
            ]
        );
    }

    #[test]
    fn rke2_nodes_carry_rke2_annotations() {
        let state = TestCluster::new(Distro::Rke2)
            .server_with(
                "s1",
                "v1.34.6+rke2r1",
                json!({"annotations": {"rke2.io/node-args": r#"["server","--etcd-s3-session-token","abc123"]"#}}),
            )
            .build();
        let f = analyse_node_args_secrets(&state, Distro::Rke2);
        assert_eq!(f.len(), 1);
        assert!(f[0].message.contains("rke2.io/node-args"));
        assert!(f[0].remediation.contains("restart rke2-server"));
        // The k3s annotation name means nothing on RKE2.
        assert!(analyse_node_args_secrets(&state, Distro::K3s).is_empty());
    }

    #[test]
    fn what_k3s_redacts_does_not_fire() {
        let state = TestCluster::k3s()
            .server_with(
                "s1",
                V,
                with_args(
                    r#"["server","--token","********","-t","********","--etcd-s3-session-token","********"]"#,
                    r#"{"K3S_TOKEN":"********"}"#,
                ),
            )
            .server("s2", V)
            .build();
        assert!(analyse_node_args_secrets(&state, Distro::K3s).is_empty());
    }

    #[test]
    fn a_single_dash_token_from_before_the_fix_and_an_env_secret_fire() {
        let state = TestCluster::k3s()
            .server_with(
                "s1",
                "v1.33.9+k3s1",
                with_args(
                    r#"["server","-t=K10abc::server:pw"]"#,
                    r#"{"K3S_ETCD_S3_SESSION_TOKEN":"x"}"#,
                ),
            )
            .build();
        let f = analyse_node_args_secrets(&state, Distro::K3s);
        assert_eq!(f.len(), 1);
        assert!(
            f[0].message.contains("-t (") && f[0].message.contains("K3S_ETCD_S3_SESSION_TOKEN")
        );
        assert!(
            f[0].message
                .contains("k3s.io/node-args and k3s.io/node-env")
        );
        assert!(f[0].remediation.contains("k3s.io/node-env-"));
    }
}
