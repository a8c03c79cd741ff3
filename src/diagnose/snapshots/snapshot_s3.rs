//! S3 snapshots against what the servers' flags promise (k3s `pkg/etcd/s3`, k3s-io/k3s#13769):
//! - `snapshot-s3-retention`: the count of scheduled S3 snapshots in a folder against the
//!   retention this version applies, and the k3s-io/k3s#13769 window where a raised
//!   `--etcd-snapshot-retention` no longer reaches S3;
//! - `snapshot-s3-retention-cluster-wide`: S3 retention counts every server's uploads
//!   together (`SnapshotRetention` in pkg/etcd/s3/s3.go lists the folder without a node filter);
//! - `snapshot-s3-listing-suspect`: `s3-snapshots-timestamp` is fresh, yet no S3 snapshot is as
//!   new as the schedule promises (k3s stamps it even when the listing fails).
//!
//! Only servers with `--etcd-s3` in node-args are judged; S3 set up only through
//! `--etcd-s3-config-secret` shows no retention there and is left alone. Pure.

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};

use super::snapshot_reconcile_stalled::reconcile_bound;
use crate::diagnose::control_plane::etcd_settings::{
    DEFAULT_RETENTION, EtcdServer, etcd_servers, go_duration, node_refs,
};
use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::distro::Distro;
use crate::model::cluster_state::ClusterState;
use crate::model::cron_schedule::longest_gap;
use crate::model::snapshot_file::SnapshotFile;
use crate::version::S3RetentionRule;

/// Room for a snapshot and its upload on top of the schedule's gap (at most the gap itself:
/// k3s's cron skips a run while the previous one still runs).
const UPLOAD_MARGIN: SignedDuration = SignedDuration::from_mins(30);

fn upload_margin(gap: SignedDuration) -> SignedDuration {
    UPLOAD_MARGIN.min(gap)
}

fn is_s3(f: &SnapshotFile) -> bool {
    f.s3.is_some() || f.location.starts_with("s3://")
}

/// The retention S3 gets from this server, and how it got it.
fn s3_retention(server: &EtcdServer) -> Option<(i64, String, bool)> {
    let (rule, inferred) = server.node.version.as_ref()?.s3_retention_rule()?;
    let snap = server.snapshot_retention_set();
    let s3 = server.s3_retention_set();
    Some(match rule {
        S3RetentionRule::SnapshotRetention => match snap {
            Some(n) => (n, "--etcd-snapshot-retention".into(), inferred),
            None => (
                DEFAULT_RETENTION,
                "the default of --etcd-snapshot-retention".into(),
                inferred,
            ),
        },
        S3RetentionRule::S3FlagOnly => match s3 {
            Some(n) => (n, "--etcd-s3-retention".into(), inferred),
            None => (
                DEFAULT_RETENTION,
                "the default of --etcd-s3-retention".into(),
                inferred,
            ),
        },
        S3RetentionRule::S3FlagOrSnapshotRetention => match (s3, snap) {
            (Some(n), _) => (n, "--etcd-s3-retention".into(), inferred),
            (None, Some(n)) => (
                n,
                "--etcd-snapshot-retention (no --etcd-s3-retention)".into(),
                inferred,
            ),
            (None, None) => (
                DEFAULT_RETENTION,
                "the default of --etcd-s3-retention".into(),
                inferred,
            ),
        },
    })
}

fn inferred_note(inferred: bool) -> &'static str {
    if inferred { " (inferred)" } else { "" }
}

pub(crate) fn analyse_s3_snapshots(
    state: &ClusterState,
    distro: Distro,
    now: Timestamp,
) -> Vec<Finding> {
    let servers: Vec<EtcdServer> = etcd_servers(state.nodes(), distro)
        .into_iter()
        .filter(|s| s.s3_enabled() && s.snapshots_enabled())
        .collect();
    if servers.is_empty() {
        return Vec::new();
    }
    let files = state.snapshot_files.as_deref().unwrap_or_default();
    let mut findings = regression_window(&servers);
    findings.extend(retention_count(&servers, files));
    findings.extend(cluster_wide(&servers));
    findings.extend(listing_suspect(&servers, files, distro, now));
    findings
}

