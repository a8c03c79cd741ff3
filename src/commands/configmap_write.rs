//! What `snapshots backfill --fix` and `snapshots restore --fix` do alike once the snapshot
//! ConfigMap is written: say so, leave the Event, read the cluster back and show it as
//! `snapshots diff` would, so the person sees what the write changed.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;

use super::Ui;
use super::load::{Loaded, read_live_snapshots};
use super::snapshots::analyse;
use crate::diagnose::snapshots::SnapshotAnalysis;
use crate::events::repair_event::{EventReason, snapshot_entries_event};
use crate::exit::Failure;
use crate::input::connect::Connection;
use crate::render;
use crate::report::SnapshotReport;
use crate::settings::Settings;

/// The repair that wrote, for its note and Event.
pub struct ConfigMapWrite<'a> {
    pub name: &'a str,
    pub reason: EventReason,
    /// (added, updated, removed) entries.
    pub counts: (usize, usize, usize),
    /// What the Event's note says was done.
    pub what: &'a str,
    /// The command, for "run by" in the Event.
    pub command: &'a str,
}

/// Says the write happened and records its Event; the resourceVersion written.
pub async fn announce(
    conn: &Connection,
    ui: &Ui,
    write: &ConfigMapWrite<'_>,
    written: &ConfigMap,
) -> Option<String> {
    let rv = written.metadata.resource_version.clone();
    ui.note(&format!(
        "wrote ConfigMap kube-system/{} (resourceVersion {})",
        write.name,
        rv.as_deref().unwrap_or("?")
    ));
    let event = snapshot_entries_event(
        write.reason,
        write.name,
        rv.clone(),
        write.counts,
        write.what,
        &super::repair_events::asked_by(conn, write.command),
    );
    super::repair_events::record(conn, ui, &event).await;
    rv
}

/// The cluster read again after the write.
pub struct ReadBack {
    pub after: Loaded,
    pub analysis: SnapshotAnalysis,
    /// The ConfigMap's data as read back (empty when it is gone).
    pub data: BTreeMap<String, String>,
}

/// Reads the cluster back and, for people, shows it as `snapshots diff`; `unread` words the
/// failure to read it (the write stands either way).
pub async fn read_back(
    conn: &Connection,
    settings: &Settings,
    ui: &mut Ui,
    name: &str,
    unread: impl FnOnce(Failure) -> Failure,
) -> anyhow::Result<ReadBack> {
    let after = read_live_snapshots(conn, settings.judging, ui)
        .await
        .map_err(unread)?;
    let analysis = analyse(&after);
    let data = after
        .state
        .configmap(name)
        .map(|c| c.data.clone())
        .unwrap_or_default();
    if !settings.output.format.is_structured() && !ui.quiet {
        let report = SnapshotReport::new("SnapshotDiff", after.now, analysis.clone());
        let mut out = Vec::new();
        render::snapshots::write_diff(
            &mut render::streams::TableOut::together(&mut out),
            &report,
            ui.style,
        )?;
        ui.write_after(&out)?;
    }
    Ok(ReadBack {
        after,
        analysis,
        data,
    })
}
