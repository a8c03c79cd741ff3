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
    // kubectl aligns columns (tabwriter): each cell starts where its header word does, and a
    // cell may be empty (a released lock has no holder) or hold spaces.
    let starts: Vec<(usize, &str)> = header
        .split_whitespace()
        .map(|word| (word.as_ptr() as usize - header.as_ptr() as usize, word))
        .collect();
    let column = |row: &str, title: &str| -> Option<String> {
        let at = starts.iter().position(|(_, w)| *w == title)?;
        let from = starts[at].0.min(row.len());
        let to = starts
            .get(at + 1)
            .map_or(row.len(), |(s, _)| (*s).min(row.len()));
        Some(row.get(from..to)?.trim().to_string())
    };
    let rows = lines
        .filter(|l| !l.trim().is_empty())
        .filter_map(|row| {
            let holder = column(row, "HOLDER").unwrap_or_default();
            Some(HolderRow {
                // `kubectl -n kube-system get leases` has no NAMESPACE column.
                namespace: column(row, "NAMESPACE").unwrap_or_else(|| "kube-system".into()),
                name: column(row, "NAME").filter(|n| !n.is_empty())?,
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