/// k3s-io/k3s#13769: on these versions S3 keeps `--etcd-s3-retention` (default 5) whatever
/// `--etcd-snapshot-retention` says; Rancher could not set the S3 one.
fn regression_window(servers: &[EtcdServer]) -> Vec<Finding> {
    let mut findings = Vec::new();
    for server in servers {
        let Some((version, (S3RetentionRule::S3FlagOnly, inferred))) = server
            .node
            .version
            .as_ref()
            .and_then(|v| Some((v, v.s3_retention_rule()?)))
        else {
            continue;
        };
        let (Some(local), None) = (server.snapshot_retention_set(), server.s3_retention_set())
        else {
            continue;
        };
        if local == DEFAULT_RETENTION {
            continue;
        }
        let node = &server.node.name;
        findings.push(
            Finding::new(
                Severity::Warning,
                FindingCode::SnapshotS3Retention,
                format!("Node {node}"),
                format!(
                    "{node} runs {version}{}, where S3 keeps --etcd-s3-retention (default {DEFAULT_RETENTION}) and \
                     ignores its --etcd-snapshot-retention {local} (k3s-io/k3s#13769): S3 holds {DEFAULT_RETENTION} \
                     scheduled snapshots, not {local}",
                    inferred_note(inferred)
                ),
            )
            .about(node_refs([node.as_str()]))
            .fix({
                let (target, inferred) = version.s3_retention_fixed_in();
                format!(
                    "set --etcd-s3-retention {local} on every etcd server (Rancher: as an extra server arg), or \
                     upgrade to {target}{} or later",
                    inferred_note(inferred)
                )
            }),
        );
    }
    findings
}

/// More scheduled snapshots in a folder than any server's retention allows (with one cycle of
/// uploads in flight): retention is not applied (e.g. k3s-io/k3s#10292).
fn retention_count(servers: &[EtcdServer], files: &[Arc<SnapshotFile>]) -> Vec<Finding> {
    let Some((limit, how, inferred)) = servers.iter().filter_map(s3_retention).max_by_key(|r| r.0)
    else {
        return Vec::new();
    };
    if limit < 1 {
        return Vec::new();
    }
    let prefix = format!("{}-", servers[0].snapshot_name());
    let mut folders: BTreeMap<String, Vec<&SnapshotFile>> = BTreeMap::new();
    for f in files.iter().filter(|f| {
        is_s3(f) && !f.deleting && f.ready_to_use && f.snapshot_name.starts_with(&prefix)
    }) {
        let folder =
            f.s3.as_ref()
                .map(|s| format!("s3://{}/{}", s.bucket, s.prefix))
                .unwrap_or_else(|| "s3".into());
        folders.entry(folder).or_default().push(f);
    }
    let in_flight = servers.len() as i64;
    folders
        .into_iter()
        .filter(|(_, kept)| kept.len() as i64 > limit + in_flight)
        .map(|(folder, kept)| {
            let names: Vec<String> = kept.iter().map(|f| f.name.to_string()).collect();
            Finding::new(
                Severity::Warning,
                FindingCode::SnapshotS3Retention,
                format!("ETCDSnapshotFiles in {folder}"),
                format!(
                    "{folder} holds {} scheduled snapshots ({prefix}*) but S3 retention is {limit} ({how}{}): \
                     retention is not being applied (e.g. k3s-io/k3s#10292)",
                    kept.len(),
                    inferred_note(inferred)
                ),
            )
            .about_listing(crate::diagnose::object_ref::ObjectRef::snapshot_files(&names))
            .fix(
                "check the etcd servers' logs for S3 retention errors; set --etcd-s3-retention (and, before the \
                 2026-03 releases, --etcd-snapshot-retention) to the count to keep",
            )
        })
        .collect()
}

