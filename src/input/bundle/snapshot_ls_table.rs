//! `k3s etcd-snapshot ls` (also `rke2 etcd-snapshot ls`): a tabwriter table headed
//! `Name Location Size Created` (k3s's pkg/cli/etcdsnapshot/etcd_snapshot.go), one row per
//! snapshot: its snapshot name, location (a `file://` path or an `s3://` URL), size in bytes
//! and creation time in RFC 3339. It names no node and no ETCDSnapshotFile, and holds no
//! finalizers, metadata or S3 settings. Each row becomes an ETCDSnapshotFile named by the
//! ConfigMap key k3s gives it (`local-<name>` or `s3-<name>`), holding what the row shows.
//! Older releases printed `Name Size Created` under `--s3`, with no location: that header is
//! not read (an unknown location is not an empty one).

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::model::kinds::Kind;

/// One row, cells as printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LsRow {
    pub name: String,
    pub location: String,
    pub size: String,
    /// `None` when the cell is not an RFC 3339 time.
    pub created: Option<Timestamp>,
}

/// The header `ls` prints (tabwriter pads it with blanks).
pub(super) fn is_header(words: &[&str]) -> bool {
    words == ["Name", "Location", "Size", "Created"]
}

/// The rows under the header; blank lines are skipped. No cell holds a blank, so a row of four
/// words is read word by word; a row of three has an empty location (the multi-server S3 save
/// race leaves such records); any other row is dropped, never guessed.
pub(super) fn rows<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<LsRow> {
    lines
        .filter_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let (name, location, size, created) = match words[..] {
                [name, location, size, created] => (name, location, size, created),
                [name, size, created] => (name, "", size, created),
                _ => return None,
            };
            Some(LsRow {
                name: name.to_string(),
                location: location.to_string(),
                size: size.to_string(),
                created: created.parse().ok(),
            })
        })
        .collect()
}

/// An S3 snapshot: an `s3://` location, or none at all (only S3 saves leave one empty).
fn is_s3(row: &LsRow) -> bool {
    row.location.is_empty() || row.location.starts_with("s3://")
}

/// An ETCDSnapshotFile holding only what the row shows. Its name is the ConfigMap key k3s gives
/// the snapshot (the row does not name the CR); the node is `s3` for S3 snapshots (k3s's
/// NodeName for them) and unknown otherwise.
pub(super) fn snapshot_file(row: &LsRow) -> Value {
    let s3 = is_s3(row);
    let prefix = if s3 { "s3" } else { "local" };
    let mut file = json!({
        "apiVersion": Kind::SnapshotFile.row().api_version,
        "kind": Kind::SnapshotFile.name(),
        "metadata": {"name": format!("{prefix}-{}", row.name)},
        "spec": {
            "snapshotName": row.name,
            "nodeName": if s3 { "s3" } else { "" },
            "location": row.location,
        },
        "status": {"size": row.size},
    });
    if s3 {
        file["spec"]["s3"] = json!({});
    }
    if let Some(created) = row.created {
        file["status"]["creationTime"] = Value::String(created.to_string());
    }
    file
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_of_four_words_three_for_an_empty_location_and_ragged_rows_dropped() {
        let body = "\
etcd-snapshot-s1-1700000000   file:///var/lib/rancher/k3s/server/db/snapshots/etcd-snapshot-s1-1700000000   5636128   2023-11-14T22:13:20Z
etcd-snapshot-s1-1700003600                                                                                  0         2023-11-14T23:13:20Z

x
a b c d e
\u{3000}ä ö ü
";
        let rows = rows(body.lines());
        assert_eq!(rows.len(), 3, "{rows:?}");
        assert!(rows[0].location.starts_with("file:///"));
        assert_eq!(
            rows[0].created,
            Some("2023-11-14T22:13:20Z".parse().unwrap())
        );
        assert_eq!(
            (rows[1].location.as_str(), rows[1].size.as_str()),
            ("", "0")
        );
        assert_eq!(rows[2].created, None, "not a time: {:?}", rows[2]);
    }

    #[test]
    fn the_object_is_keyed_as_k3s_keys_it_and_holds_the_creation_time() {
        let row = LsRow {
            name: "on-demand-s1-1700000000".into(),
            location: "file:///db/on-demand-s1-1700000000".into(),
            size: "5636128".into(),
            created: Some("2023-11-14T22:13:20Z".parse().unwrap()),
        };
        let v = snapshot_file(&row);
        assert_eq!(v["metadata"]["name"], "local-on-demand-s1-1700000000");
        assert_eq!(v["status"]["creationTime"], "2023-11-14T22:13:20Z");
        assert!(v.pointer("/spec/s3").is_none());
        assert!(v.pointer("/metadata/finalizers").is_none());
        let s3 = snapshot_file(&LsRow {
            location: "".into(),
            created: None,
            ..row
        });
        assert_eq!(s3["metadata"]["name"], "s3-on-demand-s1-1700000000");
        assert_eq!(s3["spec"]["nodeName"], "s3");
        assert!(s3.pointer("/status/creationTime").is_none());
    }

    #[test]
    fn only_the_four_column_header_is_read() {
        assert!(is_header(&["Name", "Location", "Size", "Created"]));
        assert!(!is_header(&["Name", "Size", "Created"]));
        assert!(!is_header(&["NAME", "LOCATION", "SIZE", "CREATED"]));
    }
}
