//! `secrets-encryption-failed` and `secrets-encryption-stuck`: what the re-encryption
//! controller records on the Nodes (k3s `pkg/secretsencrypt/controller.go`),
//! read beside the servers' encryption-config-hash
//! stage.

use jiff::{SignedDuration, Timestamp};

use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::distro::Distro;
use crate::model::cluster_state::ClusterState;
use crate::model::encryption_hash::{EncryptionHash, annotation};

const ERROR: &str = "SecretsUpdateError";
/// The Events that show a re-encryption moving: its start, and one every 10 Secrets.
const MOVING: [&str; 2] = ["SecretsProgress", "SecretsUpdateStart"];
const STUCK_STAGES: [&str; 2] = ["reencrypt_request", "reencrypt_active"];
const FAILED_WITHIN: SignedDuration = SignedDuration::from_hours(24);
const STUCK_AFTER: SignedDuration = SignedDuration::from_hours(1);

pub(crate) fn analyse_secrets_reencrypt(
    state: &ClusterState,
    distro: Distro,
    now: Timestamp,
) -> Vec<Finding> {
    let Some(events) = state.node_events.as_read() else {
        return Vec::new();
    };
    let prog = distro.prog();
    let mut findings: Vec<Finding> = events
        .iter()
        .filter(|e| e.reason == ERROR)
        .filter(|e| {
            e.last_seen
                .is_some_and(|t| now.duration_since(t) <= FAILED_WITHIN)
        })
        .map(|e| {
            let when = e
                .last_seen
                .map(|t| crate::age::relative(now.duration_since(t)))
                .unwrap_or_default();
            Finding::new(
                Severity::Error,
                FindingCode::SecretsEncryptionFailed,
                format!("Node {}", e.node),
                format!(
                    "the secrets re-encryption on {} failed {when}{}: {}",
                    e.node,
                    if e.count > 1 {
                        format!(" ({} times)", e.count)
                    } else {
                        String::new()
                    },
                    e.message
                ),
            )
            .fix(format!(
                "{prog} secrets-encrypt status on {}; fix what the error names (a hash that \
                 differs between servers: restart {prog} on the servers that are behind), then \
                 run the secrets-encrypt step again",
                e.node
            ))
        })
        .collect();
    let key = annotation(distro);
    for node in state.nodes().iter().filter(|n| n.runs_control_plane()) {
        let Some(Ok(hash)) = node.annotations.get(&key).map(|v| EncryptionHash::parse(v)) else {
            continue;
        };
        if !STUCK_STAGES.contains(&hash.stage.as_str()) {
            continue;
        }
        let newest = events
            .iter()
            .filter(|e| e.node == node.name && MOVING.contains(&e.reason.as_str()))
            .max_by_key(|e| e.last_seen);
        let last = newest.and_then(|e| e.last_seen);
        if last.is_some_and(|t| now.duration_since(t) <= STUCK_AFTER) {
            continue;
        }
        let since = match (newest, last) {
            (Some(e), Some(t)) => format!(
                "its newest {} Event is from {} ({})",
                e.reason,
                crate::age::relative(now.duration_since(t)),
                e.message
            ),
            _ => "no SecretsProgress or SecretsUpdateStart Event is recorded for it".into(),
        };
        findings.push(
            Finding::new(
                Severity::Warning,
                FindingCode::SecretsEncryptionStuck,
                format!("Node {}", node.name),
                format!(
                    "{} is at secrets-encryption stage {} and {since}: the re-encryption is not \
                     moving (k3s-io/k3s#5489)",
                    node.name, hash.stage
                ),
            )
            .fix(format!(
                "{prog} secrets-encrypt status on {}; look for SecretsUpdateError in `kubectl \
                 get events -n default` and the {prog} log, restart {prog} on that server, and \
                 when the stage stays, {prog} secrets-encrypt reencrypt --force",
                node.name
            )),
        );
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::test_cluster::{TestCluster, now};
    use serde_json::json;

    const V: &str = "v1.31.5+k3s1";
    const ACTIVE: &str =
        "reencrypt_active-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

    fn at(stage: &str) -> TestCluster {
        TestCluster::k3s().server_with(
            "s1",
            V,
            json!({"annotations": {"k3s.io/encryption-config-hash": stage}}),
        )
    }

    #[test]
    fn a_recent_error_is_an_error_and_an_old_one_is_history() {
        let msg = "invalid hash: abc found on node s2";
        let state = at(ACTIVE)
            .node_event("s1", ERROR, msg, 3600)
            .node_event("s1", "SecretsProgress", "reencrypted 10 secrets", 60)
            .build();
        let f = analyse_secrets_reencrypt(&state, Distro::K3s, now());
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].code, f[0].severity),
            (FindingCode::SecretsEncryptionFailed, Severity::Error)
        );
        assert!(f[0].message.contains(msg) && f[0].message.contains("s1"));
        let old = at(ACTIVE)
            .node_event("s1", ERROR, msg, 25 * 3600)
            .node_event("s1", "SecretsProgress", "reencrypted 10 secrets", 60)
            .build();
        assert!(analyse_secrets_reencrypt(&old, Distro::K3s, now()).is_empty());
    }

    #[test]
    fn a_stage_that_has_not_moved_for_an_hour_is_stuck() {
        let state = at(ACTIVE)
            .node_event("s1", "SecretsProgress", "reencrypted 20 secrets", 2 * 3600)
            .build();
        let f = analyse_secrets_reencrypt(&state, Distro::K3s, now());
        assert_eq!(
            (f[0].code, f[0].severity),
            (FindingCode::SecretsEncryptionStuck, Severity::Warning)
        );
        assert!(
            f[0].message.contains("stage reencrypt_active"),
            "{}",
            f[0].message
        );
        let silent = at(ACTIVE).build();
        assert_eq!(
            analyse_secrets_reencrypt(&silent, Distro::K3s, now()).len(),
            1
        );
    }

    #[test]
    fn a_moving_or_finished_stage_and_unread_events_are_no_finding() {
        let moving = at(ACTIVE)
            .node_event("s1", "SecretsUpdateStart", "started", 300)
            .build();
        assert!(analyse_secrets_reencrypt(&moving, Distro::K3s, now()).is_empty());
        let done = at("reencrypt_finished-aaaa").build();
        assert!(analyse_secrets_reencrypt(&done, Distro::K3s, now()).is_empty());
        let unread = at(ACTIVE).without_events().build();
        assert!(analyse_secrets_reencrypt(&unread, Distro::K3s, now()).is_empty());
    }
}
