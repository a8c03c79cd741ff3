//! Tables operators paste into issues and chats instead of a dump: `kubectl get lease -n
//! kube-system` (also `-A`, `-o wide`), `kubectl get nodes` ([`node_table`]), `kubectl get
//! etcdsnapshotfiles` ([`snapshot_table`])
//! and `k3s etcd-snapshot ls` output ([`snapshot_ls_table`]). A lease table names each lock's
//! holder and nothing else (no renew time, no duration, no resourceVersion), so it can show a
//! split and who holds what, never whether a lock is still renewed; a snapshot table shows
//! names, locations and sizes, never finalizers, metadata or S3 settings; the checks say so.
//! Text whose first line is not a table header (a fragment, a YAML dump) is left to the dump
//! parser, which refuses a fragment as before.

use super::configmap_table::{self, ConfigMapTable};
use super::holder_table::{self, HolderRow};
use super::node_table::{self, NodeRow};
use super::snapshot_ls_table::{self, LsRow};
use super::snapshot_table::{self, SnapshotRow};
use super::{Built, Source};
use crate::distro::LOCK_NAMESPACE;
use crate::model::kinds::Kind;

/// A table recognised by its header.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum PastedTable {
    /// `kubectl get leases`: NAME HOLDER AGE, with NAMESPACE first under `-A`.
    Leases(Vec<HolderRow>),
    /// `kubectl get etcdsnapshotfiles`: NAME SNAPSHOTNAME NODE LOCATION SIZE CREATIONTIME.
    SnapshotFiles(Vec<SnapshotRow>),
    /// `k3s etcd-snapshot ls`: Name Location Size Created.
    SnapshotLs(Vec<LsRow>),
    /// `kubectl get configmaps`: NAME DATA AGE, with NAMESPACE first under `-A`.
    ConfigMaps(ConfigMapTable),
    /// `kubectl get nodes`: NAME STATUS ROLES AGE VERSION.
    Nodes(Vec<NodeRow>),
}

/// The tables one pasted file holds, in order, and the headers of tables k3sdoctor does not
/// read (`kubectl get nodes` pasted between them).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Pasted {
    pub tables: Vec<PastedTable>,
    pub skipped: Vec<String>,
}

/// One header with its rows, and the command line pasted above it.
struct Section<'a> {
    command: Option<&'a str>,
    header: &'a str,
    rows: Vec<&'a str>,
}

/// The tables `text` holds, when its first line (after blank lines and the shell prompt line
/// someone pasted with it) is a table header. People paste several commands' output into one
/// file: each header starts a table, and a prompt line ends one (what follows it before the
/// next header is that command's message, e.g. `No resources found`, and is not a row).
pub(super) fn detect(text: &str) -> Option<Pasted> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut sections: Vec<Section> = Vec::new();
    let mut command = None;
    let mut after_prompt = false;
    for line in text.lines() {
        // A Markdown code fence around a table copied from an issue is not part of it.
        if line.trim().is_empty() || is_code_fence(line) {
            continue;
        }
        if is_prompt(line) {
            command = Some(line);
            after_prompt = true;
        } else if is_header(line) {
            sections.push(Section {
                command: command.take(),
                header: line,
                rows: Vec::new(),
            });
            after_prompt = false;
        } else if sections.is_empty() {
            // Text before any header: a fragment or a dump, not a table.
            return None;
        } else if !after_prompt && let Some(section) = sections.last_mut() {
            section.rows.push(line);
        }
    }
    if sections.is_empty() {
        return None;
    }
    let mut pasted = Pasted {
        tables: Vec::new(),
        skipped: Vec::new(),
    };
    for section in sections {
        match table(&section) {
            Some(table) => pasted.tables.push(table),
            None => pasted.skipped.push(
                section
                    .header
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
        }
    }
    // A file of tables k3sdoctor reads none of is no input of its own, whatever their order.
    if pasted.tables.is_empty() {
        return None;
    }
    Some(pasted)
}

/// "```", "```console", "~~~".
fn is_code_fence(line: &str) -> bool {
    let line = line.trim();
    ["```", "~~~"].iter().any(|fence| {
        line.strip_prefix(fence)
            .is_some_and(|info| info.chars().all(|c| c.is_ascii_alphanumeric()))
    })
}

/// A kubectl header (capitalised titles) or `etcd-snapshot ls`'s.
fn is_header(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    snapshot_ls_table::is_header(&words) || (words.len() >= 2 && words.iter().all(|w| is_title(w)))
}

