//! `k3sdoctor snapshots restore` for people: what putting the backup back changes.

use super::control_chars::escape_controls;
use std::io::Write;

use super::style::Style;
use crate::snapshots::restore_plan::RestorePlan;

pub fn write_plan(
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
