//! Support bundles built in memory from the fixture dumps, in each collector's layout and with
//! its quirks: no opaque archive is checked in.

use std::io::Write;
use std::path::Path;

use serde_json::{Value, json};

use super::harness::repo_path;
use super::objects::read_dump_objects;

/// The folder name troubleshoot gives a bundle collected at 2024-05-31T12:10:45Z, five
/// seconds after the newest renewal in the split-cluster fixture.
pub(crate) const TROUBLESHOOT_TOP: &str = "support-bundle-2024-05-31T12_10_45";
pub(crate) const RANCHER_TOP: &str = "prod-k3s-1-2024-05-31_12_10_45";
pub(crate) const SBK_TOP: &str =
    "supportbundle_c2eb6186-525f-411e-91ee-e88ed090d66d_2024-05-31T12-10-45Z";

#[derive(Clone)]
enum Entry {
    File(String, Vec<u8>),
    Link(String, String),
    /// A tar hard link (in a zip, a symlink: zip has no hard links).
    HardLink(String, String),
}

/// Entries of an archive, written as tar or zip.
#[derive(Clone, Default)]
pub(crate) struct Bundle {
    entries: Vec<Entry>,
}

impl Bundle {
    pub(crate) fn file(mut self, path: &str, bytes: impl Into<Vec<u8>>) -> Self {
        self.entries
            .push(Entry::File(path.to_string(), bytes.into()));
        self
    }

    pub(crate) fn json(self, path: &str, value: &Value) -> Self {
        self.file(path, serde_json::to_vec_pretty(value).unwrap())
    }

    pub(crate) fn link(mut self, path: &str, target: &str) -> Self {
        self.entries
            .push(Entry::Link(path.to_string(), target.to_string()));
        self
    }

    /// A tar hard link to `target`, named from the archive's root.
    pub(crate) fn hard_link(mut self, path: &str, target: &str) -> Self {
        self.entries
            .push(Entry::HardLink(path.to_string(), target.to_string()));
        self
    }

    /// Every entry moved under `prefix/`.
    pub(crate) fn under(self, prefix: &str) -> Self {
        Bundle {
            entries: self
                .entries
                .into_iter()
                .map(|e| match e {
                    Entry::File(p, b) => Entry::File(format!("{prefix}/{p}"), b),
                    Entry::Link(p, t) => Entry::Link(format!("{prefix}/{p}"), t),
                    Entry::HardLink(p, t) => {
                        Entry::HardLink(format!("{prefix}/{p}"), format!("{prefix}/{t}"))
                    }
                })
                .collect(),
        }
    }

    pub(crate) fn tar(&self) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for entry in &self.entries {
            let mut header = tar::Header::new_gnu();
            header.set_mode(0o644);
            header.set_mtime(1_717_157_445);
            match entry {
                Entry::File(path, bytes) => {
                    header.set_size(bytes.len() as u64);
                    header.set_entry_type(tar::EntryType::Regular);
                    builder.append_data(&mut header, path, &bytes[..]).unwrap();
                }
                Entry::Link(path, target) => {
                    header.set_size(0);
                    header.set_entry_type(tar::EntryType::Symlink);
                    builder.append_link(&mut header, path, target).unwrap();
                }
                Entry::HardLink(path, target) => {
                    header.set_size(0);
                    header.set_entry_type(tar::EntryType::Link);
                    builder.append_link(&mut header, path, target).unwrap();
                }
            }
        }
        builder.into_inner().unwrap()
    }

    pub(crate) fn zip(&self) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for entry in &self.entries {
            match entry {
                Entry::File(path, bytes) => {
                    zip.start_file(path.as_str(), options).unwrap();
                    zip.write_all(bytes).unwrap();
                }
                Entry::Link(path, target) => {
                    zip.add_symlink(path.as_str(), target.as_str(), options)
                        .unwrap();
                }
                Entry::HardLink(path, target) => {
                    let from_folder = path.matches('/').count();
                    let relative = format!("{}{target}", "../".repeat(from_folder));
                    zip.add_symlink(path.as_str(), relative.as_str(), options)
                        .unwrap();
                }
            }
        }
        zip.finish().unwrap().into_inner()
    }

    /// The bundle unpacked into `dir`, links included, as `tar -xf` leaves it.
    pub(crate) fn unpack(&self, dir: &Path) {
        for entry in &self.entries {
            let (path, link) = match entry {
                Entry::File(p, _) | Entry::Link(p, _) | Entry::HardLink(p, _) => {
                    (dir.join(p), entry)
                }
            };
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            match link {
                Entry::File(_, bytes) => std::fs::write(&path, bytes).unwrap(),
                Entry::Link(_, target) => std::os::unix::fs::symlink(target, &path).unwrap(),
                Entry::HardLink(_, target) => std::fs::hard_link(dir.join(target), &path).unwrap(),
            }
        }
    }
}

