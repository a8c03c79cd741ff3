//! `snapshot-reconcile-stalled`: an etcd server whose snapshot reconcile has stopped. Each
//! server stamps `etcd.<prog>.cattle.io/local-snapshots-timestamp` on its own Node at the end
//! of every `reconcileSnapshotData` (pkg/etcd/snapshot.go): at start, after each snapshot,
//! prune and delete, and on releases with PR #11881 every `--etcd-snapshot-reconcile-interval`
//! (default 10m, 5 % jitter; pkg/cluster/cluster.go). So the stamp is at most an interval old
//! there, and at most a schedule gap old before. A failed ETCDSnapshotFile outliving the 24 h
//! `errorTTL` plus that bound says the same: its owner did not reconcile. Pure.

use jiff::{SignedDuration, Timestamp};

use crate::diagnose::control_plane::etcd_settings::{
    EtcdServer, etcd_servers, go_duration, node_refs,
};
use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::diagnose::object_ref::ObjectRef;
use crate::distro::Distro;
use crate::model::cluster_state::ClusterState;
use crate::model::cron_schedule::longest_gap;
use crate::model::node::Readiness;

/// Room for a slow reconcile (an S3 listing with many objects) on top of the interval.
const RECONCILE_MARGIN: SignedDuration = SignedDuration::from_mins(5);
/// Room for a snapshot (a large database, an S3 upload) on top of the schedule's gap.
const SNAPSHOT_MARGIN: SignedDuration = SignedDuration::from_mins(30);
/// `errorTTL` (pkg/etcd/snapshot.go).
const ERROR_TTL: SignedDuration = SignedDuration::from_hours(24);

/// How old the stamp may grow on this server, and the words that say why.
pub(crate) struct ReconcileBound {
    pub limit: SignedDuration,
    pub why: String,
}

/// `None` when it cannot be told: no node-args (whether snapshots are on, and the interval,
/// are unknown), snapshots disabled, or a schedule this reader cannot judge.
pub(crate) fn reconcile_bound(server: &EtcdServer) -> Option<ReconcileBound> {
    server.args.as_ref()?;
    // The stamps came with ETCDSnapshotFiles (commit 550ab36ab, Oct 2023): older servers
    // never write them.
    if server
        .node
        .version
        .as_ref()
        .is_some_and(|v| !v.has_snapshot_crds())
    {
        return None;
    }
    if !server.snapshots_enabled() {
        // No startup or periodic reconcile with --etcd-disable-snapshots (cluster.go).
        return None;
    }
    let periodic = server
        .node
        .version
        .as_ref()
        .and_then(|v| v.periodic_snapshot_reconcile());
    let version = server.node.kubelet_version.as_str();
    match periodic {
        Some(p) if p.yes => {
            let interval = server.reconcile_interval();
            let jitter = SignedDuration::from_millis(interval.as_millis() as i64 / 20);
            Some(ReconcileBound {
                limit: interval + jitter + RECONCILE_MARGIN,
                why: format!(
                    "{version} reconciles every {} (--etcd-snapshot-reconcile-interval){}",
                    go_duration(interval),
                    if p.inferred { " (inferred)" } else { "" }
                ),
            })
        }
        _ => {
            let gap = longest_gap(server.schedule())?;
            Some(ReconcileBound {
                limit: gap + SNAPSHOT_MARGIN,
                why: format!(
                    "{} only reconciles at snapshots, at most {} apart (--etcd-snapshot-schedule-cron {:?}){}",
                    if version.is_empty() {
                        "this version"
                    } else {
                        version
                    },
                    go_duration(gap),
                    server.schedule(),
                    if periodic.is_none() {
                        "; its version could not tell whether it also reconciles periodically"
                    } else {
                        ""
                    }
                ),
            })
        }
    }
}

