//! The Rancher logs collector's `kubectl get leases -A -o wide`: a table, not objects. It
//! names each lock's holder and nothing else (no renew time, no duration), so it can show a
//! split and who holds what, never whether a lock is still renewed.

use serde_json::{Value, json};

use crate::model::kinds::Kind;

/// One row: namespace, name, holder (`""` for none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct HolderRow {
    pub namespace: String,
    pub name: String,
    pub holder: String,
}

/// The rows of the table, or `None` when `text` holds no lease table (kubectl printed an
/// error, or nothing): then the Leases were not collected, which is not "there are none".
pub(super) fn parse(text: &str) -> Option<Vec<HolderRow>> {
    let mut lines = text
        .lines()
        .skip_while(|l| !is_header(&l.split_whitespace().collect::<Vec<_>>()));
    let header = lines.next()?;
    Some(rows(header, lines))
}

/// `kubectl get leases` prints NAME and HOLDER (and NAMESPACE with `-A`), also with `-o wide`.
pub(super) fn is_header(words: &[&str]) -> bool {
    words.contains(&"NAME") && words.contains(&"HOLDER")
}

/// The rows under `header`; blank lines are skipped, a row without a name is dropped.
pub(super) fn rows<'a>(header: &str, lines: impl Iterator<Item = &'a str>) -> Vec<HolderRow> {
    let titles = cells_at(header);
    lines
        .filter(|l| !l.trim().is_empty())
        .filter_map(|row| {
            let cells = cells(&titles, row);
            let column = |title: &str| -> Option<String> {
                let at = titles.iter().position(|(_, w)| *w == title)?;
                cells.get(at).cloned()
            };
            let holder = column("HOLDER").unwrap_or_default();
            Some(HolderRow {
                // `kubectl -n kube-system get leases` has no NAMESPACE column.
                namespace: column("NAMESPACE")
                    .filter(|n| !n.is_empty())
                    .unwrap_or_else(|| "kube-system".into()),
                name: column("NAME").filter(|n| !n.is_empty())?,
                holder: if holder == "<none>" {
                    String::new()
                } else {
                    holder
                },
            })
        })
        .collect()
}

