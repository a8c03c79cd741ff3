//! The `snapshot-files` analyser: what the ETCDSnapshotFiles themselves say, apart from the
//! ConfigMap — failed snapshots, deletions nobody finishes, files of nodes that left, and (in
//! `snapshot_provenance`) rotated tokens and other clusters' S3 objects. Sources:
//! k3s `pkg/etcd/snapshot.go` (failed saves, `snapshot-token-hash`) and k3s-io/k3s#8678.

use jiff::{SignedDuration, Timestamp};
use std::sync::Arc;

use super::snapshot_provenance::{s3_foreign, token_rotated};
use super::snapshot_record_empty::analyse_empty_records;
use crate::age;
use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::diagnose::leases::LeaseAnalysis;
use crate::diagnose::object_ref::ObjectRef;
use crate::distro::Distro;
use crate::model::cluster_state::ClusterState;
use crate::model::node::NodeFacts;
use crate::model::snapshot_file::{CONTROLLER_FINALIZER, SnapshotFile};

/// k3s keeps a failed ETCDSnapshotFile for `errorTTL = 24 * time.Hour` after its error
/// (pkg/etcd/snapshot.go L46); past that, reconcile deletes it and it is
/// `snapshot-reconcile-stalled`'s to judge.
const ERROR_TTL: SignedDuration = SignedDuration::from_hours(24);

/// How long a deletion may wait on the controller's finalizer before it counts as stuck: the
/// `<prog>-etcd` leader removes it within seconds (`OnRemove` in pkg/etcd/snapshot_controller.go),
/// and a new leader takes over within the 45 s lease (wrangler pkg/leader/leader.go).
pub(crate) const DELETION_GRACE: SignedDuration = SignedDuration::from_mins(5);

/// The Node annotation k3s's reconcile sets last (pkg/etcd/snapshot.go L52).
const LOCAL_RECONCILED: &str = "local-snapshots-timestamp";

/// Why the analyser could not run, or `None` when it has what it needs.
pub(crate) fn missing_input(state: &ClusterState) -> Option<&'static str> {
    if state.snapshot_crd_missing {
        Some("the ETCDSnapshotFile CRD is not installed (releases before Oct 2023)")
    } else if state.snapshot_files.is_none() {
        Some("ETCDSnapshotFiles were not read: not in the dump, or not allowed")
    } else if state.nodes.is_none() {
        Some("Nodes were not read: not in the dump, or not allowed")
    } else {
        None
    }
}

/// `leases` tells whether a split on an affected version has stopped the snapshot controller
/// (k3s-io/k3s#10046): then a stuck deletion is that split's doing.
pub(crate) fn analyse_snapshot_files(
    state: &ClusterState,
    distro: Distro,
    now: Timestamp,
    leases: &LeaseAnalysis,
) -> Vec<Finding> {
    let files = state.snapshot_files.as_deref().unwrap_or_default();
    // Judged from the CRs alone: it runs on inputs without Nodes too (a pasted CR list).
    // Only pasted `etcd-snapshot ls` output is partial, and it names records by their keys.
    let empty = analyse_empty_records(files, state.nodes(), distro, state.snapshots_partial);
    if missing_input(state).is_some() {
        return empty.into_iter().collect();
    }
    let mut out = failed(files, state.nodes(), distro, now);
    out.extend(empty);
    let controller_stopped = leases
        .findings
        .iter()
        .any(|f| f.code == FindingCode::LeaseSplit && f.severity == Severity::Error);
    out.extend(deletion_stuck(
        files,
        state,
        distro,
        now,
        controller_stopped,
    ));
    out.extend(of_removed_node(files, state.nodes(), distro));
    // Another cluster's S3 objects carry its token hash: no rotation of this cluster's.
    let foreign = s3_foreign(files, state.nodes(), distro);
    let foreign_names: Vec<String> = foreign
        .iter()
        .flat_map(|f| f.object_refs.iter().map(|r| r.name.clone()))
        .collect();
    let foreign_names: Vec<&str> = foreign_names.iter().map(String::as_str).collect();
    out.extend(token_rotated(files, distro, &foreign_names));
    out.extend(foreign);
    out
}

fn etcd_nodes(nodes: &[NodeFacts]) -> impl Iterator<Item = &NodeFacts> {
    nodes.iter().filter(|n| n.has_etcd_role() && !n.deleting)
}

fn when(t: Option<Timestamp>) -> String {
    t.map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|| "an unknown time".into())
}

fn storage(f: &SnapshotFile, distro: Distro) -> &'static str {
    if f.in_s3(distro) { "s3" } else { "local" }
}

