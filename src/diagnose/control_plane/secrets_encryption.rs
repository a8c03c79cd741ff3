//! Whether every control-plane Node is at the same secrets-encryption stage and config, as
//! `<prog> secrets-encrypt status` checks on one server ("Hash Match"), for all servers at
//! once. From Node annotations alone.

use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::distro::Distro;
use crate::model::cluster_state::ClusterState;
use crate::model::encryption_hash::{EncryptionHash, annotation};

/// The findings, or why the check cannot judge: Nodes not read, or no control-plane Node
/// publishing the hash (encryption off, or a version that does not publish it).
pub(crate) fn analyse_secrets_encryption(
    state: &ClusterState,
    distro: Distro,
) -> Result<Vec<Finding>, String> {
    let Some(nodes) = &state.nodes else {
        return Err("Nodes not read".into());
    };
    let key = annotation(distro);
    let servers: Vec<(&str, Option<&str>)> = nodes
        .iter()
        .filter(|n| n.runs_control_plane() && !n.deleting)
        .map(|n| (n.name.as_str(), n.annotations.get(&key).map(String::as_str)))
        .collect();
    if servers.iter().all(|(_, value)| value.is_none()) {
        return Err(format!(
            "no control-plane Node carries {key}: secrets encryption is not enabled \
             (k3s writes it only with --secrets-encryption)"
        ));
    }
    let mut values: Vec<Option<&str>> = servers.iter().map(|(_, v)| *v).collect();
    values.sort_unstable();
    values.dedup();
    let malformed: Vec<String> = servers
        .iter()
        .filter_map(|(node, value)| {
            let why = EncryptionHash::parse((*value)?).err()?;
            Some(format!("{node} ({why})"))
        })
        .collect();
    if values.len() == 1 && malformed.is_empty() {
        return Ok(Vec::new());
    }
    let shown: Vec<String> = servers
        .iter()
        .map(|(node, value)| match value.map(EncryptionHash::parse) {
            Some(Ok(h)) => format!("{node} stage {} hash {}", h.stage, h.short_hash()),
            Some(Err(_)) => format!("{node} `{}`", value.unwrap_or_default()),
            None => format!("{node} (none)"),
        })
        .collect();
    let prog = distro.prog();
    let mut message = format!(
        "the control-plane Nodes carry different {key} values, so `{prog} secrets-encrypt \
         status` says Hash Match: false on each and the next secrets-encrypt command refuses to \
         run: {}",
        shown.join(", ")
    );
    if !malformed.is_empty() {
        message.push_str(&format!(
            "; {prog} cannot read the value of {}",
            malformed.join(", ")
        ));
    }
    Ok(vec![
        Finding::new(
            if malformed.is_empty() {
                Severity::Warning
            } else {
                Severity::Error
            },
            FindingCode::SecretsEncryptionDiverged,
            "Nodes",
            message,
        )
        .fix(format!(
            "restart {prog} on the servers whose stage or hash is behind, one at a time \
             (a secrets-encrypt prepare, rotate or rotate-keys takes effect on a server when it \
             restarts), then run `{prog} secrets-encrypt status` on one of them"
        )),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::test_cluster::TestCluster;
    use serde_json::json;

    const V: &str = "v1.31.5+k3s1";
    const A: &str = "prepare-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const B: &str = "start-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

    fn server(hash: Option<&str>) -> serde_json::Value {
        match hash {
            Some(h) => json!({"annotations": {"k3s.io/encryption-config-hash": h}}),
            None => json!({}),
        }
    }

    #[test]
    fn one_value_everywhere_is_a_match() {
        let state = TestCluster::k3s()
            .server_with("s1", V, server(Some(A)))
            .server_with("s2", V, server(Some(A)))
            .build();
        assert_eq!(
            analyse_secrets_encryption(&state, Distro::K3s),
            Ok(Vec::new())
        );
    }

    #[test]
    fn diverged_servers_are_named_with_stage_and_hash() {
        let state = TestCluster::k3s()
            .server_with("s1", V, server(Some(A)))
            .server_with("s2", V, server(Some(B)))
            .server_with("s3", V, server(None))
            .agent("a1", V)
            .build();
        let findings = analyse_secrets_encryption(&state, Distro::K3s).unwrap();
        assert_eq!(findings.len(), 1);
        let f = &findings[0];
        assert_eq!(
            (f.code, f.severity),
            (FindingCode::SecretsEncryptionDiverged, Severity::Warning)
        );
        assert!(
            f.message.contains(
                "s1 stage prepare hash aaaaaaaaaaaa, s2 stage start hash bbbbbbbbbbbb, s3 (none)"
            ),
            "{}",
            f.message
        );
        assert!(!f.message.contains("a1"));
    }

    #[test]
    fn a_value_k3s_cannot_read_is_an_error() {
        let state = TestCluster::k3s()
            .server_with("s1", V, server(Some("reencrypt-active-x")))
            .build();
        let findings = analyse_secrets_encryption(&state, Distro::K3s).unwrap();
        assert_eq!(findings[0].severity, Severity::Error);
    }

    #[test]
    fn no_hash_anywhere_is_not_judged() {
        let state = TestCluster::k3s().server("s1", V).build();
        let why = analyse_secrets_encryption(&state, Distro::K3s).unwrap_err();
        assert!(why.contains("secrets encryption is not enabled"));
    }
}