pub(crate) fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

pub(crate) fn xz(bytes: &[u8]) -> Vec<u8> {
    let mut xz =
        lzma_rust2::XzWriter::new(Vec::new(), lzma_rust2::XzOptions::with_preset(1)).unwrap();
    xz.write_all(bytes).unwrap();
    xz.finish().unwrap()
}

pub(crate) fn bzip2(bytes: &[u8]) -> Vec<u8> {
    let mut bz = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
    bz.write_all(bytes).unwrap();
    bz.finish().unwrap()
}

pub(crate) fn zstd(bytes: &[u8]) -> Vec<u8> {
    ruzstd::encoding::compress_to_vec(bytes, ruzstd::encoding::CompressionLevel::Fastest)
}

/// The split-cluster fixture's objects, by kind.
pub(crate) struct Objects {
    pub nodes: Vec<Value>,
    pub leases: Vec<Value>,
    pub configmaps: Vec<Value>,
    pub snapshot_files: Vec<Value>,
}

pub(crate) const FIXTURE: &str = "tests/fixtures/split-cluster";

pub(crate) fn split_cluster() -> Objects {
    let read = |f: &str| read_dump_objects(&repo_path(FIXTURE).join(f));
    Objects {
        nodes: read("nodes.yaml"),
        leases: read("kube-system-leases.yaml"),
        configmaps: read("kube-system-configmaps.yaml"),
        snapshot_files: read("etcdsnapshotfiles.yaml"),
    }
}

/// A list as client-go's typed clients marshal it: no `kind` on the list or its items.
fn typed_list(items: &[Value]) -> Value {
    let items: Vec<Value> = items
        .iter()
        .cloned()
        .map(|mut i| {
            let o = i.as_object_mut().unwrap();
            o.remove("kind");
            o.remove("apiVersion");
            i
        })
        .collect();
    json!({"metadata": {"resourceVersion": "4300"}, "items": items})
}

/// `kubectl support-bundle` output: per-namespace Lists, the custom resources as a bare JSON
/// array with a `.yaml` symlink twin (v0.133.0 on), logs, and a link out of the archive.
pub(crate) fn troubleshoot(objects: &Objects) -> Bundle {
    Bundle::default()
        .file(
            "version.yaml",
            "apiVersion: troubleshoot.sh/v1beta2\nkind: SupportBundle\nspec:\n  versionNumber: v0.133.0\n",
        )
        .json(
            "cluster-info/cluster_version.json",
            &json!({"info": {"major": "1", "minor": "29", "gitVersion": "v1.29.4+k3s1"}, "string": "v1.29.4+k3s1"}),
        )
        .json("cluster-resources/nodes.json", &json!({"kind": "NodeList", "apiVersion": "v1", "items": objects.nodes}))
        .json("cluster-resources/leases/kube-system.json", &typed_list(&objects.leases))
        .json("cluster-resources/leases/kube-node-lease.json", &typed_list(&[]))
        .json("cluster-resources/configmaps/kube-system.json", &typed_list(&objects.configmaps))
        .json(
            "cluster-resources/custom-resources/etcdsnapshotfiles.k3s.cattle.io.json",
            &Value::Array(objects.snapshot_files.clone()),
        )
        .json(
            "cluster-resources/custom-resource-definitions.json",
            &json!({"kind": "CustomResourceDefinitionList", "apiVersion": "apiextensions.k8s.io/v1",
                    "items": [{"metadata": {"name": "etcdsnapshotfiles.k3s.cattle.io"}}]}),
        )
        .link(
            "cluster-resources/custom-resources/etcdsnapshotfiles.k3s.cattle.io.yaml",
            "etcdsnapshotfiles.k3s.cattle.io.json",
        )
        .json(
            "cluster-resources/pods/kube-system.json",
            &json!({"kind": "PodList", "apiVersion": "v1", "items": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "coredns", "namespace": "kube-system"}}]}),
        )
        .file("cluster-resources/pods/logs/kube-system/coredns/coredns.log", "[INFO] plugin/reload\n".repeat(100))
        .link("cluster-resources/secrets.json", "../../../../etc/shadow")
        .under(TROUBLESHOOT_TOP)
}

