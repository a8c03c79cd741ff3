//! `dump-incomplete` for the ConfigMap comparison: a dump or bundle without the
//! ETCDSnapshotFiles or the ConfigMaps it compares.

use super::snapshot_finding_context::Context;
use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::model::configmap_listing::Listed;
use crate::model::datastore::Datastore;
use crate::model::kinds::Kind;

pub(super) fn dump_gap(ctx: &Context<'_>) -> Option<Finding> {
    if !ctx.state.origin.is_dump() {
        return None;
    }
    // Kine (sqlite, or an external SQL datastore) takes no etcd snapshots: nothing is missing.
    if matches!(
        ctx.leases.cluster.datastore,
        Datastore::Sqlite | Datastore::ExternalSql
    ) {
        return None;
    }
    // A pasted ConfigMap table that shows the snapshot ConfigMap, or its absence, is enough to
    // compare against (as far as it shows).
    let configmap_unread = ctx.state.configmaps.is_none()
        && !matches!(ctx.listed, Some((_, Listed::Entries(_) | Listed::Absent)));
    let missing = match (ctx.state.snapshot_files.is_none(), configmap_unread) {
        (true, true) => "ETCDSnapshotFiles or ConfigMaps",
        (true, false) => "ETCDSnapshotFiles",
        (false, true) => "ConfigMaps from kube-system",
        (false, false) => return None,
    };
    // A support bundle's reader names the files that would have held them, and why not.
    let from_bundle: Vec<_> = [
        ctx.state
            .snapshot_files
            .is_none()
            .then(|| ctx.state.gap(Kind::SnapshotFile.name())),
        configmap_unread.then(|| ctx.state.gap(Kind::ConfigMap.name())),
    ]
    .into_iter()
    .flatten()
    .flatten()
    .collect();
    if !from_bundle.is_empty() {
        let files = from_bundle
            .iter()
            .map(|g| g.missing.as_str())
            .collect::<Vec<_>>()
            .join(" and ");
        let fixes = from_bundle
            .iter()
            .map(|g| g.fix.as_str())
            .collect::<Vec<_>>()
            .join("; ");
        return Some(
            Finding::new(
                Severity::Warning,
                FindingCode::DumpIncomplete,
                "dump",
                format!("the bundle has no {files}: the snapshot ConfigMap was not compared"),
            )
            .fix(fixes),
        );
    }
    Some(
        Finding::new(
            Severity::Warning,
            FindingCode::DumpIncomplete,
            "dump",
            format!("the dump has no {missing}: the snapshot ConfigMap was not compared"),
        )
        .fix(
            "add `kubectl get etcdsnapshotfiles -o yaml` and `kubectl -n kube-system get configmaps -o yaml` to the dump",
        ),
    )
}
