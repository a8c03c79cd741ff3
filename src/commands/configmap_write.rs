//! What `snapshots backfill --fix` and `snapshots restore --fix` do alike when they write the
//! snapshot ConfigMap: carry the write through a first signal, settle a write whose answer
//! was lost by reading the ConfigMap again, say what happened, leave the Event, and read the
//! cluster back to show it as `snapshots diff` would.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;

use super::Ui;
use super::load::{Loaded, read_live_snapshots};
use super::snapshot_configmap_io::{read_configmap, write_configmap};
use super::snapshots::analyse;
use super::termination::{REREAD_LIMIT, Termination};
use crate::apply::WriteError;
use crate::apply::landed::{Landed, configmap_landed};
use crate::diagnose::snapshots::SnapshotAnalysis;
use crate::events::repair_event::{EventReason, snapshot_entries_event};
use crate::exit::Failure;
use crate::input::connect::Connection;
use crate::render;
use crate::report::SnapshotReport;
use crate::settings::Settings;

/// The repair that wrote, for its note and Event.
pub(super) struct ConfigMapWrite<'a> {
    pub name: &'a str,
    pub reason: EventReason,
    /// (added, updated, removed) entries.
    pub counts: (usize, usize, usize),
    /// What the Event's note says was done.
    pub what: &'a str,
    /// The command, for "run by" in the Event.
    pub command: &'a str,
}

/// How the write of the ConfigMap ended, when it did not fail.
pub(super) enum Sent {
    /// It landed (its answer, or the ConfigMap read again); the Event is recorded. The
    /// resourceVersion written.
    Written(Option<String>),
    /// 409: it changed since it was read; nothing was written.
    Conflict,
}

/// The write of `data` over `original` (as read), carried through a first SIGINT/SIGTERM.
/// When no answer proves it was refused (a 5xx, a reset, a timeout, a second signal), the
/// ConfigMap is read again: `holds_plan` says whether its data holds every planned change.
pub(super) async fn write_through(
    conn: &Connection,
    ui: &Ui,
    write: &ConfigMapWrite<'_>,
    data: &BTreeMap<String, String>,
    original: Option<&ConfigMap>,
    holds_plan: &dyn Fn(&BTreeMap<String, String>) -> bool,
) -> Result<Sent, Failure> {
    let object = format!("ConfigMap kube-system/{}", write.name);
    let intended = Intended {
        name: write.name,
        original,
        holds_plan,
    };
    let mut term = Termination::catch();
    let mut interrupted = false;
    let send = write_configmap(conn, write.name, data, original, false);
    let sent = term
        .finish_first(send, &mut interrupted, || {
            ui.note(&format!(
                "interrupted: the write of {object} is already sent, so k3sdoctor first waits for its answer \
                 (interrupt again to stop at once)"
            ));
        })
        .await;
    let written = match sent {
        Some(Ok(written)) => written,
        Some(Err(WriteError::Conflict)) if interrupted => {
            return Err(Failure::Incomplete(format!(
                "interrupted: {object} changed since it was read (409), so nothing was written"
            )));
        }
        Some(Err(WriteError::Conflict)) => return Ok(Sent::Conflict),
        Some(Err(WriteError::Other(e))) => return Err(super::write_failed_nothing_written(e)),
        Some(Err(WriteError::Unanswered(e))) => {
            settle(conn, ui, &intended, &e.message, false).await?
        }
        None => {
            let why = format!(
                "stopped by a second interrupt before the answer to the write of {object} came"
            );
            settle(conn, ui, &intended, &why, true).await?
        }
    };
    let rv = announce(conn, ui, write, &written).await;
    if interrupted {
        return Err(Failure::Incomplete(format!(
            "interrupted: finished the write first: wrote {object} (resourceVersion {}); it was not read back: \
             check it with k3sdoctor snapshots diff",
            rv.as_deref().unwrap_or("?")
        )));
    }
    Ok(Sent::Written(rv))
}

/// The write that was sent: the ConfigMap it was planned on and how to tell it landed.
struct Intended<'a> {
    name: &'a str,
    original: Option<&'a ConfigMap>,
    holds_plan: &'a dyn Fn(&BTreeMap<String, String>) -> bool,
}

/// The ConfigMap read again after a write whose answer never came (`why`): written (the
/// ConfigMap as read), or the failure that says what it holds instead. `pending`: the
/// request may still be on its way, so "unchanged" is only "so far".
async fn settle(
    conn: &Connection,
    ui: &Ui,
    intended: &Intended<'_>,
    why: &str,
    pending: bool,
) -> Result<ConfigMap, Failure> {
    let Intended {
        name,
        original,
        holds_plan,
    } = *intended;
    let object = format!("ConfigMap kube-system/{name}");
    let read = tokio::time::timeout(REREAD_LIMIT, read_configmap(conn, name)).await;
    let now = match read {
        Ok(Ok(now)) => now,
        Ok(Err(e)) => {
            return Err(Failure::Incomplete(format!(
                "{why}; {object} may or may not have been written, and reading it again failed ({}): check it \
                 with k3sdoctor snapshots diff",
                e.message
            )));
        }
        Err(_) => {
            return Err(Failure::Incomplete(format!(
                "{why}; {object} may or may not have been written, and reading it again took over {} s: check \
                 it with k3sdoctor snapshots diff",
                REREAD_LIMIT.as_secs()
            )));
        }
    };
    let before = original.and_then(|c| c.metadata.resource_version.as_deref());
    let seen = now.as_ref().map(|c| {
        let data: BTreeMap<String, String> = c.data.clone().unwrap_or_default();
        (
            c.metadata.resource_version.as_deref().unwrap_or_default(),
            holds_plan(&data),
        )
    });
    let landed = configmap_landed(before, seen);
    let said = format!("{why}; read again, {object} {}", landed.describe());
    match (landed, now) {
        (Landed::Written { .. }, Some(now)) => {
            ui.note(&said);
            Ok(now)
        }
        (Landed::NotWritten, _) if pending => Err(Failure::Incomplete(format!(
            "{why}; read again, {object} is unchanged so far, but the write was sent and may still land: check \
             it with k3sdoctor snapshots diff"
        ))),
        (Landed::NotWritten, _) => Err(Failure::Incomplete(format!("{said}; nothing was written"))),
        _ => Err(Failure::Incomplete(format!(
            "{said}; run the command again to plan against it as it is now"
        ))),
    }
}

/// Says the write happened and records its Event; the resourceVersion written.
pub(super) async fn announce(
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
pub(super) struct ReadBack {
    pub after: Loaded,
    pub analysis: SnapshotAnalysis,
    /// The ConfigMap's data as read back (empty when it is gone).
    pub data: BTreeMap<String, String>,
}

/// Reads the cluster back and, for people, shows it as `snapshots diff`; `unread` words the
/// failure to read it (the write stands either way).
pub(super) async fn read_back(
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
