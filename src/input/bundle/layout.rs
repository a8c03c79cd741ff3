//! Which collector made a tree, by its marker paths (never by the archive's name: every
//! collector lets the user rename it), and where its top folder ends.

use jiff::Timestamp;

use super::tree::Tree;
use crate::const_regex::const_regex;
use crate::model::bundle_provenance::Collector;

/// A collector's layout found in a tree: `root` is the path prefix (with its `/`) above
/// the collector's own folders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Found {
    pub collector: Collector,
    pub root: String,
    /// The Rancher collector's distro folder: `k3s`, `rke2`, `rke`, `kubeadm`, `pod`.
    pub distro_folder: Option<String>,
}

pub(super) fn detect(tree: &Tree) -> Option<Found> {
    // `<distro>/kubectl/` on a server with a reachable API server; `crictl/` and `podlogs/`
    // on an agent or with the API server down.
    let rancher = const_regex(r"^(.*/)?(k3s|rke2|rke|kubeadm|pod)/(kubectl|crictl|podlogs)/[^/]+$");
    let prefix_of = |marker: &str| {
        tree.files.keys().find_map(|path| {
            let at = path.find(marker)?;
            (at == 0 || path[..at].ends_with('/')).then(|| path[..at].to_string())
        })
    };
    if let Some(root) = prefix_of("cluster-resources/") {
        return Some(Found {
            collector: Collector::Troubleshoot,
            root,
            distro_folder: None,
        });
    }
    if let Some(root) = prefix_of("yamls/cluster/").or_else(|| prefix_of("yamls/namespaced/")) {
        return Some(Found {
            collector: Collector::SupportBundleKit,
            root,
            distro_folder: None,
        });
    }
    let (root, distro) = tree.files.keys().find_map(|path| {
        let c = rancher.captures(path)?;
        Some((
            c.get(1).map_or("", |m| m.as_str()).to_string(),
            c[2].to_string(),
        ))
    })?;
    // The k8s plugin of supportconfig unpacks the Rancher collector's archive under
    // `rancher2_logs_collector/` in its own tree.
    let collector = if root.contains("rancher2_logs_collector/") {
        Collector::Supportconfig
    } else {
        Collector::RancherLogs
    };
    Some(Found {
        collector,
        root,
        distro_folder: Some(distro),
    })
}

/// The collection time a top folder's name records, and how it was read:
/// troubleshoot `support-bundle-2024-05-31T12_10_45` (UTC), support-bundle-kit
/// `supportbundle_<uid>_2024-05-31T12-10-45Z`, the Rancher collector
/// `<host>-2024-05-31_12_10_45` (the node's local time: read as UTC, said so).
pub(super) fn collection_time(folder: &str) -> Option<(Timestamp, String)> {
    let patterns = [
        (
            r"support-bundle-(\d{4}-\d{2}-\d{2})T(\d{2})_(\d{2})_(\d{2})$",
            "",
        ),
        (r"_(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})Z$", ""),
        (
            r"-(\d{4}-\d{2}-\d{2})_(\d{2})_(\d{2})_(\d{2})$",
            ", the node's local time read as UTC",
        ),
    ];
    patterns.iter().find_map(|(pattern, caveat)| {
        let c = const_regex(pattern).captures(folder)?;
        let time: Timestamp = format!("{}T{}:{}:{}Z", &c[1], &c[2], &c[3], &c[4])
            .parse()
            .ok()?;
        Some((time, format!("folder name {folder}{caveat}")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(paths: &[&str]) -> Tree {
        let mut tree = Tree::new("b", "tar");
        for p in paths {
            tree.insert(p, Vec::new());
        }
        tree
    }

    #[test]
    fn layouts_are_told_by_their_marker_paths() {
        let found = detect(&tree(&["support-bundle-x/cluster-resources/nodes.json"])).unwrap();
        assert_eq!(
            (found.collector, found.root.as_str()),
            (Collector::Troubleshoot, "support-bundle-x/")
        );
        let found = detect(&tree(&["sb/yamls/cluster/v1/nodes.yaml"])).unwrap();
        assert_eq!(found.collector, Collector::SupportBundleKit);
        let found = detect(&tree(&["h-2024-05-31_12_10_45/rke2/kubectl/leases"])).unwrap();
        assert_eq!(found.collector, Collector::RancherLogs);
        assert_eq!(found.distro_folder.as_deref(), Some("rke2"));
        let found = detect(&tree(&[
            "scc_h_240531_1210/rancher2_logs_collector/h-2024-05-31_12_10_45/k3s/kubectl/leases",
        ]))
        .unwrap();
        assert_eq!(found.collector, Collector::Supportconfig);
        assert!(detect(&tree(&["dump/leases.yaml", "my-cluster-resources/x.json"])).is_none());
    }

    #[test]
    fn collection_times_come_from_each_collectors_folder_name() {
        let t = |s| collection_time(s).map(|(t, _)| t.to_string());
        assert_eq!(
            t("support-bundle-2024-05-31T12_10_45").as_deref(),
            Some("2024-05-31T12:10:45Z")
        );
        assert_eq!(
            t("supportbundle_c2eb6186-525f-411e-91ee-e88ed090d66d_2025-09-17T03-39-17Z").as_deref(),
            Some("2025-09-17T03:39:17Z")
        );
        assert_eq!(
            t("prod-k3s-1-2024-05-31_12_10_45").as_deref(),
            Some("2024-05-31T12:10:45Z")
        );
        assert!(
            collection_time("prod-k3s-1-2024-05-31_12_10_45")
                .unwrap()
                .1
                .contains("local time")
        );
        assert_eq!(t("bundle"), None);
    }
}
