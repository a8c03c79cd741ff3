//! A bundle held in memory: only the entries a layout could read (YAML, JSON and the few
//! extensionless files collectors write), by their path inside the archive or folder.
//! Everything else (logs above all) is streamed past without being kept.

use std::collections::BTreeMap;
use std::rc::Rc;

use crate::input::limits::CapHit;
use crate::model::kinds::KINDS;

/// The largest single file kept: a `kubectl get` of every object of one kind in a large
/// cluster stays far below; the same cap as a dump file.
pub(super) const FILE_LIMIT: u64 = crate::input::files::bounded_read::DUMP_FILE_LIMIT;

/// A symbolic or hard link inside an archive, resolved only when its target lies inside it.
#[derive(Debug, Clone)]
pub(super) struct Link {
    pub path: String,
    pub target: String,
    /// Tar hard links name their target from the archive's root, symlinks from their folder.
    pub hard: bool,
}

#[derive(Debug, Default)]
pub(super) struct Tree {
    /// The input as the user named it; `outer.zip:inner.tar.gz` for a nested archive.
    pub name: String,
    /// `gzip tar`, `zip`, `folder`, `file`.
    pub container: String,
    /// The name of a folder given as input: collectors put the collection time in it.
    pub folder_name: Option<String>,
    /// One file given on its own (a dump, or a compressed one): read whatever its name.
    pub single: bool,
    /// Shared: a link to a file is the file's bytes again, not a copy of them.
    pub files: BTreeMap<String, Rc<Vec<u8>>>,
    pub links: Vec<Link>,
    pub notes: Vec<String>,
    /// Paths the archive holds more than once, and how many times.
    repeated: BTreeMap<String, u64>,
}

impl Tree {
    pub(super) fn new(name: &str, container: &str) -> Self {
        Tree {
            name: name.to_string(),
            container: container.to_string(),
            ..Tree::default()
        }
    }

    /// Keeps `bytes` as the file at `path`. A path met again replaces the earlier copy, as
    /// `tar -x` leaves the last one; [`Self::finish`] says so.
    pub(super) fn insert(&mut self, path: &str, bytes: Vec<u8>) {
        if self
            .files
            .insert(path.to_string(), Rc::new(bytes))
            .is_some()
        {
            *self.repeated.entry(path.to_string()).or_insert(1) += 1;
        }
    }

    /// Once every entry is in: makes each link inside the archive its target's bytes (shared,
    /// not copied), `charge`d its target's size each time, since whatever reads the link reads
    /// those bytes again; a link that points out of the archive (absolute, or `..` past its
    /// top) is refused with a note, and so is a path held twice.
    pub(super) fn finish(
        &mut self,
        mut charge: impl FnMut(u64) -> Result<(), CapHit>,
    ) -> Result<(), CapHit> {
        for (path, times) in std::mem::take(&mut self.repeated) {
            self.notes.push(format!(
                "{path} appears {times} times in {}: read the last copy in the archive, the one tar -x leaves",
                self.name
            ));
        }
        for link in std::mem::take(&mut self.links) {
            let base = if link.hard {
                ""
            } else {
                link.path.rsplit_once('/').map_or("", |(dir, _)| dir)
            };
            match resolve(base, &link.target) {
                None => self.notes.push(format!(
                    "ignored the link {} in {}: it points to {}, outside the bundle (links are followed only inside it)",
                    link.path, self.name, link.target
                )),
                Some(target) => {
                    let Some(bytes) = self.files.get(&target).cloned() else {
                        continue;
                    };
                    if let std::collections::btree_map::Entry::Vacant(slot) =
                        self.files.entry(link.path)
                    {
                        charge(bytes.len() as u64)?;
                        slot.insert(bytes);
                    }
                }
            }
        }
        Ok(())
    }
}

/// `a/./b//c` → `a/b/c`; `None` for a path that climbs out (`..` past the top). A leading
/// `/` is dropped: nothing is ever written, so an absolute entry name is just a name.
pub(super) fn normalize(path: &str) -> Option<String> {
    resolve("", path.trim_start_matches('/'))
}

/// `target` seen from the folder `base` (both inside the archive), or `None` when it leaves it.
fn resolve(base: &str, target: &str) -> Option<String> {
    if target.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}

