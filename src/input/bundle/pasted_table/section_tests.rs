//! Several tables pasted into one file, as people paste them into an issue: each header
//! starts a table, a prompt line ends one, and a table k3sdoctor does not read is skipped.
// Test-only: its panics are assertions, never reached on bad input.
#![cfg(test)]

use super::*;
use crate::model::configmap_listing::Listed;

const PASTE: &str = "\
$ kubectl get lease -n kube-system
NAME       HOLDER   AGE
k3s        s1       41d
k3s-etcd   s2       41d

$ kubectl get nodes
NAME   STATUS   ROLES                       AGE   VERSION
s1     Ready    control-plane,etcd,master   41d   v1.29.4+k3s1

$ kubectl get pods -n kube-system
NAME          READY   STATUS    RESTARTS   AGE
coredns-abc   1/1     Running   0          41d

$ kubectl get etcdsnapshotfiles
No resources found

$ kubectl get cm -n kube-system
NAME                                 DATA   AGE
extension-apiserver-authentication   6      41d
k3s-etcd-snapshots                   0      41d
root@s1:~# k3s etcd-snapshot ls
Name                        Location                  Size      Created
etcd-snapshot-s1-1700000000 file:///db/etcd-snapshot-s1-1700000000 5636128 2023-11-14T22:13:20Z
";

#[test]
fn each_header_starts_a_table_and_a_prompt_ends_one() {
    let pasted = detect(PASTE).expect("a paste of tables");
    assert_eq!(pasted.skipped, ["NAME READY STATUS RESTARTS AGE"]);
    let [
        PastedTable::Leases(leases),
        PastedTable::Nodes(nodes),
        PastedTable::ConfigMaps(cms),
        PastedTable::SnapshotLs(ls),
    ] = &pasted.tables[..]
    else {
        panic!("{:?}", pasted.tables);
    };
    assert_eq!(nodes[0].version, "v1.29.4+k3s1");
    // The lock named `k3s` is a row, not a `k3s …` command line.
    assert_eq!(leases.len(), 2, "{leases:?}");
    assert_eq!(leases[0].name, "k3s");
    // `No resources found` follows a prompt, not a header: no row of any table.
    assert_eq!((cms.rows, cms.unreadable), (2, 0));
    assert_eq!(cms.listing.shows("k3s-etcd-snapshots"), Listed::Entries(0));
    assert_eq!(cms.listing.shows("rke2-etcd-snapshots"), Listed::Absent);
    assert_eq!(ls.len(), 1);
}

#[test]
fn every_table_reaches_the_source_and_a_skipped_one_is_noted() {
    let mut source = Source::default();
    add_all(
        detect(PASTE).unwrap(),
        "paste.txt",
        "paste.txt",
        &mut source,
    );
    assert_eq!(source.complete, ["Lease", "Node", "ETCDSnapshotFile"]);
    assert_eq!(source.built.len(), 4, "two locks, one node, one snapshot");
    assert_eq!(source.nodes_from_table.as_deref(), Some("paste.txt"));
    let listing = source.configmap_listing.expect("the ConfigMap table");
    assert_eq!(listing.file, "paste.txt");
    assert!(
        source
            .notes
            .iter()
            .any(|n| n.contains("skipped a `NAME READY STATUS RESTARTS AGE` table in paste.txt")),
        "{:?}",
        source.notes
    );
}

#[test]
fn tables_no_reader_knows_are_skipped_and_alone_leave_the_file_to_the_dump_parser() {
    // Whatever its place, a table no reader knows does not hide the ones that are read.
    let text = "NAME STATUS AGE\ns1 Ready 1d\n\nNAME DATA AGE\nk3s-etcd-snapshots 0 1d\n";
    let pasted = detect(text).expect("the ConfigMap table is read");
    assert_eq!(pasted.skipped, ["NAME STATUS AGE"]);
    assert!(matches!(pasted.tables[..], [PastedTable::ConfigMaps(_)]));
    assert_eq!(
        detect("NAME STATUS AGE\ns1 Ready 1d\n"),
        None,
        "no table it reads"
    );
    assert_eq!(
        detect("k3s-etcd-snapshots 0 41d\nNAME DATA AGE\n"),
        None,
        "a fragment first"
    );
}