/// One support-bundle-kit file: a `kind: List` of `items` as the kit rewrites them.
/// The kit's own rewrite of the JSON text (`toObjCommon`, pkg/manager/collectors/common.go):
/// `"key":null,` becomes `"key":"null",` (also escaped, inside strings that hold JSON), then
/// every `""` becomes `"null"`.
fn null_strings(value: &Value) -> Value {
    let text = serde_json::to_string(value).unwrap();
    let text = regex::Regex::new(r#"("[a-zA-Z]+":)(null,)"#)
        .unwrap()
        .replace_all(&text, "$1\"null\",");
    let text = regex::Regex::new(r#"(\\"[a-zA-Z]+\\":)(null,)"#)
        .unwrap()
        .replace_all(&text, "$1\\\"null\\\",");
    serde_json::from_str(&text.replace("\"\"", "\"null\"")).unwrap()
}

pub(crate) fn sbk_list(items: &[Value], group_version: &str, kind: &str) -> Vec<u8> {
    // The kit sets each item's apiVersion and kind after the rewrite.
    let items: Vec<Value> = items
        .iter()
        .map(|i| {
            let mut i = null_strings(i);
            i["apiVersion"] = json!(group_version);
            i["kind"] = json!(kind);
            i
        })
        .collect();
    let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
    serde_yaml_ng::to_string(&list).unwrap().into_bytes()
}

/// support-bundle-kit's tree, `"null"` for every empty value.
pub(crate) fn support_bundle_kit(objects: &Objects) -> Bundle {
    Bundle::default()
        .file(
            "yamls/cluster/v1/nodes.yaml",
            sbk_list(&objects.nodes, "v1", "Node"),
        )
        .file(
            "yamls/cluster/k3s.cattle.io/v1/etcdsnapshotfiles.yaml",
            sbk_list(
                &objects.snapshot_files,
                "k3s.cattle.io/v1",
                "ETCDSnapshotFile",
            ),
        )
        .file(
            "yamls/namespaced/kube-system/coordination.k8s.io/v1/leases.yaml",
            sbk_list(&objects.leases, "coordination.k8s.io/v1", "Lease"),
        )
        .file(
            "yamls/namespaced/kube-system/v1/configmaps.yaml",
            sbk_list(&objects.configmaps, "v1", "ConfigMap"),
        )
        .file(
            "logs/kube-system/coredns-1/coredns.log",
            "[INFO] plugin/reload\n",
        )
        .under(SBK_TOP)
}

/// `kubectl get leases -A -o wide` as kubectl prints it: aligned columns, an empty HOLDER
/// cell for a released lock.
pub(crate) fn holder_table(leases: &[Value]) -> String {
    let rows: Vec<[String; 4]> = leases
        .iter()
        .map(|l| {
            [
                l["metadata"]["namespace"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                l["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                l["spec"]["holderIdentity"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                "29d".to_string(),
            ]
        })
        .collect();
    let header = ["NAMESPACE", "NAME", "HOLDER", "AGE"].map(str::to_string);
    let widths: Vec<usize> = (0..4)
        .map(|c| {
            rows.iter()
                .chain([&header])
                .map(|r| r[c].len())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in [&header].into_iter().chain(rows.iter()) {
        let line: Vec<String> = (0..4)
            .map(|c| format!("{:<w$}", row[c], w = widths[c] + 3))
            .collect();
        out.push_str(line.concat().trim_end());
        out.push('\n');
    }
    out
}

/// The Rancher logs collector's tree for `distro` (`k3s` or `rke2`): tables, `nodes.json`,
/// the etcd member list beside the distro folder (JSON on k3s, etcdctl's simple CSV on RKE2),
/// journald output.
pub(crate) fn rancher(objects: &Objects, distro: &str) -> Bundle {
    let memberlist = if distro == "k3s" {
        (
            "etcd/memberlist.json",
            r#"{"header":{"cluster_id":"1"},"members":[{"ID":"1","name":"prod-k3s-1-0f1e2d3c"},{"ID":"2","name":"prod-k3s-2-4b5a6978"},{"ID":"3","name":"prod-k3s-3-8c7d6e5f"}]}"#.to_string(),
        )
    } else {
        (
            "etcd/memberlist",
            "8e9e05c52164694d, started, prod-k3s-1-0f1e2d3c, https://10.0.0.1:2380, https://10.0.0.1:2379, false\n".to_string(),
        )
    };
    Bundle::default()
        .file(&format!("{distro}/kubectl/leases"), holder_table(&objects.leases))
        .file(&format!("{distro}/kubectl/configmaps"), "NAMESPACE     NAME              DATA   AGE\nkube-system   k3s-etcd-snapshots   24   29d\n")
        .json(&format!("{distro}/kubectl/nodes.json"), &json!({"apiVersion": "v1", "kind": "List", "items": objects.nodes}))
        .file(&format!("{distro}/kubectl/nodes"), "NAME   STATUS   ROLES   AGE   VERSION\n")
        // `etcd/` beside the distro folder, as the script writes it (`${TMPDIR}/etcd`).
        .file(memberlist.0, memberlist.1)
        .file(&format!("journald/{distro}"), "May 31 12:10:40 prod-k3s-1 k3s[1]: level=info\n")
        .under(RANCHER_TOP)
}
