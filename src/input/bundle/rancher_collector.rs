//! The Rancher logs collector (rancherlabs/support-tools `rancher2_logs_collector.sh`), and
//! supportconfig's k8s plugin, which unpacks it: `<distro>/kubectl/` holds kubectl **tables**
//! (`kubectl get <kind> --all-namespaces -o wide`: holders only for Leases, key counts for
//! ConfigMaps) plus `nodes.json`; `etcd/` beside it the member list (`k3s-etcd`: the JSON
//! gateway's `memberlist.json`; RKE2: etcdctl's `memberlist`). No ETCDSnapshotFiles.

use super::tree::Tree;
use super::{Built, Document, Source, holder_table, memberlist};
use crate::model::kinds::{Kind, dump_command};

/// What `kubectl/rancher-prov/` holds on a Rancher server node that `--rancher-from-file`
/// reads (each file one `kubectl get <resource> -A -o yaml`, or kubectl's error text).
const RANCHER_PROV: [(&str, (&str, &str)); 4] = [
    (
        "etcdsnapshots.rke.cattle.io",
        ("rke.cattle.io/v1", "ETCDSnapshot"),
    ),
    (
        "clusters.provisioning.cattle.io",
        ("provisioning.cattle.io/v1", "Cluster"),
    ),
    (
        "clusters.management.cattle.io",
        ("management.cattle.io/v3", "Cluster"),
    ),
    (
        "rkecontrolplanes.rke.cattle.io",
        ("rke.cattle.io/v1", "RKEControlPlane"),
    ),
];

pub(super) fn read(tree: &Tree, root: &str, distro: &str, source: &mut Source) {
    let dir = format!("{root}{distro}/");
    for (file, assume) in RANCHER_PROV {
        let path = format!("{dir}kubectl/rancher-prov/{file}");
        if let Some(text) = source.text(tree, &path) {
            source.documents.push(Document {
                name: format!("{}:{path}", tree.name),
                path,
                text,
                assume: Some(assume),
                null_strings: false,
                lenient: true,
            });
        }
    }
    if !source.take(
        tree,
        &dir,
        &["kubectl/nodes.json".to_string()],
        (Kind::Node.row().api_version, Kind::Node.name()),
        false,
    ) {
        source.gap(
            Kind::Node.name(),
            &format!("{distro}/kubectl/nodes.json"),
            "not in the bundle: the collector writes it from 2026-03 on; older runs keep only a table",
            &format!(
                "run a current rancher2_logs_collector.sh, or add `{}`",
                dump_command(&[Kind::Node])
            ),
        );
    }
    let leases_file = format!("{dir}kubectl/leases");
    let table = source
        .text(tree, &leases_file)
        .map(|text| holder_table::parse(&text));
    match table {
        Some(Some(rows)) => {
            for row in rows.iter().filter(|r| r.namespace == "kube-system") {
                source.built.push(Built {
                    path: leases_file.clone(),
                    name: format!("{}:{leases_file}", tree.name),
                    value: holder_table::lease(row),
                });
            }
            source.complete.push(Kind::Lease.name());
            source.holders_only = Some(format!("{distro}/kubectl/leases"));
        }
        found => {
            let why = if found.is_some() {
                "it holds no lease table (kubectl failed when the collector ran)"
            } else {
                "not in the bundle"
            };
            source.gap(
                Kind::Lease.name(),
                &format!("{distro}/kubectl/leases"),
                why,
                &format!("add `{}` from a server", dump_command(&[Kind::Lease])),
            );
        }
    }
    let configmaps = format!("{distro}/kubectl/configmaps");
    source.gap_as(
        Kind::ConfigMap.name(),
        &configmaps,
        "a table of key counts: the collector does not save ConfigMap contents",
        &format!("add `{}` from a server", dump_command(&[Kind::ConfigMap])),
        format!("ConfigMap contents ({configmaps} is a table of key counts)"),
    );
    source.gap_as(
        Kind::SnapshotFile.name(),
        &format!("{distro}/kubectl/"),
        "the Rancher logs collector does not collect ETCDSnapshotFiles",
        &format!(
            "add `{}` from a server",
            dump_command(&[Kind::SnapshotFile])
        ),
        "ETCDSnapshotFiles (the Rancher logs collector does not collect them)".to_string(),
    );
    etcd_members_note(tree, root, &dir, distro, source);
}

/// What etcd's member list said when the bundle was collected, as a note. `etcd/` sits beside
/// `<distro>/` (TMPDIR/etcd in the script); `<distro>/etcd/` is accepted too.
fn etcd_members_note(tree: &Tree, root: &str, dir: &str, distro: &str, source: &mut Source) {
    let candidates = ["etcd/memberlist.json", "etcd/memberlist"]
        .into_iter()
        .flat_map(|file| {
            [
                (format!("{root}{file}"), file.to_string()),
                (format!("{dir}{file}"), format!("{distro}/{file}")),
            ]
        });
    for (path, file) in candidates {
        let Some(text) = source.text(tree, &path) else {
            continue;
        };
        match memberlist::parse(&text) {
            Some(members) => source.notes.push(format!(
                "etcd had {} member(s) when the bundle was collected ({file}): {}",
                members.len(),
                memberlist::shown(&members)
            )),
            None => source.notes.push(format!(
                "{file} holds no member list (etcdctl failed when the collector ran)"
            )),
        }
        break;
    }
}
