//! The Rancher logs collector's `kubectl get leases -A -o wide`: a table, not objects. It
//! names each lock's holder and nothing else (no renew time, no duration), so it can show a
//! split and who holds what, never whether a lock is still renewed.

use serde_json::{Value, json};

/// One row: namespace, name, holder (`""` for none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HolderRow {
    pub namespace: String,
    pub name: String,
    pub holder: String,
}

/// The rows of the table, or `None` when `text` holds no lease table (kubectl printed an
/// error, or nothing): then the Leases were not collected, which is not "there are none".
pub fn parse(text: &str) -> Option<Vec<HolderRow>> {
    let mut lines = text.lines().skip_while(|l| {
        let words: Vec<&str> = l.split_whitespace().collect();
        !(words.contains(&"NAME") && words.contains(&"HOLDER"))
    });
    let header = lines.next()?;
    let titles: Vec<&str> = header.split_whitespace().collect();
    let holder_at = titles.iter().position(|t| *t == "HOLDER")?;
    let rows = lines
        .filter(|l| !l.trim().is_empty())
        .filter_map(|row| {
            let cells = cells(header, &titles, holder_at, row);
            let cell = |title: &str| {
                let at = titles.iter().position(|t| *t == title)?;
                cells.get(at).cloned()
            };
            let holder = cell("HOLDER").unwrap_or_default();
            Some(HolderRow {
                // `kubectl -n kube-system get leases` has no NAMESPACE column.
                namespace: cell("NAMESPACE").unwrap_or_else(|| "kube-system".into()),
                name: cell("NAME").filter(|n| !n.is_empty())?,
                holder: if holder == "<none>" {
                    String::new()
                } else {
                    holder
                },
            })
        })
        .collect();
    Some(rows)
}

/// The cells of one row, one per header word. No cell of this table holds a blank (namespaces,
/// names, holder identities and kubectl's ages never do), so a row is read by its words, not by
/// where the header's words start: the collector redacts IPs after kubectl aligned the columns,
/// which shifts the rest of a row left or right. Only the holder may be empty (a released lock):
/// a row one word short has none. Any other row falls back to the header's positions, each cell
/// cut at its first run of blanks, so a shifted neighbour never becomes part of a holder.
fn cells(header: &str, titles: &[&str], holder_at: usize, row: &str) -> Vec<String> {
    let words: Vec<&str> = row.split_whitespace().collect();
    if words.len() == titles.len() {
        return words.iter().map(|w| (*w).to_string()).collect();
    }
    if words.len() + 1 == titles.len() {
        let mut cells: Vec<String> = words.iter().map(|w| (*w).to_string()).collect();
        cells.insert(holder_at, String::new());
        return cells;
    }
    let starts: Vec<usize> = header
        .split_whitespace()
        .map(|word| word.as_ptr() as usize - header.as_ptr() as usize)
        .collect();
    (0..starts.len())
        .map(|at| {
            let from = starts[at].min(row.len());
            let to = starts
                .get(at + 1)
                .map_or(row.len(), |s| (*s).min(row.len()));
            row.get(from..to)
                .and_then(|cell| cell.split_whitespace().next())
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

/// A Lease holding only what the table shows.
pub fn lease(row: &HolderRow) -> Value {
    let mut lease = json!({
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
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

    /// The collector redacts IPs after kubectl aligned the table: a shorter or longer name
    /// shifts the rest of its row, and the holder cell is still the holder alone.
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
}
