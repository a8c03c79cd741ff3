//! Names k3s derives for a snapshot: the ConfigMap data key (`GenerateConfigMapKey`) and the
//! 6-hex digest at the end of the CR name (`GenerateName`) — `pkg/etcd/snapshot/types.go`.

use super::snapshot_file::SnapshotFile;

/// `local-`/`s3-` + the file name with every character outside `[-._a-zA-Z0-9]` replaced by
/// `_`. Go's regexp replaces whole runes, so one non-ASCII character becomes one `_`.
pub(crate) fn data_key(file: &SnapshotFile) -> String {
    let prefix = if file.is_s3() { "s3" } else { "local" };
    format!("{prefix}-{}", key_name(file))
}

/// The other key k3s itself uses for a local snapshot of a node literally named `s3`: the
/// OnChange path keys by `NodeName == "s3"` (`GenerateConfigMapKey`), while reconcile and
/// onRemove key by `spec.s3 != nil` (`pkg/etcd/snapshot_controller.go`), so k3s flips between
/// `s3-…` and `local-…` for such a CR.
pub(crate) fn alternate_key(file: &SnapshotFile) -> Option<String> {
    (!file.is_s3() && file.node_name.as_str() == "s3").then(|| format!("s3-{}", key_name(file)))
}

/// The prefix `GenerateName` gives a CR: `s3-` when the record's `NodeName` is `s3`, which
/// is every S3 record (`FromETCDSnapshotFile` sets it) and also every local snapshot of a node
/// literally named `s3` (`pkg/etcd/snapshot/types.go`); `local-` otherwise.
fn name_prefix(file: &SnapshotFile) -> &'static str {
    if file.is_s3() || file.node_name.as_str() == "s3" {
        "s3-"
    } else {
        "local-"
    }
}

