//! `node-password-orphaned` and `serving-cert-frozen`, from the metadata of Secrets in
//! kube-system. Only names, times,
//! annotations and owners are read: k3sdoctor never holds a Secret's data.
//!
//! A node password Secret (`<node>.node-password.<prog>`) is made when a node first asks the
//! server for its certificates; if that Node never appears, or is deleted while the Secret
//! stays, the next join under that name fails with "Node password rejected" (k3s-io/k3s#13072,
//! #13088). Releases since November 2025 delete such Secrets themselves once they are more than
//! 10 minutes old (`MinOrphanSecretAge`, k3s `pkg/nodepassword/controller.go`; the gate is in
//! `version/node_password_cleanup.rs`), and own them by their Node so the garbage collector
//! deletes them with it.

use jiff::{SignedDuration, Timestamp};

use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::distro::Distro;
use crate::model::cluster_state::ClusterState;
use crate::model::collected::Collected;
use crate::model::secret_metadata::{NAMESPACE, SecretMeta};
use crate::version::NODE_PASSWORD_CLEANUP;

/// k3s's `MinOrphanSecretAge`: a node's Secret comes before its Node (containerd and the
/// kubelet start in between), so a younger Secret without a Node is a join in progress.
pub(crate) const MIN_ORPHAN_AGE: SignedDuration = SignedDuration::from_mins(10);

/// The annotation that freezes dynamiclistener's certificate (k3s-io/k3s#7312).
pub(crate) const STATIC_ANNOTATION: &str = "listener.cattle.io/static";

/// The annotations dynamiclistener records each SAN of the certificate in.
const SAN_ANNOTATION_PREFIX: &str = "listener.cattle.io/cn-";

/// Why the Secret checks cannot run on `state`, or `None` when they can.
pub(crate) fn secrets_not_checked(state: &ClusterState) -> Option<String> {
    match &state.secret_metadata {
        Collected::Read(_) => None,
        Collected::NotAsked => {
            Some("Secrets not read yet (serve reads their metadata every minute)".into())
        }
        lacking => lacking.why_not().map(str::to_string),
    }
}

fn secrets(state: &ClusterState) -> impl Iterator<Item = &SecretMeta> {
    state
        .secret_metadata
        .as_read()
        .into_iter()
        .flatten()
        .filter(|s| s.namespace == NAMESPACE || s.namespace.is_empty())
}

/// Whether every server runs a release that deletes orphans itself; `false` when no server
/// reports a version it can be told from.
fn every_server_cleans_up(state: &ClusterState) -> bool {
    let servers: Vec<_> = state.nodes().iter().filter(|n| n.is_server()).collect();
    !servers.is_empty()
        && servers.iter().all(|n| {
            n.version
                .as_ref()
                .and_then(|v| v.deletes_orphaned_node_passwords())
                == Some(true)
        })
}