pub(crate) fn analyse_reconcile_stalled(
    state: &ClusterState,
    distro: Distro,
    now: Timestamp,
) -> Vec<Finding> {
    let annotation = distro.etcd_annotation("local-snapshots-timestamp");
    let mut findings = Vec::new();
    for server in etcd_servers(state.nodes(), distro) {
        let Some(bound) = reconcile_bound(&server) else {
            continue;
        };
        let node = &server.node.name;
        let stamp = server.node.annotations.get(&annotation);
        let stalled = match stamp.map(|s| (s, s.parse::<Timestamp>())) {
            Some((_, Ok(at))) if now.duration_since(at) > bound.limit => Some(format!(
                "{annotation} is {} old ({at})",
                go_duration(now.duration_since(at))
            )),
            Some((_, Ok(_))) => None,
            Some((text, Err(_))) => {
                Some(format!("{annotation} is not an RFC 3339 time ({text:?})"))
            }
            None if server
                .node
                .created
                .is_some_and(|c| now.duration_since(c) <= bound.limit) =>
            {
                None
            }
            None => Some(format!(
                "{annotation} is missing, though snapshots are enabled: its startup reconcile never succeeded"
            )),
        };
        if let Some(mut what) = stalled {
            if server.node.readiness != Readiness::Ready {
                what.push_str(&format!(" (the Node is {})", server.node.readiness.label()));
            }
            findings.push(
                Finding::new(
                    Severity::Warning,
                    FindingCode::SnapshotReconcileStalled,
                    format!("Node {node}"),
                    format!(
                        "etcd server {node}'s snapshot reconcile has stalled: {what}, and {} (allowed: {}); its \
                         ETCDSnapshotFiles no longer follow its files",
                        bound.why,
                        go_duration(bound.limit)
                    ),
                )
                .about(node_refs([node.as_str()]))
                .fix(format!(
                    "check {} on {node} (journalctl -u {} | grep -i reconcile)",
                    distro.server_unit(),
                    distro.server_unit()
                )),
            );
        }
    }
    findings.extend(failed_past_ttl(state, distro, now));
    findings
}