fn key_name(file: &SnapshotFile) -> String {
    file.snapshot_name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Keys k3s writes start with `local-` or `s3-`; the 2021 format used bare file names.
pub(crate) fn is_current_format(key: &str) -> bool {
    key.starts_with("local-") || key.starts_with("s3-")
}

/// The unix time k3s's pruning reads from a key: its trailing `-<digits>` after stripping
/// `.zip`; anything unparsable counts as 0, the oldest (`pruneConfigMap`).
pub(crate) fn key_timestamp(key: &str) -> i64 {
    let key = key.strip_suffix(".zip").unwrap_or(key);
    key.rsplit_once('-')
        .and_then(|(_, tail)| tail.parse::<i64>().ok())
        .unwrap_or(0)
}

/// First 6 hex characters of sha256(node + location), as the CR name ends.
pub(crate) fn name_digest(node: &str, location: &str) -> String {
    let mut hex = super::digest::sha256_hex(format!("{node}{location}").as_bytes());
    hex.truncate(6);
    hex
}

/// The prefix and digest `file`'s name should have, when it has not both.
fn expected_name_parts(file: &SnapshotFile) -> Option<(&'static str, String)> {
    let expected = name_digest(&file.node_name, &file.location);
    let actual = file
        .name
        .rsplit_once('-')
        .map(|(_, d)| d)
        .unwrap_or_default();
    let prefix = name_prefix(file);
    (actual != expected || !file.name.starts_with(prefix)).then_some((prefix, expected))
}

pub(crate) fn name_digest_matches(file: &SnapshotFile) -> bool {
    expected_name_parts(file).is_none()
}

/// Why a CR's name does not end with the digest of its node and location, if it does not.
/// The name's node is `spec.nodeName` (k3s's `NodeSource`); S3 records without node
/// information use `s3`.
#[cfg(test)]
pub(crate) fn name_digest_mismatch(file: &SnapshotFile) -> Option<String> {
    let mut why = String::new();
    // Writing into a String does not fail.
    let _ = write_digest_mismatch(file, &mut why);
    (!why.is_empty()).then_some(why)
}

/// Writes why `file`'s name does not match its digest; writes nothing when it does.
pub(crate) fn write_digest_mismatch(
    file: &SnapshotFile,
    out: &mut dyn std::fmt::Write,
) -> std::fmt::Result {
    match expected_name_parts(file) {
        None => Ok(()),
        Some((prefix, expected)) => write!(
            out,
            "name {} should start with {prefix} and end with -{expected} (sha256 of node {:?} + location {:?})",
            file.name, file.node_name, file.location
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, snapshot: &str, node: &str, location: &str, s3: bool) -> SnapshotFile {
        SnapshotFile {
            name: name.into(),
            snapshot_name: snapshot.into(),
            node_name: std::sync::Arc::new(node.into()),
            location: location.into(),
            s3: s3.then(Default::default),
            ..Default::default()
        }
    }

    #[test]
    fn keys_replace_every_character_outside_the_allowed_set() {
        let f = file("", "on-demand:node/1 é.zip", "n", "", false);
        assert_eq!(data_key(&f), "local-on-demand_node_1__.zip");
        let s3 = file("", "etcd-snapshot-server-1-1717156805", "s3", "", true);
        assert_eq!(data_key(&s3), "s3-etcd-snapshot-server-1-1717156805");
    }

    #[test]
    fn key_timestamps_as_pruning_reads_them() {
        assert_eq!(
            key_timestamp("local-etcd-snapshot-server-1-1717156805"),
            1_717_156_805
        );
        assert_eq!(
            key_timestamp("s3-on-demand-server-1-1717156805.zip"),
            1_717_156_805
        );
        assert_eq!(key_timestamp("local-weird"), 0);
        assert_eq!(key_timestamp("local-x-12ab"), 0);
    }

    #[test]
    fn digest_matches_the_facts_example() {
        // A name as k3s's `generateSnapshotName` (pkg/etcd/snapshot.go) makes it:
        // local-etcd-snapshot-server-1-1717156805-4056ed
        let location =
            "file:///var/lib/rancher/k3s/server/db/snapshots/etcd-snapshot-server-1-1717156805";
        assert_eq!(name_digest("server-1", location), "4056ed");
        let ok = file(
            "local-etcd-snapshot-server-1-1717156805-4056ed",
            "etcd-snapshot-server-1-1717156805",
            "server-1",
            location,
            false,
        );
        assert_eq!(name_digest_mismatch(&ok), None);
        let s3 = file(
            "s3-etcd-snapshot-server-1-1717156805-b84088",
            "etcd-snapshot-server-1-1717156805",
            "server-1",
            "s3://k3s-backups/cluster-a/etcd-snapshot-server-1-1717156805",
            true,
        );
        assert_eq!(name_digest_mismatch(&s3), None);
        let moved = file(
            "local-etcd-snapshot-server-1-1717156805-4056ed",
            "etcd-snapshot-server-1-1717156805",
            "server-2",
            location,
            false,
        );
        assert!(name_digest_mismatch(&moved).unwrap().contains("server-2"));
    }

    /// K3s names a local CR of a node called `s3` `s3-…`, as it keys it.
    #[test]
    fn a_local_snapshot_of_a_node_named_s3_is_named_s3_dash() {
        let location =
            "file:///var/lib/rancher/k3s/server/db/snapshots/etcd-snapshot-s3-1717156805";
        let digest = name_digest("s3", location);
        let named = |prefix: &str| {
            file(
                &format!("{prefix}etcd-snapshot-s3-1717156805-{digest}"),
                "etcd-snapshot-s3-1717156805",
                "s3",
                location,
                false,
            )
        };
        assert_eq!(name_digest_mismatch(&named("s3-")), None);
        let why = name_digest_mismatch(&named("local-")).unwrap();
        assert!(why.contains("should start with s3-"), "{why}");
        // Any other node keeps `local-`.
        let other = file(
            &format!(
                "s3-etcd-snapshot-s3-1717156805-{}",
                name_digest("s30", location)
            ),
            "etcd-snapshot-s3-1717156805",
            "s30",
            location,
            false,
        );
        assert!(
            name_digest_mismatch(&other)
                .unwrap()
                .contains("should start with local-")
        );
    }
}
