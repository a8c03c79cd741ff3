//! `kubectl get etcdsnapshotfiles`: the CRD's printer columns NAME, SNAPSHOTNAME, NODE,
//! LOCATION, SIZE, CREATIONTIME (the CRD's additionalPrinterColumns, as k3s installs it; see
//! ../shared/envtest/manifests/crd-etcdsnapshotfile.yaml). CREATIONTIME is a `date`
//! column, which kubectl prints as an age (`41d`), so a row gives no absolute time; it has no
//! finalizers, deletion mark, metadata, status.error or S3 settings either. Each row becomes an
//! ETCDSnapshotFile holding what the row shows and nothing else.

use serde_json::{Value, json};

use super::holder_table::{cells, cells_at};
use crate::model::kinds::Kind;

/// One row, cells as printed (`""` for an empty one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SnapshotRow {
    pub name: String,
    pub snapshot_name: String,
    pub node: String,
    pub location: String,
    pub size: String,
}

/// The CRD's printer columns: NAME and LOCATION are enough to tell the table.
pub(super) fn is_header(words: &[&str]) -> bool {
    words.contains(&"NAME")
        && words.contains(&"SNAPSHOTNAME")
        && words.contains(&"LOCATION")
        && words.contains(&"NODE")
}

/// The rows under `header`; blank lines are skipped, a row without a name is dropped. A row
/// with fewer words than titles (an empty location) is read by column position; it never
/// panics on a ragged row.
pub(super) fn rows<'a>(header: &str, lines: impl Iterator<Item = &'a str>) -> Vec<SnapshotRow> {
    let titles = cells_at(header);
    lines
        .filter(|l| !l.trim().is_empty())
        .filter_map(|row| {
            let cells = cells(&titles, row);
            let column = |title: &str| -> String {
                titles
                    .iter()
                    .position(|(_, w)| *w == title)
                    .and_then(|at| cells.get(at).cloned())
                    .filter(|c| c != "<none>")
                    .unwrap_or_default()
            };
            let name = column("NAME");
            (!name.is_empty()).then(|| SnapshotRow {
                name,
                snapshot_name: column("SNAPSHOTNAME"),
                node: column("NODE"),
                location: column("LOCATION"),
                size: column("SIZE"),
            })
        })
        .collect()
}

/// An ETCDSnapshotFile holding only what the row shows: no creation time (the table prints
/// an age), no finalizers, no metadata, no S3 settings, no error.
pub(super) fn snapshot_file(row: &SnapshotRow) -> Value {
    let mut file = json!({
        "apiVersion": Kind::SnapshotFile.row().api_version,
        "kind": Kind::SnapshotFile.name(),
        "metadata": {"name": row.name},
        "spec": {
            "snapshotName": row.snapshot_name,
            "nodeName": row.node,
            "location": row.location,
        },
        "status": {"size": row.size},
    });
    if is_s3(row) {
        // An empty `spec.s3` marks the record as S3 (its ConfigMap key starts `s3-`) without
        // claiming any setting: the table shows none.
        file["spec"]["s3"] = json!({});
    }
    file
}

/// An S3 record: its location is an `s3://` URL, or its node is `s3` (k3s's NodeName for
/// S3 records, pkg/etcd/snapshot/types.go) and it is not a local file (a node literally named
/// `s3` has `file://` locations).
fn is_s3(row: &SnapshotRow) -> bool {
    row.location.starts_with("s3://") || (row.node == "s3" && !row.location.starts_with("file://"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "NAME                                          SNAPSHOTNAME                     NODE     LOCATION                                                              SIZE      CREATIONTIME";

    #[test]
    fn rows_read_word_by_word_and_an_empty_location_by_position() {
        let body = "\
local-on-demand-s1-1700000000-5f6b1c      on-demand-s1-1700000000          s1       file:///var/lib/rancher/k3s/server/db/snapshots/on-demand-s1-1700000000   5636128   41d
s3-etcd-snapshot-s1-1700003600-e3b0c4     etcd-snapshot-s1-1700003600      s3                                                                             0         40d
";
        let rows = rows(HEADER, body.lines());
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].node, "s1");
        assert_eq!(rows[0].size, "5636128");
        assert!(rows[0].location.starts_with("file:///"));
        assert_eq!(rows[1].location, "", "{:?}", rows[1]);
        assert_eq!(rows[1].size, "0");
        assert_eq!(rows[1].node, "s3");
    }

    #[test]
    fn ragged_rows_never_panic_and_a_nameless_row_is_dropped() {
        let body = "x\n   \nx y z w v u t s r\n\u{3000}ä ö\n";
        let rows = rows(HEADER, body.lines());
        assert_eq!(rows.len(), 3);
        assert!(rows.iter().all(|r| !r.name.is_empty()));
        assert!(super::rows("NAME", "".lines()).is_empty());
    }

    #[test]
    fn the_object_holds_no_time_no_finalizer_and_no_s3_settings() {
        let row = SnapshotRow {
            name: "n".into(),
            snapshot_name: "s".into(),
            node: "s1".into(),
            location: "".into(),
            size: "0".into(),
        };
        let v = snapshot_file(&row);
        assert!(v.pointer("/metadata/creationTimestamp").is_none());
        assert!(v.pointer("/metadata/finalizers").is_none());
        assert!(v.pointer("/spec/s3").is_none());
        assert_eq!(v["status"]["size"], "0");
        let s3 = |node: &str, location: &str| {
            let row = SnapshotRow {
                node: node.into(),
                location: location.into(),
                ..row.clone()
            };
            snapshot_file(&row).pointer("/spec/s3").cloned()
        };
        assert_eq!(s3("s1", "s3://b/k/x"), Some(json!({})));
        assert_eq!(
            s3("s3", ""),
            Some(json!({})),
            "the save race's empty records"
        );
        assert_eq!(s3("s3", "file:///db/x"), None, "a node named s3");
    }
}