/// The section's table, when its header is one k3sdoctor reads.
fn table(section: &Section) -> Option<PastedTable> {
    let words: Vec<&str> = section.header.split_whitespace().collect();
    let rows = section.rows.iter().copied();
    if snapshot_ls_table::is_header(&words) {
        return Some(PastedTable::SnapshotLs(snapshot_ls_table::rows(rows)));
    }
    if holder_table::is_header(&words) {
        return Some(PastedTable::Leases(holder_table::rows(
            section.header,
            rows,
        )));
    }
    if snapshot_table::is_header(&words) {
        return Some(PastedTable::SnapshotFiles(snapshot_table::rows(
            section.header,
            rows,
        )));
    }
    if node_table::is_header(&words) {
        return Some(PastedTable::Nodes(node_table::rows(section.header, rows)));
    }
    if configmap_table::is_header(&words) {
        return Some(PastedTable::ConfigMaps(configmap_table::rows(
            section.header,
            section.command,
            rows,
        )));
    }
    None
}

/// `$ kubectl get lease -n kube-system`, `# k3s etcd-snapshot ls`, `kubectl get cm`.
/// Also a shell prompt with a user and host (`root@s1:~# k3s etcd-snapshot ls`). A bare
/// `k3s` or `rke2` line is a command only when a subcommand follows: a lease row of the lock
/// named `k3s` (`k3s   s1   41d`) is not one.
fn is_prompt(line: &str) -> bool {
    let line = line.trim_start();
    let command = |l: &str| {
        let mut words = l.split_whitespace();
        match words.next() {
            Some("kubectl" | "sudo") => true,
            Some("k3s" | "rke2") => {
                matches!(
                    words.next(),
                    Some("kubectl" | "etcd-snapshot" | "ctr" | "crictl")
                )
            }
            _ => false,
        }
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

/// Every table of a pasted file into `source`.
pub(super) fn add_all(pasted: Pasted, name: &str, path: &str, source: &mut Source) {
    for table in pasted.tables {
        add(table, name, path, source);
    }
    for header in pasted.skipped {
        source.notes.push(format!(
            "skipped a `{header}` table in {name}: not one k3sdoctor reads"
        ));
    }
}

/// The table's objects into `source`, as far as the table shows them.
pub(super) fn add(table: PastedTable, name: &str, path: &str, source: &mut Source) {
    match table {
        PastedTable::ConfigMaps(mut table) => {
            let scope = if table.listing.whole_namespace {
                "every ConfigMap in kube-system"
            } else {
                "chosen ConfigMaps only (a ConfigMap it does not list may exist)"
            };
            let unreadable = match table.unreadable {
                0 => String::new(),
                n => format!("; {n} row(s) not read (not NAME DATA AGE with a count)"),
            };
            source.notes.push(format!(
                "read {name} as a pasted `kubectl get configmaps` table: {} row(s), {scope}: {}; entry counts \
                 only (no keys, values or sizes){unreadable}",
                table.rows,
                configmap_table::describe(&table.listing)
            ));
            table.listing.file = name.to_string();
            source
                .configmap_listing
                .get_or_insert_with(Default::default)
                .merge(table.listing);
        }
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
            source.complete.push(Kind::Lease.name());
            source.holders_only = Some(name.to_string());
            source.notes.push(format!(
                "read {name} as a pasted `kubectl get leases` table: {} lock(s) in {LOCK_NAMESPACE}, \
                 holders only (no renew times, no durations)",
                locks.len()
            ));
        }
        PastedTable::Nodes(rows) => {
            for row in &rows {
                source.built.push(Built {
                    path: path.to_string(),
                    name: name.to_string(),
                    value: node_table::node(row),
                });
            }
            source.complete.push(Kind::Node.name());
            source.nodes_from_table = Some(name.to_string());
            source.notes.push(format!(
                "read {name} as a pasted `kubectl get nodes` table: {} node(s), names, roles, readiness and \
                 versions only (no annotations: hostname identities and etcd member names are not known)",
                rows.len()
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
            source.complete.push(Kind::SnapshotFile.name());
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
            source.complete.push(Kind::SnapshotFile.name());
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

    /// The first table of `text`.
    fn first(text: &str) -> Option<PastedTable> {
        detect(text)?.tables.into_iter().next()
    }

    fn leases(text: &str) -> Vec<HolderRow> {
        match first(text) {
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
        let Some(PastedTable::SnapshotFiles(rows)) = first(text) else {
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
        let Some(PastedTable::SnapshotLs(rows)) = first(text) else {
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
            "NAME          READY   STATUS    RESTARTS   AGE\ncoredns-abc   1/1     Running   0          3d\n",
            "",
            "\r\n\u{3000}\n",
            "etcd-snapshot-s1-1700000000   etcd-snapshot-s1-1700000000   s1   file:///x   5636128   41d\n",
        ] {
            assert_eq!(detect(text), None, "{text:?}");
        }
    }
}

#[cfg(test)]
mod section_tests;
