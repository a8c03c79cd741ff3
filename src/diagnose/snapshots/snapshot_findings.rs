//! Findings of the snapshot analyser, each with its cause where one is known: a missing
//! entry on a cluster whose locks are split on an affected version is that bug, not a
//! reason to hand-edit the ConfigMap.

use jiff::{SignedDuration, Timestamp};

use super::entry_state::{CONFIGMAP_LIMIT, EntryState, OrphanedEntry};
use super::snapshot_entry_count::{self, EntryCount};
use super::snapshot_row::SnapshotRow;
use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::diagnose::leases::LeaseAnalysis;
use crate::diagnose::object_ref::ObjectRef;
use crate::distro::Distro;
use crate::input::ClusterState;
use crate::model::configmap_listing::Listed;
use crate::model::snapshot_file::{CONTROLLER_FINALIZER, SnapshotFile};

/// Per-CR observations the findings summarise.
#[derive(Debug, Default)]
pub struct Tally {
    /// CRs past the grace period without the controller's finalizer.
    pub without_finalizer: Vec<String>,
    /// (CR name, why) for names whose digest does not match.
    pub digest_mismatches: Vec<(String, String)>,
    pub with_metadata: usize,
}

impl Tally {
    pub fn count(
        &mut self,
        file: &SnapshotFile,
        state: EntryState,
        now: Timestamp,
        grace: SignedDuration,
    ) {
        if !file.metadata.is_empty() {
            self.with_metadata += 1;
        }
        let old_enough = file.created.is_some_and(|c| now.duration_since(c) > grace);
        if state != EntryState::Deleting && old_enough && !file.has_controller_finalizer() {
            self.without_finalizer.push(file.name.to_string());
        }
    }
}

pub struct Context<'a> {
    pub distro: Distro,
    pub state: &'a ClusterState,
    pub leases: &'a LeaseAnalysis,
    pub cm_name: &'a str,
    pub extra_metadata_present: bool,
    pub bytes: usize,
    /// Why k3s's controller cannot be writing now (`snapshot_writer`), when known.
    pub not_writing: Option<&'a str>,
    /// What a pasted ConfigMap table shows of the snapshot ConfigMap (file, what), when no
    /// object of it was read.
    pub listed: Option<(&'a str, Listed)>,
    /// Its entry count against the snapshots that should have one, when it is all it shows.
    pub entry_count: Option<&'a EntryCount>,
}