pub(crate) fn analyse_node_passwords(
    state: &ClusterState,
    distro: Distro,
    now: Timestamp,
) -> Vec<Finding> {
    let Some(nodes) = &state.nodes else {
        return Vec::new();
    };
    let exists = |name: &str| nodes.iter().any(|n| n.name == name);
    let suffix = distro.node_password_suffix();
    let cleans_up = every_server_cleans_up(state);
    let prog = distro.prog();
    let mut findings = Vec::new();
    for secret in secrets(state) {
        let Some(node) = secret.name.strip_suffix(&suffix).filter(|n| !n.is_empty()) else {
            continue;
        };
        let owners: Vec<&str> = secret.owner_nodes().map(|o| o.name.as_str()).collect();
        let owner_gone = !owners.is_empty() && !owners.iter().any(|o| exists(o));
        if exists(node) && !owner_gone {
            continue;
        }
        // A missing creation time is the zero time to k3s's controller: old.
        let age = secret.created.map(|c| now.duration_since(c));
        if age.is_some_and(|a| a <= MIN_ORPHAN_AGE) {
            continue;
        }
        let aged = age
            .map(|a| format!(", created {}", crate::age::relative(a)))
            .unwrap_or_default();
        let whose = if exists(node) {
            format!("its owner Node {} no longer exists", owners.join(", "))
        } else {
            format!("Node {node} does not exist")
        };
        let object = format!("Secret {NAMESPACE}/{}", secret.name);
        let delete = format!("kubectl -n {NAMESPACE} delete secret {}", secret.name);
        let finding = if cleans_up {
            Finding::new(
                Severity::Info,
                FindingCode::NodePasswordOrphaned,
                object,
                format!(
                    "node password Secret {} is orphaned: {whose}{aged}. Every server runs a \
                     release that deletes such Secrets itself once they are 10 minutes old \
                     (checked once a minute), so {prog} will delete it; if it stays, the next \
                     join as {node} fails with \"Node password rejected\"",
                    secret.name
                ),
            )
            .fix(format!(
                "nothing to do unless it stays; then {delete} (and look for node password \
                 errors in the {prog} log of the server that leads the {prog} lock)"
            ))
        } else {
            Finding::new(
                Severity::Warning,
                FindingCode::NodePasswordOrphaned,
                object,
                format!(
                    "node password Secret {} is orphaned: {whose}{aged}. The next join of a \
                     node named {node} fails with \"Node password rejected\" (its new password \
                     does not match the hash kept here); {prog} deletes such Secrets itself \
                     only from {} on",
                    secret.name,
                    NODE_PASSWORD_CLEANUP.listed()
                ),
            )
            .fix(format!(
                "{delete} (after making sure no node named {node} is still meant to be part \
                 of the cluster)"
            ))
        };
        findings.push(finding);
    }
    findings
}

