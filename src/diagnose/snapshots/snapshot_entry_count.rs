//! The snapshot ConfigMap read from a pasted `kubectl get configmaps` table:
//! DATA says how many entries it holds, not which. Beside the ETCDSnapshotFiles, the count
//! is judged against how many of them k3s gives an entry (the analysis decides that per CR by
//! k3s's rules): fewer entries than that means at least the difference is missing, which ones
//! a count cannot say. Pruning at the 1 MiB limit needs the values' sizes, so it is never ruled
//! out; orphaned entries can stand in for missing ones, so a count that is high enough shows
//! nothing missing without showing that nothing is. Pure.

use serde::Serialize;

use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::model::configmap_listing::Listed;

/// The ConfigMap's entry count from a pasted table, against the snapshots that should have one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EntryCount {
    /// The pasted table the count was read from.
    pub from: String,
    /// Entries the ConfigMap holds (its DATA column).
    pub entries: usize,
    /// ETCDSnapshotFiles k3s gives an entry and should have written by now.
    pub should_have_entry: usize,
    /// How many of those have none at the least: the difference, when the count is short.
    pub without_entry_at_least: usize,
}

impl EntryCount {
    pub(crate) fn new(from: &str, entries: usize, should_have_entry: usize) -> EntryCount {
        EntryCount {
            from: from.to_string(),
            entries,
            should_have_entry,
            without_entry_at_least: should_have_entry.saturating_sub(entries),
        }
    }
}

fn entries(n: usize) -> String {
    format!("{n} entr{}", if n == 1 { "y" } else { "ies" })
}

/// The count short of the snapshots that should have an entry: the missing-entry finding with
/// count semantics. `None` when the count is not short.
/// `because`: why nothing writes them, when known (`. Cause: …`), else empty.
/// `rows`: the snapshots are table rows, which show no metadata; on versions that give an
/// entry only to snapshots with metadata, every row was counted as having it.
pub(super) fn short_count(
    object: &str,
    cm_name: &str,
    count: &EntryCount,
    because: &str,
    rows: bool,
) -> Option<Finding> {
    if count.without_entry_at_least == 0 {
        return None;
    }
    Some(
        Finding::new(
            Severity::Warning,
            FindingCode::SnapshotMissingFromConfigmap,
            object,
            format!(
                "{cm_name} holds {} ({}); {} ETCDSnapshotFiles should have one{}, so at least {} {} none. \
                 Which ones a count cannot show, nor whether k3s dropped the oldest at the 1 MiB limit (that \
                 needs the values' sizes){because}",
                entries(count.entries),
                count.from,
                count.should_have_entry,
                if rows {
                    " (counting each as having the metadata k3s needs to give it one, which a table row \
                     does not show)"
                } else {
                    ""
                },
                count.without_entry_at_least,
                if count.without_entry_at_least == 1 { "has" } else { "have" },
            ),
        )
        .fix(format!(
            "add `kubectl -n kube-system get configmap {cm_name} -o yaml` to name them; then k3sdoctor \
             snapshots backfill --fix"
        )),
    )
}

/// Known empty from a pasted table, said beside the names that makes certain:
/// ` (cm.txt shows it holds 0 entries)`; empty otherwise.
pub(super) fn known_empty(listed: Option<(&str, Listed)>, cm_name: &str) -> String {
    match listed {
        Some((file, Listed::Entries(0))) => format!(" ({file} shows it holds 0 entries)"),
        Some((file, Listed::Absent)) => format!(
            " ({file} lists every ConfigMap in kube-system and not {cm_name}: it does not exist)"
        ),
        _ => String::new(),
    }
}

/// What a pasted ConfigMap table shows of `cm_name` and what it cannot, said once.
/// `should_have_entry`: the count to judge against, `None` without ETCDSnapshotFiles.
pub(super) fn table_gap(
    file: &str,
    cm_name: &str,
    listed: Listed,
    should_have_entry: Option<usize>,
) -> Option<Finding> {
    let (shown, judged) = match listed {
        // Known empty: every entry is judged by name, as from the object.
        Listed::Absent | Listed::Entries(0) => return None,
        Listed::NotShown => (
            format!(
                "lists chosen ConfigMaps, not {cm_name}: whether it exists is not shown (a `kubectl get cm NAME` \
                 of another name says nothing about it)"
            ),
            String::new(),
        ),
        Listed::Entries(n) => (
            format!("shows that {cm_name} exists with {}", entries(n)),
            match should_have_entry {
                None => format!(
                    "; without ETCDSnapshotFiles whether {} is right cannot be judged",
                    entries(n)
                ),
                Some(e) if e <= n => format!(
                    "; {e} ETCDSnapshotFiles should have one, so the count shows none missing, but an orphaned \
                     entry can stand in for a missing one"
                ),
                Some(_) => String::new(),
            },
        ),
    };
    Some(
        Finding::new(
            Severity::Warning,
            FindingCode::DumpIncomplete,
            "dump",
            format!(
                "{file} is a pasted `kubectl get configmaps` table: it {shown}{judged}. A table shows entry \
                 counts only: which keys, their values and sizes, and whether entries are stale or orphaned \
                 were not checked"
            ),
        )
        .fix(format!(
            "add `kubectl -n kube-system get configmap {cm_name} -o yaml` to judge the entries"
        )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_count_is_at_least_the_difference_and_never_names_a_snapshot() {
        let count = EntryCount::new("cm.txt", 3, 12);
        assert_eq!(count.without_entry_at_least, 9);
        let f = short_count(
            "ConfigMap kube-system/k3s-etcd-snapshots",
            "k3s-etcd-snapshots",
            &count,
            "",
            false,
        )
        .unwrap();
        assert_eq!(f.code, FindingCode::SnapshotMissingFromConfigmap);
        assert!(f.message.contains("holds 3 entries (cm.txt); 12 ETCDSnapshotFiles should have one, so at least 9 have none"), "{}", f.message);
        assert!(f.message.contains("1 MiB"), "{}", f.message);
        assert!(
            !f.message.contains("table row"),
            "objects show their metadata"
        );
        assert!(
            f.listed().is_empty() && f.object_refs.is_empty(),
            "no per-key claim"
        );
        assert_eq!(
            short_count("x", "y", &EntryCount::new("c", 12, 12), "", false),
            None
        );
        assert_eq!(
            short_count("x", "y", &EntryCount::new("c", 13, 12), "", false),
            None
        );
    }

    #[test]
    fn the_gap_says_what_the_count_cannot_show() {
        let gap =
            |listed, e| table_gap("cm.txt", "k3s-etcd-snapshots", listed, e).map(|f| f.message);
        assert!(
            gap(Listed::Entries(5), None)
                .unwrap()
                .contains("without ETCDSnapshotFiles whether 5 entries is right cannot be judged")
        );
        assert!(
            gap(Listed::Entries(5), Some(5))
                .unwrap()
                .contains("orphaned entry can stand in")
        );
        assert!(
            gap(Listed::NotShown, None)
                .unwrap()
                .contains("whether it exists is not shown")
        );
        assert_eq!(
            gap(Listed::Entries(0), Some(3)),
            None,
            "known empty: judged by name"
        );
        assert_eq!(gap(Listed::Absent, Some(3)), None);
    }
}
