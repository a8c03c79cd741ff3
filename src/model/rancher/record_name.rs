//! The record names Rancher derives before 2.14 (2.14 switched to a digest,
//! rancher/rancher#52463), and whether Kubernetes accepts them:
//! a name it refuses is a snapshot that never appears in Rancher (rancher/rancher#37904, #52529).

/// wrangler's `name.SafeConcatName`: the parts joined by `-`; from 64 bytes on, cut at 57 (56
/// when byte 56 is not `[a-z0-9]`) and ended with `-` and 5 (6) hex of sha256 of the whole.
pub(crate) fn safe_concat_name(parts: &[&str]) -> String {
    let full = parts.join("-");
    if full.len() < 64 {
        return full;
    }
    let digest = crate::model::digest::sha256_hex(full.as_bytes());
    let bytes = full.as_bytes();
    let (cut, hex) = if bytes[56].is_ascii_lowercase() || bytes[56].is_ascii_digit() {
        (57, 5)
    } else {
        (56, 6)
    };
    // Cutting a multi-byte character in half would not be a name either way; keep it text.
    let head = String::from_utf8_lossy(&bytes[..cut]);
    format!("{head}-{}", &digest[..hex])
}

/// 2.7–2.13: `<cluster>-<snapshot name, lower-cased, [^-.a-z0-9] as ->-<local|s3>`.
pub(crate) fn legacy_record_name(cluster: &str, snapshot_name: &str, s3: bool) -> String {
    let cleaned: String = snapshot_name
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    safe_concat_name(&[cluster, &cleaned, if s3 { "s3" } else { "local" }])
}

/// Why the API server would refuse `name` as an object name (DNS-1123 subdomain), if it would.
pub(crate) fn invalid_object_name(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("it is empty".into());
    }
    if name.len() > 253 {
        return Some(format!(
            "it is {} characters long (253 at most)",
            name.len()
        ));
    }
    for label in name.split('.') {
        let bytes = label.as_bytes();
        let edge = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
        if !edge(bytes.first()) || !edge(bytes.last()) {
            return Some(format!(
                "the part `{label}` does not start and end with a lower-case letter or digit"
            ));
        }
        if let Some(c) = label
            .chars()
            .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
        {
            return Some(format!("it holds `{c}`"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_are_joined() {
        assert_eq!(
            legacy_record_name("prod", "etcd-snapshot-S1_a-1717156800", false),
            "prod-etcd-snapshot-s1-a-1717156800-local"
        );
    }

    #[test]
    fn long_names_end_with_a_hash() {
        let name = legacy_record_name(
            "production-cluster",
            "etcd-snapshot-ip-10-0-0-11.eu-west-1.compute.internal-1717156800",
            true,
        );
        assert_eq!(name.len(), 63, "{name}");
        assert!(name.starts_with("production-cluster-etcd-snapshot-ip-10-0-0-11.eu-west-1.c"));
        assert_eq!(name.as_bytes()[57], b'-');
    }

    #[test]
    fn a_cut_on_a_dot_drops_it() {
        // Byte 56 is `.`: cut at 56, six hex.
        let head = "a".repeat(56);
        let name = safe_concat_name(&[&format!("{head}.bbbbbbbbbb")]);
        assert_eq!(name.len(), 63);
        assert!(name.starts_with(&format!("{head}-")));
    }

    #[test]
    fn object_names_follow_dns_1123() {
        assert!(invalid_object_name("prod-etcd-snapshot-1-local").is_none());
        assert!(invalid_object_name("prod-on-demand.-x-local").is_some());
        assert!(invalid_object_name("prod-..-local").is_some());
        assert!(invalid_object_name("").is_some());
    }
}