/// `snapshot-failed`: an error from the last 24 h. Error when every etcd node's newest
/// snapshot of that storage failed: no node has a usable fresh backup there.
fn failed(
    files: &[Arc<SnapshotFile>],
    nodes: &[NodeFacts],
    distro: Distro,
    now: Timestamp,
) -> Vec<Finding> {
    let recent: Vec<&SnapshotFile> = files
        .iter()
        .map(|f| &**f)
        .filter(|f| f.is_failed() && !f.deleting)
        .filter(|f| {
            f.taken_at()
                .is_some_and(|t| now.duration_since(t) < ERROR_TTL)
        })
        .collect();
    let all_failed = |kind: &str| {
        let mut any = false;
        for node in etcd_nodes(nodes) {
            let newest = files
                .iter()
                .filter(|f| {
                    f.node_name.as_str() == node.name && storage(f, distro) == kind && !f.deleting
                })
                .max_by_key(|f| f.taken_at());
            match newest {
                Some(f) if f.is_failed() => any = true,
                _ => return false,
            }
        }
        any
    };
    let (local_all, s3_all) = (all_failed("local"), all_failed("s3"));
    let mut groups: std::collections::BTreeMap<(&str, &str), Vec<&SnapshotFile>> =
        Default::default();
    for f in recent {
        groups
            .entry((f.node_name.as_str(), storage(f, distro)))
            .or_default()
            .push(f);
    }
    groups
        .into_iter()
        .map(|((node, kind), mut group)| {
            group.sort_by_key(|f| std::cmp::Reverse(f.taken_at()));
            let newest = group[0];
            let everywhere = if kind == "s3" { s3_all } else { local_all };
            let message = newest
                .error
                .as_ref()
                .and_then(|e| e.message.clone())
                .unwrap_or_else(|| "no message".into());
            let count = if group.len() == 1 {
                format!("{kind} snapshot {}", newest.snapshot_name)
            } else {
                format!(
                    "{} {kind} snapshots in the last 24 h, the newest {},",
                    group.len(),
                    newest.snapshot_name
                )
            };
            // An S3 client that failed to start records node `s3` (pkg/etcd/snapshot.go L358-375).
            let on = if node == "s3" {
                "on S3 (the uploading node is not recorded)".to_string()
            } else {
                format!("on node {node}")
            };
            let mut text = format!("{count} failed {on} at {}: {message}", when(newest.taken_at()));
            if everywhere {
                text.push_str(&format!(
                    "; the newest {kind} snapshot of every etcd node failed, so none has a fresh {kind} backup"
                ));
            }
            let names: Vec<String> = group.iter().map(|f| f.name.to_string()).collect();
            Finding::new(
                if everywhere {
                    Severity::Error
                } else {
                    Severity::Warning
                },
                FindingCode::SnapshotFailed,
                "ETCDSnapshotFiles",
                text,
            )
            .about(ObjectRef::snapshot_files(&names))
            .fix(format!(
                "fix what the error names, then take one: `{} etcd-snapshot save` on {node} (k3s deletes a failed \
                 record 24 h after its error)",
                distro.prog()
            ))
        })
        .collect()
}

/// Who should have removed a stuck finalizer, and why they did not.
fn who_removes_it(
    state: &ClusterState,
    distro: Distro,
    now: Timestamp,
    controller_stopped: bool,
) -> String {
    let lock = distro.etcd_lock();
    let holder = state
        .leases
        .as_deref()
        .unwrap_or_default()
        .iter()
        .find(|l| l.name == lock && !l.is_apiserver_identity())
        .map(|l| &l.record)
        .filter(|r| !r.is_released() && r.expires_at().is_some_and(|t| t > now));
    match (&state.leases, holder) {
        _ if controller_stopped => format!(
            "{} and {lock} are held by different servers on an affected version, so the snapshot controller \
             that removes the finalizer never started (k3s-io/k3s#10046)",
            distro.core_lock()
        ),
        (None, _) => format!(
            "the Lease kube-system/{lock} was not read, so who should remove it is not known"
        ),
        (_, Some(r)) => format!(
            "kube-system/{lock} is held by {} and fresh, so its snapshot controller should have removed it: \
             check that server's log",
            r.holder_identity
        ),
        (_, None) => format!(
            "kube-system/{lock} has no fresh holder, and nobody else removes it: it goes once a server takes \
             the lease"
        ),
    }
}

/// A JSON patch that removes exactly the controller's finalizer of `f`, and fails if the
/// list changed since.
fn finalizer_patch(f: &SnapshotFile) -> String {
    let index = f
        .finalizers
        .iter()
        .position(|x| x == CONTROLLER_FINALIZER)
        .unwrap_or(0);
    format!(
        r#"[{{"op":"test","path":"/metadata/finalizers/{index}","value":"{CONTROLLER_FINALIZER}"}},{{"op":"remove","path":"/metadata/finalizers/{index}"}}]"#
    )
}