/// S3 retention is one count for every server's uploads: M servers keep about N/M cycles.
fn cluster_wide(servers: &[EtcdServer]) -> Option<Finding> {
    let uploaders = servers.len() as i64;
    if uploaders < 2 {
        return None;
    }
    let (limit, how, _) = servers
        .iter()
        .filter_map(s3_retention)
        .min_by_key(|r| r.0)?;
    let local = servers.iter().map(EtcdServer::local_retention).max()?;
    if limit < 1 || limit >= local * uploaders {
        return None;
    }
    Some(
        Finding::new(
            Severity::Info,
            FindingCode::SnapshotS3RetentionClusterWide,
            "etcd server Nodes",
            format!(
                "S3 retention ({limit}, {how}) counts all {uploaders} etcd servers' uploads together, so S3 keeps \
                 about {:.1} snapshot cycles while each server keeps {local} locally",
                limit as f64 / uploaders as f64
            ),
        )
        .about(node_refs(servers.iter().map(|s| s.node.name.as_str())))
        .fix(format!(
            "to keep {local} cycles in S3, set --etcd-s3-retention {} on every etcd server",
            local * uploaders
        )),
    )
}

/// Fresh `s3-snapshots-timestamp` yet nothing in S3 as new as the schedule promises.
fn listing_suspect(
    servers: &[EtcdServer],
    files: &[Arc<SnapshotFile>],
    distro: Distro,
    now: Timestamp,
) -> Option<Finding> {
    let annotation = distro.etcd_annotation("s3-snapshots-timestamp");
    let newest: Option<Timestamp> = files
        .iter()
        .filter(|f| is_s3(f) && !f.deleting && f.ready_to_use)
        .filter_map(|f| f.creation_time.or(f.created))
        .max();
    let mut fresh = Vec::new();
    let mut allowed = None;
    for server in servers {
        let (Some(bound), Some(gap)) = (reconcile_bound(server), longest_gap(server.schedule()))
        else {
            continue;
        };
        let Some(Ok(stamp)) = server
            .node
            .annotations
            .get(&annotation)
            .map(|s| s.parse::<Timestamp>())
        else {
            continue;
        };
        let up_long_enough = server
            .node
            .created
            .is_none_or(|c| now.duration_since(c) > gap + upload_margin(gap));
        if now.duration_since(stamp) <= bound.limit && up_long_enough {
            fresh.push((server.node.name.as_str(), stamp));
            allowed = Some(allowed.map_or(gap, |a: SignedDuration| a.min(gap)));
        }
    }
    let gap = allowed?;
    if newest.is_some_and(|n| now.duration_since(n) <= gap + upload_margin(gap)) {
        return None;
    }
    let newest_text = match newest {
        Some(n) => format!(
            "the newest S3 snapshot is {} old ({n})",
            go_duration(now.duration_since(n))
        ),
        None => "there is no S3 snapshot at all".to_string(),
    };
    let names: Vec<String> = fresh.iter().map(|(n, t)| format!("{n} ({t})")).collect();
    Some(
        Finding::new(
            Severity::Warning,
            FindingCode::SnapshotS3ListingSuspect,
            "etcd server Nodes",
            format!(
                "S3 is configured (--etcd-s3) and {annotation} is fresh on {}, yet {newest_text} while the schedule \
                 snapshots every {} at most: the S3 listing or upload is failing (k3s stamps the Node even when \
                 listing fails)",
                names.join(", "),
                go_duration(gap)
            ),
        )
        .listing(&names)
        .about(node_refs(fresh.iter().map(|(n, _)| *n)))
        .fix(format!(
            "on an etcd server, run `{} etcd-snapshot ls` and check its log for S3 errors (credentials, endpoint, \
             bucket, --etcd-s3-folder)",
            distro.prog()
        )),
    )
}

#[cfg(test)]
mod tests;
