//! `<prog>.io/encryption-config-hash` on a control-plane Node: `<stage>-<sha256 of the
//! encryption config>` (k3s `pkg/secretsencrypt/config.go`). `<prog> secrets-encrypt status`
//! compares these across the control-plane Nodes ("Hash Match").

use crate::distro::Distro;

/// The stages k3s writes, in the order a rotation moves through them.
pub(crate) const STAGES: [&str; 7] = [
    "start",
    "prepare",
    "rotate",
    "rotate_keys",
    "reencrypt_request",
    "reencrypt_active",
    "reencrypt_finished",
];

pub(crate) fn annotation(distro: Distro) -> String {
    format!("{}.io/encryption-config-hash", distro.prog())
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EncryptionHash {
    pub stage: String,
    pub hash: String,
}

impl EncryptionHash {
    /// The value k3s wrote, or why k3s itself would refuse it (it splits on `-` and expects two
    /// parts).
    pub(crate) fn parse(value: &str) -> Result<EncryptionHash, String> {
        let parts: Vec<&str> = value.split('-').collect();
        match parts.as_slice() {
            [stage, hash] if STAGES.contains(stage) && !hash.is_empty() => Ok(EncryptionHash {
                stage: stage.to_string(),
                hash: hash.to_string(),
            }),
            [stage, _] => Err(format!("`{stage}` is no stage k3s writes")),
            _ => Err("not <stage>-<hash>".to_string()),
        }
    }

    /// The first 12 hex, as a person compares them.
    pub(crate) fn short_hash(&self) -> &str {
        self.hash.get(..12).unwrap_or(&self.hash)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_k3s_writes_and_refuses_what_it_refuses() {
        let h = EncryptionHash::parse(
            "reencrypt_finished-5f1c4ae36f3b21c8b4e1a8a5e0d3a2b1c9f8e7d6c5b4a3928170615243342516",
        )
        .unwrap();
        assert_eq!(h.stage, "reencrypt_finished");
        assert_eq!(h.short_hash(), "5f1c4ae36f3b");
        assert!(EncryptionHash::parse("start").is_err());
        assert!(
            EncryptionHash::parse("started-abc")
                .unwrap_err()
                .contains("no stage")
        );
        assert!(EncryptionHash::parse("start-a-b").is_err());
        assert_eq!(annotation(Distro::Rke2), "rke2.io/encryption-config-hash");
    }
}