/// `snapshot-deletion-stuck`: only the `<prog>-etcd` leader's controller removes the finalizer
/// (pkg/etcd/etcd.go L659-676); nothing else in k3s does.
fn deletion_stuck(
    files: &[Arc<SnapshotFile>],
    state: &ClusterState,
    distro: Distro,
    now: Timestamp,
    controller_stopped: bool,
) -> Option<Finding> {
    let lock = distro.etcd_lock();
    let leader = who_removes_it(state, distro, now, controller_stopped);
    let stuck: Vec<(&SnapshotFile, SignedDuration)> = files
        .iter()
        .map(|f| &**f)
        .filter(|f| f.deleting && f.has_controller_finalizer())
        .filter_map(|f| {
            let waited = now.duration_since(f.deletion_time?);
            (waited > DELETION_GRACE).then_some((f, waited))
        })
        .collect();
    let longest = stuck.iter().map(|(_, w)| *w).max()?;
    let names: Vec<String> = stuck.iter().map(|(f, _)| f.name.to_string()).collect();
    let what = if let [(f, _)] = stuck.as_slice() {
        format!(
            "ETCDSnapshotFile {} ({} on {}) has been terminating for {}",
            f.name,
            f.snapshot_name,
            f.node_name,
            age::short(longest)
        )
    } else {
        format!(
            "{} ETCDSnapshotFiles have been terminating for up to {} ({})",
            stuck.len(),
            age::short(longest),
            names.join(", ")
        )
    };
    let finding = Finding::new(
        Severity::Warning,
        FindingCode::SnapshotDeletionStuck,
        "ETCDSnapshotFiles",
        format!("{what}, held by the {CONTROLLER_FINALIZER} finalizer; {leader}"),
    )
    .about_listing(ObjectRef::snapshot_files(&names))
    .caused_by(controller_stopped.then_some(FindingCode::LeaseSplit));
    if controller_stopped {
        return Some(finding.fix(
            "k3sdoctor leases follow --fix (the controller then finishes the deletions and drops their ConfigMap \
             entries)",
        ));
    }
    let commands: Vec<String> = stuck
        .iter()
        .map(|(f, _)| {
            format!(
                "kubectl patch etcdsnapshotfiles.k3s.cattle.io {} --type=json -p '{}'",
                f.name,
                finalizer_patch(f)
            )
        })
        .collect();
    let mut finding = finding.fix(format!(
        "when the snapshot is truly gone (and no {lock} leader will come back), remove the finalizer: {} \
         (then k3sdoctor snapshots backfill --fix --prune drops the ConfigMap entry the controller would have \
         removed)",
        commands.join("; ")
    ));
    // An argv only where one command fixes it all.
    let [(first, _)] = stuck.as_slice() else {
        return Some(finding);
    };
    finding.remediation_command = [
        "kubectl",
        "patch",
        "etcdsnapshotfiles.k3s.cattle.io",
        &first.name,
        "--type=json",
        "-p",
        &finalizer_patch(first),
    ]
    .map(str::to_string)
    .to_vec();
    Some(finding)
}

/// `snapshot-file-of-removed-node`: every reconcile, on every etcd server with a Node, deletes
/// the ETCDSnapshotFiles whose storage node is no etcd-labelled Node (pkg/etcd/snapshot.go
/// L866-903). A local one that outlived a reconcile that ran after it was created means that
/// sweep is not running (or the node left after the newest reconcile: *inferred*, since a
/// Node's deletion time is gone with it).
fn of_removed_node(
    files: &[Arc<SnapshotFile>],
    nodes: &[NodeFacts],
    distro: Distro,
) -> Vec<Finding> {
    let annotation = distro.etcd_annotation(LOCAL_RECONCILED);
    let newest_reconcile = etcd_nodes(nodes)
        .filter_map(|n| {
            let at: Timestamp = n.annotations.get(&annotation)?.parse().ok()?;
            Some((at, n.name.as_str()))
        })
        .max();
    let Some((reconciled, by)) = newest_reconcile else {
        return Vec::new();
    };
    let current: Vec<&str> = etcd_nodes(nodes).map(|n| n.name.as_str()).collect();
    let left: Vec<&SnapshotFile> = files
        .iter()
        .map(|f| &**f)
        .filter(|f| !f.in_s3(distro) && !f.deleting)
        .filter(|f| {
            let node = f.storage_node(distro).unwrap_or(&f.node_name);
            !current.contains(&node)
        })
        .filter(|f| f.created.is_some_and(|c| c < reconciled))
        .collect();
    let mut by_node: std::collections::BTreeMap<&str, Vec<&SnapshotFile>> = Default::default();
    for f in left {
        by_node
            .entry(f.storage_node(distro).unwrap_or(&f.node_name))
            .or_default()
            .push(f);
    }
    by_node
        .into_iter()
        .map(|(node, files)| {
            let names: Vec<String> = files.iter().map(|f| f.name.to_string()).collect();
            Finding::new(
                Severity::Warning,
                FindingCode::SnapshotFileOfRemovedNode,
                "ETCDSnapshotFiles",
                format!(
                    "{} of node {node}, which is no current etcd Node, still present after the reconcile on {by} at \
                     {} (k3s's reconcile deletes them; if {node} left after that, the next one does, inferred): {}",
                    if names.len() == 1 { "1 local snapshot file".to_string() } else { format!("{} local snapshot files", names.len()) },
                    when(Some(reconciled)),
                    names.join(", ")
                ),
            )
            .about_listing(ObjectRef::snapshot_files(&names))
            .fix(format!(
                "kubectl delete etcdsnapshotfiles.k3s.cattle.io {} (their files left with {node}); if they come back, \
                 check that {} runs on an etcd server with a Node, as agentless servers skip the sweep",
                names.join(" "),
                distro.server_unit()
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests;
