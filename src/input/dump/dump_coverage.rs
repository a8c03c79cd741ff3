//! Whether a dump holds any of the objects a command is about. A dump without them (a 0-byte
//! file, a list of unrelated objects, a `kubectl get` that failed and wrote nothing) must not
//! read as a healthy cluster. Pure.

use crate::model::cluster_state::{ClusterState, Origin};
use crate::model::kinds::Kind;

/// What a command reads first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Primary {
    /// `leases`, `leases follow`: Leases or lock ConfigMaps in kube-system.
    Locks,
    /// `snapshots list|diff|backfill`: ETCDSnapshotFiles or kube-system ConfigMaps.
    Snapshots,
    /// `check`: anything at least one analyser can run on.
    Anything,
}

const LOCKS_COMMAND: &str = "kubectl -n kube-system get leases,configmaps -o yaml > locks.yaml";
const SNAPSHOTS_COMMAND: &str = "{ kubectl get etcdsnapshotfiles.k3s.cattle.io -o yaml; echo ---; kubectl -n kube-system get configmaps -o yaml; } > snapshots.yaml";
const EVERYTHING_COMMAND: &str = "{ kubectl get nodes,etcdsnapshotfiles.k3s.cattle.io -o yaml; echo ---; kubectl -n kube-system get leases,configmaps -o yaml; echo ---; kubectl -n default get endpoints,endpointslices -o yaml; } > k3s-dump.yaml";

/// The one-line reason a dump cannot answer the command, naming the `kubectl` command that
/// adds what it lacks; `None` when the command's objects are there (or the state is live).
pub(crate) fn lacking(state: &ClusterState, primary: Primary) -> Option<String> {
    let Origin::Dump { paths } = &state.origin else {
        return None;
    };
    let has_locks = state.leases.as_ref().is_some_and(|l| !l.is_empty())
        || state
            .configmaps
            .iter()
            .flatten()
            .any(|c| c.leader_record().is_some());
    // A pasted ConfigMap table showing the snapshot ConfigMap: `check` says what its count
    // cannot be judged against.
    let has_listing = state
        .configmap_listing
        .as_ref()
        .is_some_and(|l| !l.entries.is_empty() || l.whole_namespace);
    let has_snapshot_files = state.snapshot_files.as_ref().is_some_and(|s| !s.is_empty());
    let has_snapshots = has_snapshot_files
        || state.configmaps.as_ref().is_some_and(|c| !c.is_empty())
        || has_listing;
    let has_nodes = state.nodes.as_ref().is_some_and(|n| !n.is_empty());
    let dump = paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let (what, command) = match primary {
        Primary::Locks if !has_locks => (
            "no Leases and no lock ConfigMaps from kube-system",
            LOCKS_COMMAND,
        ),
        Primary::Snapshots if !has_snapshots => (
            "neither ETCDSnapshotFiles nor ConfigMaps from kube-system",
            SNAPSHOTS_COMMAND,
        ),
        // ConfigMaps that hold no lock feed no analyser on their own: the snapshot check also
        // needs the ETCDSnapshotFiles.
        Primary::Anything if !has_locks && !has_snapshot_files && !has_nodes && !has_listing => (
            "none of the objects k3sdoctor checks (Nodes, ETCDSnapshotFiles, kube-system Leases and ConfigMaps)",
            EVERYTHING_COMMAND,
        ),
        _ => return None,
    };
    if state.bundles.is_empty() {
        return Some(format!(
            "the dump {dump} has {what}; add them with `{command}` and pass that file with --from-file"
        ));
    }
    // A support bundle's reader knows why: the collector's own gaps, named by file.
    let kinds: &[Kind] = match primary {
        Primary::Locks => &[Kind::Lease, Kind::ConfigMap],
        Primary::Snapshots => &[Kind::SnapshotFile, Kind::ConfigMap],
        Primary::Anything => &[Kind::Node, Kind::Lease, Kind::ConfigMap, Kind::SnapshotFile],
    };
    let why: Vec<&str> = kinds
        .iter()
        .filter_map(|k| state.gap(k.name()))
        .map(|g| g.missing.as_str())
        .collect();
    let why = if why.is_empty() {
        String::new()
    } else {
        format!(" (no {})", why.join(", no "))
    };
    Some(format!(
        "the support bundle {dump} has {what}{why}; add them with `{command}` and pass that file with \
         another --from-file"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::test_cluster::TestCluster;

    fn empty_dump() -> ClusterState {
        ClusterState {
            origin: Origin::Dump {
                paths: vec!["empty.yaml".into()],
            },
            ..ClusterState::default()
        }
    }

    #[test]
    fn an_empty_dump_lacks_everything() {
        let state = empty_dump();
        for primary in [Primary::Locks, Primary::Snapshots, Primary::Anything] {
            let line = lacking(&state, primary).unwrap();
            assert!(line.starts_with("the dump empty.yaml has "), "{line}");
            assert!(line.contains("kubectl "), "{line}");
        }
    }

    #[test]
    fn nodes_alone_let_check_run_but_not_leases() {
        let mut state = empty_dump();
        state.nodes = TestCluster::k3s()
            .server("s1", "v1.29.4+k3s1")
            .build()
            .nodes;
        assert!(lacking(&state, Primary::Anything).is_none());
        assert!(
            lacking(&state, Primary::Locks)
                .unwrap()
                .contains("no Leases")
        );
    }

    #[test]
    fn configmaps_without_locks_feed_no_check() {
        let mut state = empty_dump();
        state.configmaps = TestCluster::k3s()
            .snapshot_configmap(&[])
            .build()
            .configmaps;
        assert!(lacking(&state, Primary::Anything).is_some());
        assert!(lacking(&state, Primary::Snapshots).is_none());
    }

    #[test]
    fn a_bundle_says_why_it_lacks_them() {
        let mut state = empty_dump();
        state
            .bundles
            .push(crate::model::bundle_provenance::BundleSource {
                path: "b.tgz".into(),
                collector: crate::model::bundle_provenance::Collector::RancherLogs,
                container: "gzip tar".into(),
                collected_at: None,
                collected_at_from: None,
                files: Vec::new(),
                not_collected: Vec::new(),
            });
        state.gaps.push(crate::model::source_gap::SourceGap {
            kind: "ETCDSnapshotFile",
            missing: "ETCDSnapshotFiles (not collected)".into(),
            fix: String::new(),
        });
        let line = lacking(&state, Primary::Snapshots).unwrap();
        assert!(
            line.starts_with("the support bundle empty.yaml has neither ETCDSnapshotFiles nor ConfigMaps from kube-system (no ETCDSnapshotFiles (not collected));"),
            "{line}"
        );
    }

    #[test]
    fn a_live_state_is_never_lacking() {
        assert!(lacking(&ClusterState::default(), Primary::Locks).is_none());
    }

    #[test]
    fn a_partial_dump_is_not_lacking() {
        let state = TestCluster::k3s()
            .server("s1", "v1.29.4+k3s1")
            .lease("k3s", "s1", 1)
            .into_dump()
            .build();
        assert!(lacking(&state, Primary::Locks).is_none());
    }
}
