//! sha256 as lower-case hex, the form k3s, Rancher and rancher-system-agent write it in names
//! and checksums.

use sha2::{Digest, Sha256};

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
