//! A pasted `kubectl get nodes` (also `-o wide`): NAME STATUS ROLES AGE VERSION. It names each
//! node, whether it is Ready, its roles and its version, which is what the lock verdicts need
//! (the version decides whether a split matters); no annotations (hostname identity, node-args,
//! etcd member names), no heartbeat and no condition but Ready.

use serde_json::{Value, json};

use crate::model::kinds::Kind;

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct NodeRow {
    pub name: String,
    /// `Ready`, `NotReady`, `Unknown`, maybe with `,SchedulingDisabled`.
    pub status: String,
    /// `control-plane,etcd,master`, or empty for `<none>`.
    pub roles: Vec<String>,
    pub version: String,
}

/// `kubectl get nodes` prints NAME STATUS ROLES AGE VERSION (and more with `-o wide`).
pub(super) fn is_header(words: &[&str]) -> bool {
    ["NAME", "STATUS", "ROLES", "VERSION"]
        .iter()
        .all(|title| words.contains(title))
}

/// The rows under `header`. Every cell of the five standard columns is one word (`<none>` for
/// no role), so rows are read word by word; `-o wide`'s later columns (OS-IMAGE holds blanks)
/// are not read.
pub(super) fn rows<'a>(header: &str, lines: impl Iterator<Item = &'a str>) -> Vec<NodeRow> {
    let titles: Vec<&str> = header.split_whitespace().collect();
    let at = |title: &str| titles.iter().position(|t| *t == title);
    let (Some(name), Some(status), Some(roles), Some(version)) =
        (at("NAME"), at("STATUS"), at("ROLES"), at("VERSION"))
    else {
        return Vec::new();
    };
    lines
        .filter_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let cell = |i: usize| words.get(i).map(|w| w.to_string());
            Some(NodeRow {
                name: cell(name)?,
                status: cell(status)?,
                roles: cell(roles)?
                    .split(',')
                    .filter(|r| !r.is_empty() && *r != "<none>")
                    .map(str::to_string)
                    .collect(),
                version: cell(version)?,
            })
        })
        .collect()
}

/// A Node holding only what the row shows.
pub(super) fn node(row: &NodeRow) -> Value {
    let mut labels = json!({"kubernetes.io/hostname": row.name});
    for role in &row.roles {
        labels[format!("node-role.kubernetes.io/{role}")] = json!("true");
    }
    let ready = match row.status.split(',').next() {
        Some("Ready") => "True",
        Some("NotReady") => "False",
        _ => "Unknown",
    };
    json!({
        "apiVersion": "v1",
        "kind": Kind::Node.name(),
        "metadata": {"name": row.name, "labels": labels},
        "status": {
            "conditions": [{"type": "Ready", "status": ready}],
            "nodeInfo": {"kubeletVersion": row.version},
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pasted_nodes_table_gives_names_roles_readiness_and_versions() {
        // Aligned as kubectl prints it; the columns are rebuilt from words here only so that the
        // source holds no long runs of blanks.
        let aligned = |cells: &[&str]| {
            let widths = [15, 27, 28, 6, 15, 14];
            cells
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{c:<w$}", w = widths.get(i).copied().unwrap_or(0)))
                .collect::<String>()
        };
        let header = aligned(&[
            "NAME",
            "STATUS",
            "ROLES",
            "AGE",
            "VERSION",
            "INTERNAL-IP",
            "OS-IMAGE",
        ]);
        let os = "SUSE Linux Enterprise Server 15 SP5";
        let lines = [
            aligned(&[
                "ip-1-1-1-7",
                "Ready",
                "control-plane,etcd,master",
                "15m",
                "v1.29.4+k3s1",
                "1.1.1.7",
                os,
            ]),
            aligned(&[
                "ip-1-1-1-3",
                "Ready,SchedulingDisabled",
                "<none>",
                "14m",
                "v1.29.4+k3s1",
                "1.1.1.3",
                os,
            ]),
            aligned(&[
                "ip-1-1-1-5",
                "NotReady",
                "control-plane,etcd,master",
                "14m",
                "v1.29.4+k3s1",
                "1.1.1.5",
                os,
            ]),
        ];
        let rows = rows(&header, lines.iter().map(String::as_str));
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].roles, ["control-plane", "etcd", "master"]);
        assert!(rows[1].roles.is_empty());
        let server = node(&rows[0]);
        assert_eq!(
            server["metadata"]["labels"]["node-role.kubernetes.io/etcd"],
            "true"
        );
        assert_eq!(
            server["status"]["nodeInfo"]["kubeletVersion"],
            "v1.29.4+k3s1"
        );
        assert_eq!(node(&rows[1])["status"]["conditions"][0]["status"], "True");
        assert_eq!(node(&rows[2])["status"]["conditions"][0]["status"], "False");
        assert!(is_header(&header.split_whitespace().collect::<Vec<_>>()));
    }
}