pub(crate) fn analyse_serving_cert_static(state: &ClusterState, distro: Distro) -> Vec<Finding> {
    let name = distro.serving_secret();
    let Some(secret) = secrets(state).find(|s| s.name == name) else {
        return Vec::new();
    };
    if secret
        .annotations
        .get(STATIC_ANNOTATION)
        .map(String::as_str)
        != Some("true")
    {
        return Vec::new();
    }
    let sans: Vec<String> = secret
        .annotations
        .iter()
        .filter(|(k, _)| k.starts_with(SAN_ANNOTATION_PREFIX))
        .map(|(_, v)| v.clone())
        .collect();
    let listed = if sans.is_empty() {
        "no SANs recorded in its listener.cattle.io/cn-* annotations".to_string()
    } else {
        format!("SANs {}", sans.join(", "))
    };
    let prog = distro.prog();
    let finding = Finding::new(
        Severity::Warning,
        FindingCode::ServingCertFrozen,
        format!("Secret {NAMESPACE}/{name}"),
        format!(
            "the apiserver's serving certificate {NAMESPACE}/{name} carries \
             {STATIC_ANNOTATION}: \"true\": dynamiclistener no longer renews it nor adds new \
             addresses to it (k3s-io/k3s#7312), so it expires where it is; {listed}"
        ),
    )
    .listing(&sans)
    .fix(format!(
        "kubectl -n {NAMESPACE} annotate secret {name} {STATIC_ANNOTATION}- (then \
         dynamiclistener renews it again; restart {prog} on the servers to have it reissued \
         now)"
    ));
    vec![finding]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::test_cluster::{TestCluster, now};

    fn old(cluster: TestCluster) -> TestCluster {
        cluster.secret("gone.node-password.k3s", 3600, &[], &[])
    }

    #[test]
    fn an_old_secret_whose_node_is_gone_is_a_warning_with_the_delete_command() {
        let state = old(TestCluster::k3s().server("s1", "v1.33.5+k3s1"))
            .secret("s1.node-password.k3s", 3600, &[], &[])
            .build();
        let f = analyse_node_passwords(&state, Distro::K3s, now());
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Warning);
        assert_eq!(f[0].object, "Secret kube-system/gone.node-password.k3s");
        assert!(
            f[0].message.contains("Node password rejected"),
            "{}",
            f[0].message
        );
        assert_eq!(
            f[0].remediation_command,
            [
                "kubectl",
                "-n",
                "kube-system",
                "delete",
                "secret",
                "gone.node-password.k3s"
            ]
        );
    }

    #[test]
    fn a_secret_younger_than_ten_minutes_is_a_join_in_progress() {
        let state = TestCluster::k3s()
            .server("s1", "v1.33.5+k3s1")
            .secret("new.node-password.k3s", 599, &[], &[])
            .build();
        assert!(analyse_node_passwords(&state, Distro::K3s, now()).is_empty());
    }

    #[test]
    fn when_every_server_cleans_up_it_is_info_and_says_k3s_deletes_it() {
        let state = old(TestCluster::k3s()
            .server("s1", "v1.34.2+k3s1")
            .server("s2", "v1.33.6+k3s1"))
        .build();
        let f = analyse_node_passwords(&state, Distro::K3s, now());
        assert_eq!(f[0].severity, Severity::Info);
        assert!(
            f[0].message.contains("k3s will delete it"),
            "{}",
            f[0].message
        );
        let mixed = old(TestCluster::k3s()
            .server("s1", "v1.34.2+k3s1")
            .server("s2", "v1.33.5+k3s1"))
        .build();
        assert_eq!(
            analyse_node_passwords(&mixed, Distro::K3s, now())[0].severity,
            Severity::Warning
        );
    }

    #[test]
    fn a_secret_whose_owner_node_is_gone_is_orphaned_too() {
        let state = TestCluster::k3s()
            .server("s1", "v1.33.5+k3s1")
            .server("s2", "v1.33.5+k3s1")
            // Named for a Node that exists again, owned by the one that was deleted.
            .secret("s1.node-password.k3s", 3600, &[], &["old-s1"])
            .secret("s2.node-password.k3s", 3600, &[], &["s2"])
            .build();
        let f = analyse_node_passwords(&state, Distro::K3s, now());
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].message.contains("owner Node old-s1"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn other_secrets_and_the_other_products_names_are_not_node_passwords() {
        let state = TestCluster::k3s()
            .server("s1", "v1.33.5+k3s1")
            .secret("gone.node-password.rke2", 3600, &[], &[])
            .secret("k3s-serving", 3600, &[], &[])
            .build();
        assert!(analyse_node_passwords(&state, Distro::K3s, now()).is_empty());
        assert_eq!(analyse_node_passwords(&state, Distro::Rke2, now()).len(), 1);
    }

    #[test]
    fn a_static_serving_certificate_is_frozen_and_lists_its_sans() {
        let annotations = [
            (STATIC_ANNOTATION, "true"),
            ("listener.cattle.io/cn-10.0.0.1", "10.0.0.1"),
            ("listener.cattle.io/cn-kubernetes", "kubernetes"),
            ("listener.cattle.io/fingerprint", "SHA1=AB"),
        ];
        let state = TestCluster::k3s()
            .secret("k3s-serving", 3600, &annotations, &[])
            .build();
        let f = analyse_serving_cert_static(&state, Distro::K3s);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].code, FindingCode::ServingCertFrozen);
        assert!(
            f[0].message.contains("SANs 10.0.0.1, kubernetes"),
            "{}",
            f[0].message
        );
        assert_eq!(
            f[0].remediation_command,
            [
                "kubectl",
                "-n",
                "kube-system",
                "annotate",
                "secret",
                "k3s-serving",
                "listener.cattle.io/static-"
            ]
        );
        let renewing = TestCluster::k3s()
            .secret("k3s-serving", 3600, &annotations[1..], &[])
            .build();
        assert!(analyse_serving_cert_static(&renewing, Distro::K3s).is_empty());
    }

    #[test]
    fn unread_secrets_are_not_checked_with_the_reason() {
        let state = TestCluster::k3s().without_secrets().build();
        assert!(
            secrets_not_checked(&state)
                .unwrap()
                .starts_with("Secrets not read")
        );
        assert!(secrets_not_checked(&TestCluster::k3s().build()).is_none());
    }
}
