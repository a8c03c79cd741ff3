//! Tables operators paste into issues and chats instead of a dump: `kubectl get lease -n
//! kube-system` (also `-A`, `-o wide`), `kubectl get etcdsnapshotfiles` ([`snapshot_table`])
//! and `k3s etcd-snapshot ls` output ([`snapshot_ls_table`]). A lease table names each lock's
//! holder and nothing else (no renew time, no duration, no resourceVersion), so it can show a
//! split and who holds what, never whether a lock is still renewed; a snapshot table shows
//! names, locations and sizes, never finalizers, metadata or S3 settings; the checks say so.
//! Text whose first line is not a table header (a fragment, a YAML dump) is left to the dump
//! parser, which refuses a fragment as before.

use super::holder_table::{self, HolderRow};
use super::snapshot_ls_table::{self, LsRow};
use super::snapshot_table::{self, SnapshotRow};
use super::{Built, Source};
use crate::distro::LOCK_NAMESPACE;

/// A table recognised by its header.
#[derive(Debug, PartialEq, Eq)]
pub enum PastedTable {
    /// `kubectl get leases`: NAME HOLDER AGE, with NAMESPACE first under `-A`.
    Leases(Vec<HolderRow>),
    /// `kubectl get etcdsnapshotfiles`: NAME SNAPSHOTNAME NODE LOCATION SIZE CREATIONTIME.
    SnapshotFiles(Vec<SnapshotRow>),
    /// `k3s etcd-snapshot ls`: Name Location Size Created.
    SnapshotLs(Vec<LsRow>),
}

/// The table `text` holds, when its first line (after blank lines and the shell prompt line
/// someone pasted with it) is a kubectl header.
pub fn detect(text: &str) -> Option<PastedTable> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text
        .lines()
        .skip_while(|l| l.trim().is_empty() || is_prompt(l));
    let header = lines.next()?;
    let words: Vec<&str> = header.split_whitespace().collect();
    if snapshot_ls_table::is_header(&words) {
        return Some(PastedTable::SnapshotLs(snapshot_ls_table::rows(lines)));
    }
    if !words.iter().all(|w| is_title(w)) {
        return None;
    }
    if holder_table::is_header(&words) {
        return Some(PastedTable::Leases(holder_table::rows(header, lines)));
    }
    if snapshot_table::is_header(&words) {
        return Some(PastedTable::SnapshotFiles(snapshot_table::rows(
            header, lines,
        )));
    }
    None
}

/// `$ kubectl get lease -n kube-system`, `# k3s etcd-snapshot ls`, `kubectl get cm`.
/// Also a shell prompt with a user and host (`root@s1:~# k3s etcd-snapshot ls`).
fn is_prompt(line: &str) -> bool {
    let line = line.trim_start();
    let command = |l: &str| {
        ["kubectl ", "k3s ", "rke2 ", "sudo "]
            .iter()
            .any(|c| l.starts_with(c))
    };
    line.starts_with(['$', '#', '%', '>'])
        || command(line)
        || ["$ ", "# "]
            .iter()
            .filter_map(|p| line.split_once(p))
            .any(|(_, rest)| command(rest.trim_start()))
}

/// kubectl's column titles: capitals, digits, `-` and `_` (`NOMINATED NODE`, `READINESS GATES`).
fn is_title(word: &str) -> bool {
    word.chars()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '-' || c == '_')
        && word.chars().any(|c| c.is_ascii_uppercase())
}