/// Each blank-separated word of `line` with the column (in characters) it starts at.
pub(super) fn cells_at(line: &str) -> Vec<(usize, &str)> {
    let mut found = Vec::new();
    let mut start = None;
    for (column, (at, c)) in line.char_indices().enumerate() {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some((column, at)),
            (true, Some((col, from))) => {
                found.push((col, &line[from..at]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some((col, from)) = start {
        found.push((col, &line[from..]));
    }
    found
}

/// The cells of `row` under `titles`. No cell of a lease table holds a blank (names, holder
/// identities and one-token ages), so a row with a word per title is read word by word, even
/// when a redacted or wide value has shifted it off the header's columns.
/// A row with fewer words has empty cells (a released lock has no holder): each word goes to
/// the nearest title still free, keeping the order. Words beyond the titles are ignored.
pub(super) fn cells(titles: &[(usize, &str)], row: &str) -> Vec<String> {
    let words = cells_at(row);
    let mut cells = vec![String::new(); titles.len()];
    if words.len() >= titles.len() {
        for (cell, (_, word)) in cells.iter_mut().zip(&words) {
            *cell = (*word).to_string();
        }
        return cells;
    }
    // Cells that line up with the titles are read by position: whatever is missing is blank.
    if words
        .iter()
        .all(|(column, _)| titles.iter().any(|(at, _)| at == column))
    {
        for (column, word) in &words {
            if let Some(at) = titles.iter().position(|(title_at, _)| title_at == column) {
                cells[at] = (*word).to_string();
            }
        }
        return cells;
    }
    // Off the columns, a row one word short ending in something that is no age (a table pasted
    // into an issue, spacing lost, and the AGE cut: `rke2   ip-172-1`) lacks its last cell:
    // word by word.
    if words.len() + 1 == titles.len()
        && titles.last().is_some_and(|(_, title)| *title == "AGE")
        && words.last().is_some_and(|(_, word)| !looks_like_age(word))
    {
        for (cell, (_, word)) in cells.iter_mut().zip(&words) {
            *cell = (*word).to_string();
        }
        return cells;
    }
    // The holder is the only other cell that can be empty (a released lock), so a row one word
    // short that ends in an age lacks the holder, wherever a redaction has shifted its words.
    if let Some(holder) = titles.iter().position(|(_, title)| *title == "HOLDER")
        && words.len() + 1 == titles.len()
    {
        let others = (0..titles.len()).filter(|&at| at != holder);
        for (at, (_, word)) in others.zip(&words) {
            cells[at] = (*word).to_string();
        }
        return cells;
    }
    let mut next = 0;
    for (i, (column, word)) in words.iter().enumerate() {
        // Leave a title for each word still to come.
        let last = titles.len() - (words.len() - i);
        let Some(at) = (next..=last).min_by_key(|&t| titles[t].0.abs_diff(*column)) else {
            break;
        };
        cells[at] = (*word).to_string();
        next = at + 1;
    }
    cells
}

/// kubectl's ages: `41d`, `3h12m`, `9m26s`, `2y105d`, and `<unknown>` or `<invalid>`.
fn looks_like_age(word: &str) -> bool {
    if word == "<unknown>" || word == "<invalid>" {
        return true;
    }
    let mut digits = false;
    let mut units = false;
    for c in word.chars() {
        match c {
            '0'..='9' => digits = true,
            's' | 'm' | 'h' | 'd' | 'y' if digits => {
                units = true;
                digits = false;
            }
            _ => return false,
        }
    }
    units && !digits
}

/// A Lease holding only what the table shows.
pub(super) fn lease(row: &HolderRow) -> Value {
    let mut lease = json!({
        "apiVersion": "coordination.k8s.io/v1",
        "kind": Kind::Lease.name(),
        "metadata": {"name": row.name, "namespace": row.namespace},
        "spec": {},
    });
    if !row.holder.is_empty() {
        lease["spec"]["holderIdentity"] = Value::String(row.holder.clone());
    }
    lease
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_read_by_column_position_with_empty_holders() {
        let table = "\
NAMESPACE         NAME                      HOLDER                                   AGE
kube-node-lease   s1                        s1                                       30d
kube-system       k3s                       s1                                       30d
kube-system       k3s-etcd                  s2                                       30d
kube-system       k3s-cloud-controller                                               30d
kube-system       kube-scheduler            s1_0a9b1c4e-7d7f-4a62-9f0c-2d1b8c7e5a10  30d
";
        let rows = parse(table).unwrap();
        assert_eq!(rows.len(), 5);
        assert_eq!(rows[2].holder, "s2");
        assert_eq!(rows[3].name, "k3s-cloud-controller");
        assert_eq!(rows[3].holder, "");
        assert!(lease(&rows[3])["spec"].get("holderIdentity").is_none());
        assert_eq!(lease(&rows[1])["spec"]["holderIdentity"], "s1");
    }

    /// rancher/rke2#5866's table as pasted into the issue: spacing lost and the AGE of the lock
    /// rows cut, so a holder must not be taken for an age (the split was read as two released
    /// locks).
    #[test]
    fn a_short_row_off_the_columns_keeps_its_holder() {
        let table = "\
NAME                                   HOLDER                                                                      AGE
kube-scheduler                         ip-172-1_0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d                              3h
rke2   ip-172-1
rke2-etcd   ip-172-3
released-lock   41d
";
        let rows = parse(table).unwrap();
        let holder = |name: &str| rows.iter().find(|r| r.name == name).unwrap().holder.clone();
        assert_eq!(holder("rke2"), "ip-172-1");
        assert_eq!(holder("rke2-etcd"), "ip-172-3");
        assert_eq!(holder("released-lock"), "");
        assert!(looks_like_age("9m26s") && looks_like_age("2y105d") && looks_like_age("<unknown>"));
        assert!(!looks_like_age("ip-172-1") && !looks_like_age("5") && !looks_like_age("m"));
    }

    #[test]
    fn no_table_is_not_an_empty_table() {
        assert_eq!(
            parse("error: the server doesn't have a resource type \"leases\"\n"),
            None
        );
        assert_eq!(parse(""), None);
        assert_eq!(parse("NAMESPACE   NAME   HOLDER   AGE\n"), Some(Vec::new()));
        let narrow = parse("NAME   HOLDER   AGE\nk3s    s1       3d\n").unwrap();
        assert_eq!(narrow[0].namespace, "kube-system");
    }

    #[test]
    fn a_shifted_holder_is_cut_at_its_blanks() {
        // A redacted IP made the holder longer than its column.
        let table = "\
NAMESPACE     NAME       HOLDER          AGE
kube-system   k3s        ip-1-1-1-221     9m
kube-system   k3s-etcd   s2               9m
kube-system   gone                        9m
";
        let rows = parse(table).unwrap();
        assert_eq!(rows[0].holder, "ip-1-1-1-221");
        assert_eq!(rows[1].holder, "s2");
        assert_eq!(
            (rows[2].name.as_str(), rows[2].holder.as_str()),
            ("gone", "")
        );
    }

    #[test]
    fn crlf_trailing_blanks_wide_characters_and_ragged_rows_do_not_panic() {
        let table = "NAME       HOLDER   AGE   \r\nk3s        s1       3d  \r\nk3s-etcd   сервер-２   3d\r\nx\r\n\u{3000}\r\n";
        let rows = parse(table).unwrap();
        assert_eq!(rows[0].holder, "s1");
        assert_eq!(rows[1].holder, "сервер-２");
        assert_eq!((rows[2].name.as_str(), rows[2].holder.as_str()), ("x", ""));
        assert_eq!(rows.len(), 3);
        for text in [
            "NAME HOLDER\n a b c d e f\n",
            "HOLDER NAME\n\n\t\n",
            "NAME HOLDER AGE\n\u{1F600}\u{1F600}  é",
        ] {
            let _ = parse(text);
        }
    }

    #[test]
    fn a_row_shifted_by_a_redacted_name_keeps_its_holder_alone() {
        let table = "\
NAMESPACE         NAME                   HOLDER                 AGE
kube-node-lease   ip-1-1-1-221   ip-1-1-1-221     9m
kube-system       k3s                    ip-1-1-1-221     9m
kube-system       k3s-etcd               ip-10-200-100-221-extra-long-name   9m
kube-system       k3s-cloud-controller                          9m
kube-node-lease   ip-1-1-1-9  9m
";
        let rows = parse(table).unwrap();
        let holders: Vec<(&str, &str)> = rows
            .iter()
            .map(|r| (r.name.as_str(), r.holder.as_str()))
            .collect();
        assert_eq!(
            holders,
            [
                ("ip-1-1-1-221", "ip-1-1-1-221"),
                ("k3s", "ip-1-1-1-221"),
                ("k3s-etcd", "ip-10-200-100-221-extra-long-name"),
                ("k3s-cloud-controller", ""),
                ("ip-1-1-1-9", ""),
            ]
        );
        assert_eq!(rows[0].namespace, "kube-node-lease");
    }

    /// A row that is neither whole nor short of just its holder is read by the header's
    /// positions, each cell cut at its first run of blanks.
    #[test]
    fn an_odd_row_is_cut_at_the_first_blanks_of_each_cell() {
        let table = "\
NAME   HOLDER   AGE
k3s    s1 9m    and more words
";
        let rows = parse(table).unwrap();
        assert_eq!(rows[0].name, "k3s");
        assert_eq!(rows[0].holder, "s1");
    }
}