/// Whether an entry could feed a layout: kept in memory, everything else streamed past.
/// Inside a troubleshoot or support-bundle-kit tree only the files of the kinds k3sdoctor
/// reads are kept: a large cluster's Pods and Events would otherwise be held and parsed.
pub(super) fn wanted(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    if super::metrics_files::metrics_file(path).is_some() {
        return true;
    }
    // The kinds k3sdoctor reads, as troubleshoot and support-bundle-kit name their files.
    let in_bundles = || KINDS.iter().filter(|row| row.in_bundles);
    let kind_file = |rest: &str| {
        let stem = rest.split(['/', '.']).next().unwrap_or_default();
        in_bundles().any(|row| !row.custom && row.plural == stem)
    };
    if let Some(rest) = after_folder(path, "cluster-resources/") {
        return kind_file(rest)
            || in_bundles().filter(|row| row.custom).any(|row| {
                rest.starts_with(&format!("{}/", row.troubleshoot_folder()))
                    || rest.starts_with(&format!("{}.", row.troubleshoot_folder()))
            })
            || rest.ends_with("-errors.json")
            || rest == "custom-resource-definitions.json";
    }
    if after_folder(path, "yamls/").is_some() {
        let stem = name.split('.').next().unwrap_or_default();
        return in_bundles().any(|row| row.plural == stem);
    }
    // The Rancher logs collector's provisioning objects are named by resource
    // (`kubectl/rancher-prov/etcdsnapshots.rke.cattle.io`), for `--rancher-from-file`.
    if path.contains("/rancher-prov/") || path.starts_with("rancher-prov/") {
        return matches!(
            name,
            "etcdsnapshots.rke.cattle.io"
                | "clusters.provisioning.cattle.io"
                | "clusters.management.cattle.io"
                | "rkecontrolplanes.rke.cattle.io"
        );
    }
    if let Some((_, ext)) = name.rsplit_once('.') {
        return matches!(ext.to_ascii_lowercase().as_str(), "yaml" | "yml" | "json");
    }
    // The Rancher logs collector's kubectl tables and etcdctl output have no extension.
    let parent = path
        .rsplit('/')
        .nth(1)
        .unwrap_or_default()
        .to_ascii_lowercase();
    matches!(
        (parent.as_str(), name),
        ("kubectl", "leases" | "nodes" | "configmaps") | ("etcd", "memberlist")
    )
}

/// What follows the folder `folder` (with its `/`) in `path`, when `path` runs through it.
fn after_folder<'a>(path: &'a str, folder: &str) -> Option<&'a str> {
    let at = path.find(folder)?;
    (at == 0 || path[..at].ends_with('/')).then(|| &path[at + folder.len()..])
}

/// Logs are most of a bundle's bytes and never an archive: not even sniffed.
pub(super) fn is_log(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    lower.ends_with(".log") || lower.ends_with(".log.gz") || lower.contains("/logs/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_normalized_and_climbing_out_is_refused() {
        assert_eq!(normalize("./a//b/./c.json").as_deref(), Some("a/b/c.json"));
        assert_eq!(normalize("/etc/passwd").as_deref(), Some("etc/passwd"));
        assert_eq!(normalize("a/../../x"), None);
        assert_eq!(normalize("a/../x").as_deref(), Some("x"));
    }

    #[test]
    fn links_inside_are_followed_and_links_out_refused() {
        let mut tree = Tree::new("b.tar", "tar");
        tree.insert("top/cr/x.json", b"[]".to_vec());
        for (path, target) in [
            ("top/cr/x.yaml", "x.json"),
            ("top/cr/up.yaml", "../../../etc/shadow"),
            ("top/cr/abs.yaml", "/etc/shadow"),
        ] {
            tree.links.push(Link {
                path: path.into(),
                target: target.into(),
                hard: false,
            });
        }
        let mut charged = 0;
        tree.finish(|n| {
            charged += n;
            Ok(())
        })
        .unwrap();
        assert_eq!(tree.files["top/cr/x.yaml"].as_slice(), b"[]");
        // The link shares its target's bytes and is charged their size.
        assert!(Rc::ptr_eq(
            &tree.files["top/cr/x.yaml"],
            &tree.files["top/cr/x.json"]
        ));
        assert_eq!(charged, 2);
        assert_eq!(tree.files.len(), 2);
        assert_eq!(tree.notes.len(), 2, "{:?}", tree.notes);
        assert!(tree.notes.iter().all(|n| n.contains("outside the bundle")));
    }

    #[test]
    fn only_entries_a_layout_reads_are_wanted() {
        assert!(wanted("b/cluster-resources/leases/kube-system.json"));
        assert!(wanted("h-2024/k3s/kubectl/leases"));
        assert!(wanted("h-2024/etcd/memberlist"));
        assert!(!wanted("b/cluster-resources/pods/logs/x/y.log"));
        assert!(!wanted("h-2024/k3s/journalctl/k3s"));
        // Only the kinds k3sdoctor reads, in the collectors' own trees.
        let top = "support-bundle-2024-05-31T12_10_45/cluster-resources";
        for kept in [
            "leases/kube-system.json",
            "configmaps/kube-system.json",
            "nodes.json",
            "custom-resources/etcdsnapshotfiles.k3s.cattle.io.json",
            "custom-resources/helmcharts.helm.cattle.io/kube-system.json",
            "jobs/kube-system.json",
            "custom-resources/custom-resources-errors.json",
            "leases-errors.json",
            "custom-resource-definitions.json",
        ] {
            assert!(wanted(&format!("{top}/{kept}")), "{kept}");
        }
        for skipped in [
            "pods/kube-system.json",
            "events/default.json",
            "custom-resources/addons.k3s.cattle.io.json",
        ] {
            assert!(!wanted(&format!("{top}/{skipped}")), "{skipped}");
        }
        assert!(wanted(
            "sb/yamls/namespaced/kube-system/coordination.k8s.io/v1/leases.yaml"
        ));
        assert!(!wanted("sb/yamls/namespaced/kube-system/v1/pods.yaml"));
        assert!(is_log("b/pods/logs/x/y.txt") && is_log("x.log"));
    }
}