/// Failed ETCDSnapshotFiles kept past `errorTTL` plus their owner's reconcile bound: the owner's
/// next reconcile would have deleted them (snapshot.go L820-846).
fn failed_past_ttl(state: &ClusterState, distro: Distro, now: Timestamp) -> Vec<Finding> {
    let servers = etcd_servers(state.nodes(), distro);
    let files = state.snapshot_files.as_deref().unwrap_or_default();
    let mut findings = Vec::new();
    for server in &servers {
        let Some(bound) = reconcile_bound(server) else {
            continue;
        };
        let kept: Vec<String> = files
            .iter()
            // Its own local files: S3 ones are any S3 server's to delete.
            .filter(|f| {
                !f.deleting
                    && f.node_name.as_str() == server.node.name
                    && f.s3.is_none()
                    && !f.location.starts_with("s3://")
            })
            .filter(|f| {
                f.error
                    .as_ref()
                    .and_then(|e| e.time)
                    .is_some_and(|t| now.duration_since(t) > ERROR_TTL + bound.limit)
            })
            .map(|f| f.name.to_string())
            .collect();
        if kept.is_empty() {
            continue;
        }
        let node = &server.node.name;
        findings.push(
            Finding::new(
                Severity::Warning,
                FindingCode::SnapshotReconcileStalled,
                format!("Node {node}"),
                format!(
                    "{} failed ETCDSnapshotFile(s) of {node} are older than the 24 h error TTL plus {}: {node}'s \
                     reconcile would have deleted them, so it is not running ({}): {}",
                    kept.len(),
                    go_duration(bound.limit),
                    bound.why,
                    kept.join(", ")
                ),
            )
            .listing(&kept)
            .about(
                node_refs([node.as_str()])
                    .into_iter()
                    .chain(ObjectRef::snapshot_files(&kept).iter().cloned())
                    .collect::<Vec<_>>(),
            )
            .fix(format!(
                "check {} on {node} (journalctl -u {} | grep -i reconcile)",
                distro.server_unit(),
                distro.server_unit()
            )),
        );
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::test_cluster::{TestCluster, now};
    use serde_json::json;

    const STAMP: &str = "etcd.k3s.cattle.io/local-snapshots-timestamp";

    fn stamped(mins_ago: i64, args: &str) -> serde_json::Value {
        let at = now() - SignedDuration::from_mins(mins_ago);
        json!({"annotations": {STAMP: at.to_string(), "k3s.io/node-args": args}})
    }

    fn codes(state: &ClusterState) -> Vec<String> {
        analyse_reconcile_stalled(state, Distro::K3s, now())
            .into_iter()
            .map(|f| f.object)
            .collect()
    }

    #[test]
    fn periodic_releases_are_judged_by_the_interval() {
        let state = TestCluster::k3s()
            .server_with("fresh", "v1.33.5+k3s1", stamped(9, r#"["server"]"#))
            .server_with("stale", "v1.33.5+k3s1", stamped(16, r#"["server"]"#))
            .server_with(
                "slow",
                "v1.33.5+k3s1",
                stamped(
                    16,
                    r#"["server","--etcd-snapshot-reconcile-interval","30m"]"#,
                ),
            )
            .build();
        assert_eq!(codes(&state), ["Node stale"]);
        let f = &analyse_reconcile_stalled(&state, Distro::K3s, now())[0];
        assert!(f.message.contains("every 10m"), "{}", f.message);
    }

    #[test]
    fn the_version_boundary_switches_to_the_schedule() {
        // Two hours old: stalled on v1.32.3 (periodic), fine on v1.32.2 (12 h schedule).
        let state = TestCluster::k3s()
            .server_with("new", "v1.32.3+k3s1", stamped(120, r#"["server"]"#))
            .server_with("old", "v1.32.2+k3s1", stamped(120, r#"["server"]"#))
            .build();
        assert_eq!(codes(&state), ["Node new"]);
        // Past the schedule's 12 h + margin, the old one stalls too.
        let state = TestCluster::k3s()
            .server_with("old", "v1.32.2+k3s1", stamped(13 * 60, r#"["server"]"#))
            .build();
        assert_eq!(codes(&state), ["Node old"]);
    }

    #[test]
    fn inferred_versions_say_so() {
        let state = TestCluster::k3s()
            .server_with("s", "v1.30.11+k3s1", stamped(60, r#"["server"]"#))
            .build();
        let f = analyse_reconcile_stalled(&state, Distro::K3s, now());
        assert!(f[0].message.contains("(inferred)"), "{}", f[0].message);
    }

    #[test]
    fn a_missing_stamp_fires_unless_snapshots_are_off_or_the_node_is_new() {
        let state = TestCluster::k3s()
            .server_with(
                "plain",
                "v1.34.6+k3s1",
                json!({"annotations": {"k3s.io/node-args": r#"["server"]"#}}),
            )
            // Without node-args nobody can tell whether snapshots are on.
            .server("unknown", "v1.34.6+k3s1")
            .server_with(
                "off",
                "v1.34.6+k3s1",
                json!({"annotations": {"k3s.io/node-args": r#"["server","--etcd-disable-snapshots"]"#}}),
            )
            .agent("agent", "v1.34.6+k3s1")
            // Before ETCDSnapshotFiles (Oct 2023) no server stamps its Node.
            .server_with(
                "older",
                "v1.27.6+k3s1",
                json!({"annotations": {"k3s.io/node-args": r#"["server"]"#}}),
            )
            .build();
        assert_eq!(codes(&state), ["Node plain"]);
        let mut young = state.clone();
        young.nodes.as_mut().unwrap()[0].created = Some(now() - SignedDuration::from_mins(2));
        assert!(codes(&young).is_empty());
    }

    #[test]
    fn a_failed_snapshot_past_the_error_ttl_fires() {
        let failed = |name: &str, hours_ago: i64| {
            let t = (now() - SignedDuration::from_hours(hours_ago)).to_string();
            json!({"metadata": {"name": name}, "spec": {"snapshotName": name, "nodeName": "s1", "location": ""},
                   "status": {"readyToUse": false, "error": {"time": t, "message": "no space"}}})
        };
        let state = TestCluster::k3s()
            .server_with("s1", "v1.34.6+k3s1", stamped(1, r#"["server"]"#))
            .snapshot_json(failed("local-old", 25))
            .snapshot_json(failed("local-new", 23))
            .build();
        let f = analyse_reconcile_stalled(&state, Distro::K3s, now());
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].message.contains("local-old") && !f[0].message.contains("local-new"));
    }
}
