//! `k3sdoctor snapshots restore` for people: what putting the backup back changes.

use super::control_chars::escape_controls;
use std::io::Write;

use super::style::Style;
use crate::snapshots::restore_plan::{OutdatedBackup, RestorePlan};

pub(crate) fn write_plan(
    out: &mut dyn Write,
    plan: &RestorePlan,
    from_backup: &str,
    style: Style,
) -> std::io::Result<()> {
    if plan.is_empty() {
        return writeln!(
            out,
            "ConfigMap kube-system/{} already holds exactly the data of {from_backup}: nothing to do.",
            plan.configmap
        );
    }
    writeln!(
        out,
        "{} {} ConfigMap kube-system/{} from {from_backup} (taken at resourceVersion {}): {} to add, {} to \
         update, {} to remove",
        style.bold("Plan:"),
        if plan.create { "create" } else { "restore" },
        plan.configmap,
        plan.backup_resource_version.as_deref().unwrap_or("?"),
        plan.add.len(),
        plan.update.len(),
        plan.remove.len()
    )?;
    for (label, keys) in [
        ("add", &plan.add),
        ("update", &plan.update),
        ("remove", &plan.remove),
    ] {
        for k in keys {
            writeln!(out, "  {label:<7} {}", escape_controls(k))?;
        }
    }
    for foreign in &plan.foreign {
        let mut names = Vec::new();
        if let Some(node) = &foreign.unknown_node {
            names.push(format!("node {node}, which is not a node of this cluster"));
        }
        if let Some(location) = &foreign.unknown_s3_location {
            names.push(format!(
                "{location}, which none of this cluster's snapshots use"
            ));
        }
        super::wrap::write_wrapped(
            out,
            &format!("{} names {}", foreign.key, names.join(" and ")),
            "  foreign: ",
            "           ",
            style.width,
        )?;
    }
    if let Some(outdated) = &plan.outdated {
        super::wrap::write_wrapped(
            out,
            &outdated_warning(outdated),
            &format!(
                "  {} ",
                style.paint(crate::diagnose::finding::Severity::Warning, "warning:")
            ),
            "           ",
            style.width,
        )?;
    }
    for reason in &plan.needs_force {
        super::wrap::write_wrapped(
            out,
            reason,
            "  needs --force: ",
            "                 ",
            style.width,
        )?;
    }
    if let Some(rv) = &plan.current_resource_version {
        writeln!(
            out,
            "  precondition: the write fails (nothing changes) if the ConfigMap is no longer at resourceVersion {rv}"
        )?;
    }
    Ok(())
}

/// What restoring undoes of the snapshots as they are now, with the backup's age against them.
fn outdated_warning(outdated: &OutdatedBackup) -> String {
    let entries = |n: usize| format!("{n} entr{}", if n == 1 { "y" } else { "ies" });
    let mut parts = Vec::new();
    if outdated.drops_live > 0 {
        let mut dropped = format!(
            "drops {} of snapshots that exist",
            entries(outdated.drops_live)
        );
        if let Some(newest) = outdated.newest_dropped {
            dropped.push_str(&format!(" (the newest taken at {newest}"));
            match outdated.backup_newest {
                Some(backup) if newest > backup => dropped.push_str(&format!(
                    ", {} after the newest snapshot in the backup",
                    crate::age::short(newest.duration_since(backup))
                )),
                _ => {}
            }
            dropped.push(')');
        }
        parts.push(dropped);
    }
    if outdated.re_adds_deleted > 0 {
        parts.push(format!(
            "brings back {} of snapshots that no longer exist",
            entries(outdated.re_adds_deleted)
        ));
    }
    format!(
        "restoring this backup {}. Restore a backup only to undo the repair that saved it; to add missing \
         entries, run snapshots backfill --fix",
        parts.join(" and ")
    )
}