/// The table's objects into `source`, as far as the table shows them.
pub fn add(table: PastedTable, name: &str, path: &str, source: &mut Source) {
    match table {
        PastedTable::Leases(rows) => {
            let locks: Vec<&HolderRow> = rows
                .iter()
                .filter(|r| r.namespace == LOCK_NAMESPACE)
                .collect();
            for row in &locks {
                source.built.push(Built {
                    path: path.to_string(),
                    name: name.to_string(),
                    value: holder_table::lease(row),
                });
            }
            source.complete.push("Lease");
            source.holders_only = Some(name.to_string());
            source.notes.push(format!(
                "read {name} as a pasted `kubectl get leases` table: {} lock(s) in {LOCK_NAMESPACE}, \
                 holders only (no renew times, no durations)",
                locks.len()
            ));
        }
        PastedTable::SnapshotFiles(rows) => {
            for row in &rows {
                source.built.push(Built {
                    path: path.to_string(),
                    name: name.to_string(),
                    value: snapshot_table::snapshot_file(row),
                });
            }
            source.complete.push("ETCDSnapshotFile");
            source.snapshots_from_table = Some(name.to_string());
            source.notes.push(format!(
                "read {name} as a pasted `kubectl get etcdsnapshotfiles` table: {} snapshot(s), names, nodes, \
                 locations and sizes only (CREATIONTIME is printed as an age: no times, no finalizers, no \
                 metadata, no S3 settings)",
                rows.len()
            ));
        }
        PastedTable::SnapshotLs(rows) => {
            for row in &rows {
                source.built.push(Built {
                    path: path.to_string(),
                    name: name.to_string(),
                    value: snapshot_ls_table::snapshot_file(row),
                });
            }
            source.complete.push("ETCDSnapshotFile");
            source.snapshots_from_table = Some(name.to_string());
            source.snapshots_partial = true;
            source.notes.push(format!(
                "read {name} as pasted `etcd-snapshot ls` output: {} snapshot(s), names, locations, sizes and \
                 creation times only (no ETCDSnapshotFile names: each is named by its ConfigMap key; no nodes, \
                 finalizers, metadata or S3 settings)",
                rows.len()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leases(text: &str) -> Vec<HolderRow> {
        match detect(text) {
            Some(PastedTable::Leases(rows)) => rows,
            _ => panic!("not read as a lease table: {text:?}"),
        }
    }

    #[test]
    fn a_pasted_lease_table_with_its_prompt_crlf_and_trailing_blanks() {
        let text = "$ kubectl get lease -n kube-system\r\n\
NAME                      HOLDER                                                   AGE   \r\n\
k3s                       ip-172-31-10-11                                          41d   \r\n\
k3s-etcd                  ip-172-31-10-12                                          41d\r\n\
k3s-cloud-controller                                                               41d\r\n\
kube-controller-manager   ip-172-31-10-11_7c5f3e0a-5b1e-4d8e-9a8a-2b8f1d9c0e11   41d\r\n";
        let rows = leases(text);
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[0].holder, "ip-172-31-10-11");
        assert_eq!(rows[1].holder, "ip-172-31-10-12");
        assert_eq!(
            (rows[2].name.as_str(), rows[2].holder.as_str()),
            ("k3s-cloud-controller", "")
        );
        assert!(rows.iter().all(|r| r.namespace == "kube-system"));
    }

    #[test]
    fn all_namespaces_keeps_the_namespace_and_a_shifted_column_is_read_by_words() {
        let text = "NAMESPACE         NAME       HOLDER     AGE\n\
kube-node-lease   s1         s1         5d\n\
kube-system       k3s        ip-10-0-0-111   5d\n\
kube-system       k3s-etcd   s2         5d\n";
        let rows = leases(text);
        assert_eq!(rows[0].namespace, "kube-node-lease");
        assert_eq!(rows[1].holder, "ip-10-0-0-111");
        let mut source = Source::default();
        add(
            PastedTable::Leases(rows),
            "leases.txt",
            "leases.txt",
            &mut source,
        );
        assert_eq!(source.built.len(), 2, "only kube-system's locks");
        assert_eq!(source.holders_only.as_deref(), Some("leases.txt"));
        assert_eq!(source.complete, ["Lease"]);
    }

    #[test]
    fn a_pasted_snapshot_table_is_read_with_its_prompt() {
        let text = "$ kubectl get etcdsnapshotfiles\n\
NAME                      SNAPSHOTNAME          NODE   LOCATION          SIZE      CREATIONTIME\n\
local-snap-s1-1-5f6b1c    snap-s1-1             s1     file:///db/snap   5636128   41d\n";
        let Some(PastedTable::SnapshotFiles(rows)) = detect(text) else {
            panic!("not read as a snapshot table");
        };
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].snapshot_name, "snap-s1-1");
        let mut source = Source::default();
        add(
            PastedTable::SnapshotFiles(rows),
            "s.txt",
            "s.txt",
            &mut source,
        );
        assert_eq!(source.built.len(), 1);
        assert_eq!(source.complete, ["ETCDSnapshotFile"]);
        assert_eq!(source.snapshots_from_table.as_deref(), Some("s.txt"));
    }

    #[test]
    fn pasted_etcd_snapshot_ls_output_is_read_by_its_mixed_case_header() {
        let text = "root@s1:~# k3s etcd-snapshot ls\n\
Name                        Location                        Size      Created\n\
etcd-snapshot-s1-1700000000 file:///db/etcd-snapshot-s1-1700000000 5636128 2023-11-14T22:13:20Z\n";
        let Some(PastedTable::SnapshotLs(rows)) = detect(text) else {
            panic!("not read as etcd-snapshot ls output");
        };
        assert_eq!(rows.len(), 1);
        let mut source = Source::default();
        add(
            PastedTable::SnapshotLs(rows),
            "ls.txt",
            "ls.txt",
            &mut source,
        );
        assert_eq!(source.built.len(), 1);
        assert_eq!(source.snapshots_from_table.as_deref(), Some("ls.txt"));
        assert!(source.snapshots_partial);
        // The old `--s3` header shows no location: not read, refused as a fragment is.
        assert_eq!(
            detect("Name Size Created\nx 0 2023-11-14T22:13:20Z\n"),
            None
        );
    }

    #[test]
    fn fragments_dumps_and_other_tables_are_not_lease_tables() {
        for text in [
            "k3s        s1       3d\nk3s-etcd   s2       3d\n",
            "apiVersion: v1\nkind: List\nitems: []\n",
            "{\"kind\": \"List\"}",
            "# NAME HOLDER\napiVersion: v1\n",
            "NAME   STATUS   ROLES   AGE   VERSION\ns1     Ready    master  3d    v1.29.4+k3s1\n",
            "",
            "\r\n\u{3000}\n",
            "etcd-snapshot-s1-1700000000   etcd-snapshot-s1-1700000000   s1   file:///x   5636128   41d\n",
        ] {
            assert_eq!(detect(text), None, "{text:?}");
        }
    }
}