/// Every item of a list: the message in JSON and YAML is complete, and the table view shows
/// five of the finding's `listed` items (`render::findings`).
fn all(items: &[String]) -> String {
    items.join(", ")
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

pub fn findings(
    ctx: &Context<'_>,
    rows: &[SnapshotRow],
    orphaned: &[OrphanedEntry],
    legacy_keys: &[String],
    tally: &Tally,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let object = format!("ConfigMap kube-system/{}", ctx.cm_name);
    if let Some(file) = &ctx.state.snapshots_from_table {
        out.push(super::snapshot_table_gap::table_gap(
            file,
            ctx.state.snapshots_partial,
        ));
    }
    if let Some((file, listed)) = ctx.listed {
        let should_have = ctx.entry_count.map(|c| c.should_have_entry);
        let judged = should_have.filter(|_| ctx.state.snapshot_files.is_some());
        out.extend(snapshot_entry_count::table_gap(
            file,
            ctx.cm_name,
            listed,
            judged,
        ));
    }
    if let Some(gap) = dump_gap(ctx) {
        out.push(gap);
        return out;
    }
    let cause = split_cause(ctx);
    let because = match (&cause, ctx.not_writing) {
        (Some((why, _)), _) => format!(". Cause: {why}"),
        // Young CRs count too: nothing will write their entries either.
        (None, Some(why)) => format!(". Nothing writes them now: {why}"),
        (None, None) => String::new(),
    };
    if let Some(count) = ctx.entry_count {
        out.extend(
            snapshot_entry_count::short_count(
                &object,
                ctx.cm_name,
                count,
                &because,
                ctx.state.snapshots_from_table.is_some()
                    && ctx
                        .leases
                        .verdict_version
                        .as_ref()
                        .and_then(|v| v.entries_need_metadata())
                        != Some(false),
            )
            .map(|f| f.caused_by(split_code(&cause))),
        );
    }
    let listed_empty = snapshot_entry_count::known_empty(ctx.listed, ctx.cm_name);
    let names = |state: EntryState| -> Vec<String> {
        rows.iter()
            .filter(|r| r.state == state)
            .map(|r| r.name().to_string())
            .collect()
    };

    let missing = names(EntryState::Missing);
    if !missing.is_empty() {
        let mut f = Finding::new(
            Severity::Error,
            FindingCode::SnapshotMissingFromConfigmap,
            &object,
            format!(
                "{} that k3s lists should be in {}{listed_empty} but {}: {}{}",
                plural(missing.len(), "snapshot", "snapshots"),
                ctx.cm_name,
                if missing.len() == 1 {
                    "is not"
                } else {
                    "are not"
                },
                all(&missing),
                because
            ),
        )
        .about_listing(ObjectRef::snapshot_files(&missing));
        f.remediation = match &cause {
            Some((_, fix)) => format!(
                "{fix} (the controller's first sync restores them); or k3sdoctor snapshots backfill --fix"
            ),
            None => "k3sdoctor snapshots backfill --fix".to_string(),
        };
        out.push(f.caused_by(split_code(&cause)));
    }

    let stale: Vec<String> = rows
        .iter()
        .filter(|r| r.state == EntryState::Stale)
        .map(|r| {
            format!(
                "{} ({})",
                r.key(),
                r.differences()
                    .iter()
                    .map(|d| d.field.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
        .collect();
    if !stale.is_empty() {
        out.push(
            Finding::new(
                Severity::Warning,
                FindingCode::SnapshotStaleInConfigmap,
                &object,
                format!(
                    "{} differ from their ETCDSnapshotFile: {}",
                    plural(stale.len(), "entry", "entries"),
                    all(&stale)
                ),
            )
            .about(ObjectRef::snapshot_files(
                &rows
                    .iter()
                    .filter(|r| r.state == EntryState::Stale)
                    .map(|r| r.name().to_string())
                    .collect::<Vec<_>>(),
            ))
            .listing(&stale)
            .fix("k3sdoctor snapshots backfill --fix"),
        );
    }

    // Entries of CRs stuck terminating stay because the idle controller never ran its
    // OnRemove; with the split named as the cause they are its doing, not strays.
    let (held_by_deleting, strays): (Vec<&OrphanedEntry>, Vec<&OrphanedEntry>) = orphaned
        .iter()
        .partition(|o| o.cr_deleting && cause.is_some());
    if !held_by_deleting.is_empty() {
        let keys: Vec<String> = held_by_deleting.iter().map(|o| o.key.clone()).collect();
        out.push(
            Finding::new(
                Severity::Warning,
                FindingCode::SnapshotOrphanedInConfigmap,
                &object,
                format!(
                    "{} belong to ETCDSnapshotFiles stuck deleting, whose finalizer the idle controller never \
                     removes: {}",
                    plural(keys.len(), "entry", "entries"),
                    all(&keys)
                ),
            )
            .listing(&keys)
            .fix("k3sdoctor leases follow --fix (the controller then removes them and lets the CRs go)")
            .caused_by(split_code(&cause)),
        );
    }
    if !strays.is_empty() {
        let keys: Vec<String> = strays
            .iter()
            .map(|o| match (&o.cr_without_entry, o.cr_deleting) {
                (Some(cr), _) => format!("{} (its CR {cr} gets no entry: no metadata)", o.key),
                (None, true) => format!("{} (CR being deleted)", o.key),
                (None, false) => o.key.clone(),
            })
            .collect();
        let removed = strays.iter().filter(|o| o.reconcile.removes).count();
        let kept_why = strays
            .iter()
            .find(|o| !o.reconcile.removes)
            .map(|o| format!(", keeps {} ({})", strays.len() - removed, o.reconcile.why))
            .unwrap_or_default();
        out.push(
            Finding::new(
                Severity::Warning,
                FindingCode::SnapshotOrphanedInConfigmap,
                &object,
                format!(
                    "{} have no ETCDSnapshotFile behind them that k3s lists: {}. k3s's next reconcile removes \
                     {removed}{kept_why}",
                    plural(keys.len(), "entry", "entries"),
                    all(&keys)
                ),
            )
            .listing(&keys)
            .fix(if removed > 0 {
                "k3sdoctor snapshots backfill --fix --prune (removes exactly what k3s's reconcile would)"
            } else {
                "nothing to remove: k3s keeps these entries until the condition above changes"
            }),
        );
    }

    let pruned = names(EntryState::PrunedForSize);
    if !pruned.is_empty() {
        out.push(Finding::new(
            Severity::Info,
            FindingCode::SnapshotPrunedForSize,
            &object,
            format!(
                "{} missing, explained by k3s dropping the oldest entries at the 1 MiB limit: each is no newer \
                 than the oldest entry left, and {} ({} of {} bytes) is near the limit (putting the entry, or \
                 every such missing entry, back would pass it, or it is within four of its largest entries of \
                 it): {}",
                plural(pruned.len(), "snapshot is", "snapshots are"),
                ctx.cm_name,
                ctx.bytes,
                CONFIGMAP_LIMIT,
                all(&pruned)
            ),
        )
        .about_listing(ObjectRef::snapshot_files(&pruned)));
    }

    let no_metadata = names(EntryState::NotExpected);
    if !no_metadata.is_empty() && (ctx.extra_metadata_present || tally.with_metadata > 0) {
        out.push(Finding::new(
            Severity::Info,
            FindingCode::SnapshotMissingFromConfigmap,
            &object,
            format!(
                "{} no metadata (taken while {} was absent or empty), so k3s gives {} no entry: {}",
                plural(no_metadata.len(), "snapshot has", "snapshots have"),
                ctx.distro.extra_metadata_configmap(),
                if no_metadata.len() == 1 { "it" } else { "them" },
                all(&no_metadata)
            ),
        )
        .about_listing(ObjectRef::snapshot_files(&no_metadata)));
    }

    if !tally.without_finalizer.is_empty() {
        let mut f = Finding::new(
            Severity::Error,
            FindingCode::SnapshotControllerIdle,
            "ETCDSnapshotFiles",
            format!(
                "{} older than a minute lack the finalizer {CONTROLLER_FINALIZER}, so the snapshot ConfigMap controller \
                 has not processed them: {}{}",
                plural(
                    tally.without_finalizer.len(),
                    "ETCDSnapshotFile",
                    "ETCDSnapshotFiles"
                ),
                all(&tally.without_finalizer),
                cause
                    .as_ref()
                    .map(|(why, _)| format!(". Cause: {why}"))
                    .unwrap_or_default()
            ),
        )
        .about_listing(ObjectRef::snapshot_files(&tally.without_finalizer));
        f = f.caused_by(split_code(&cause));
        f.remediation = match &cause {
            Some((_, fix)) => fix.clone(),
            None => format!(
                "check the {} service log on the {} holder for \"Reconciling snapshot ConfigMap data\"",
                ctx.distro.server_unit(),
                ctx.distro.etcd_lock()
            ),
        };
        out.push(f);
    }

    if !tally.digest_mismatches.is_empty() {
        let whys: Vec<String> = tally
            .digest_mismatches
            .iter()
            .map(|(_, why)| why.clone())
            .collect();
        out.push(
            Finding::new(
                Severity::Warning,
                FindingCode::SnapshotNameDigestMismatch,
                "ETCDSnapshotFiles",
                format!(
                    "{} (edited, copied between clusters, or renamed by hand): {}",
                    plural(
                        whys.len(),
                        "name does not match its node and location",
                        "names do not match their node and location"
                    ),
                    all(&whys)
                ),
            )
            .about(ObjectRef::snapshot_files(
                &tally
                    .digest_mismatches
                    .iter()
                    .map(|(name, _)| name.clone())
                    .collect::<Vec<_>>(),
            ))
            .listing(&whys),
        );
    }

    if !legacy_keys.is_empty() {
        out.push(
            Finding::new(
                Severity::Warning,
                FindingCode::ConfigmapLegacyFormat,
                &object,
                format!(
                    "{} use the pre-2023 bare-key format, which k3s no longer writes or updates: {}",
                    plural(legacy_keys.len(), "entry", "entries"),
                    all(legacy_keys)
                ),
            )
            .listing(legacy_keys)
            .fix(format!("once nothing reads them, remove them: kubectl -n kube-system edit configmap {}", ctx.cm_name)),
        );
    }
    out
}

fn split_code(cause: &Option<(String, String)>) -> Option<FindingCode> {
    cause.as_ref().map(|_| FindingCode::LeaseSplit)
}

/// The split on an affected version, when the leases show it: (why, repair command).
fn split_cause(ctx: &Context<'_>) -> Option<(String, String)> {
    let split = ctx
        .leases
        .findings
        .iter()
        .any(|f| f.code == FindingCode::LeaseSplit && f.severity == Severity::Error);
    if !split {
        return None;
    }
    let etcd_holder = ctx
        .leases
        .locks
        .get(1)
        .and_then(|l| l.holder.clone())
        .unwrap_or_default();
    Some((
        format!(
            "{} and {} are held by different servers on an affected version, so the snapshot controller on {etcd_holder} \
             never started (k3s-io/k3s#10046)",
            ctx.distro.core_lock(),
            ctx.distro.etcd_lock()
        ),
        "k3sdoctor leases follow --fix".to_string(),
    ))
}

fn dump_gap(ctx: &Context<'_>) -> Option<Finding> {
    if !ctx.state.origin.is_dump() {
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
            .then(|| ctx.state.gap("ETCDSnapshotFile")),
        configmap_unread.then(|| ctx.state.gap("ConfigMap")),
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
