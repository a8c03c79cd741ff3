//! `k3sdoctor snapshots restore --from-backup FILE`: plan → (with `--fix`) permission check,
//! server-side dry run, confirmation, backup of the current ConfigMap, preconditioned write →
//! read back (exactly the backed-up data) → diff again.

use std::path::Path;

use k8s_openapi::api::core::v1::ConfigMap;

use super::Ui;
use super::configmap_write::{self, ConfigMapWrite, Sent};
use super::load::{Loaded, connect_live, load_snapshot_state, read_live_snapshots, runtime};
use super::snapshot_configmap_io::{check_permission, read_configmap, write_configmap};
use super::snapshots::analyse;
use crate::apply::WriteError;
use crate::events::repair_event::EventReason;
use crate::exit::{Exit, Failure};
use crate::input::ReadError;
use crate::input::connect::ConnectOptions;
use crate::input::connect::Connection;
use crate::input::live::cluster_identity::{ClusterIdentity, read_cluster_identity};
use crate::render;
use crate::report::API_VERSION;
use crate::settings::RestoreOptions;
use crate::settings::{Settings, Source};
use crate::snapshots::repair_results::RestoreResult;
use crate::snapshots::restore_foreign::ClusterInventory;
use crate::snapshots::restore_plan::{RestorePlan, plan_restore};

pub(crate) fn run(settings: &Settings, opts: &RestoreOptions, ui: &mut Ui) -> anyhow::Result<Exit> {
    // `Settings` refuses --fix with --from-file: a dump is only planned.
    let backup = read_backup(&opts.from_backup)?;
    let Source::Live(options) = &settings.source else {
        let loaded = load_snapshot_state(&settings.source, settings.judging, ui)?;
        let name = loaded.distro.snapshots_configmap();
        // A dump holds ConfigMapFacts, not API objects: rebuild the little the plan compares.
        let current = loaded.state.configmap(&name).map(|c| ConfigMap {
            metadata: kube::api::ObjectMeta {
                name: Some(c.name.clone()),
                resource_version: c.resource_version.clone(),
                ..Default::default()
            },
            data: Some(c.data.clone()),
            ..Default::default()
        });
        let unknown = ClusterIdentity::Unknown("a dump records no cluster identity".into());
        let plan = plan(&backup, current.as_ref(), &name, &unknown)?
            .against_cluster(&ClusterInventory::of(&loaded.state));
        return finish_plan_only(settings, opts, ui, plan, verdict(&loaded, opts));
    };
    let interactive = ui.interactive();
    runtime()?.block_on(restore_live(
        settings,
        options,
        opts,
        ui,
        interactive,
        &backup,
    ))
}

/// The backup as `snapshots backfill --fix` wrote it: one ConfigMap in JSON.
fn read_backup(path: &Path) -> Result<ConfigMap, Failure> {
    let text = crate::input::files::bounded_read::read_text(path, crate::input::files::bounded_read::BACKUP_LIMIT).map_err(|e| {
        Failure::Read(ReadError::new(format!(
            "cannot read backup {}: {e}; pass the file snapshots backfill --fix saved (it prints `saved ConfigMap \
             ... to FILE`)",
            path.display()
        )))
    })?;
    let cm: ConfigMap = serde_json::from_str(&text).map_err(|e| {
        Failure::Read(ReadError::new(format!(
            "backup {} is not a ConfigMap in JSON ({e}); pass the file snapshots backfill --fix saved",
            path.display()
        )))
    })?;
    Ok(cm)
}

fn plan(
    backup: &ConfigMap,
    current: Option<&ConfigMap>,
    name: &str,
    cluster: &ClusterIdentity,
) -> Result<RestorePlan, Failure> {
    plan_restore(backup, current, name, cluster)
        .map_err(|r| Failure::Refused(format!("{r}; nothing was written")))
}

fn verdict(loaded: &Loaded, opts: &RestoreOptions) -> Exit {
    Exit::verdict(opts.fail_on.is_failure(&analyse(loaded).findings))
}

fn result(opts: &RestoreOptions, outcome: &'static str, plan: RestorePlan) -> RestoreResult {
    RestoreResult {
        api_version: API_VERSION,
        kind: "RestoreResult",
        outcome,
        from_backup: opts.from_backup.display().to_string(),
        plan,
        backup: None,
        resource_version: None,
        after: None,
    }
}

fn show_plan(
    settings: &Settings,
    opts: &RestoreOptions,
    ui: &mut Ui,
    plan: &RestorePlan,
) -> anyhow::Result<()> {
    if !settings.output.format.is_structured() && !ui.quiet {
        render::tolerate_closed_pipe(
            render::restore::write_plan(
                &mut ui.out,
                plan,
                &opts.from_backup.display().to_string(),
                ui.style,
            )
            .map_err(Into::into),
        )?;
    }
    Ok(())
}

fn finish_plan_only(
    settings: &Settings,
    opts: &RestoreOptions,
    ui: &mut Ui,
    plan: RestorePlan,
    nothing_to_do: Exit,
) -> anyhow::Result<Exit> {
    show_plan(settings, opts, ui, &plan)?;
    let (exit, outcome) = if plan.is_empty() {
        (nothing_to_do, "nothing-to-do")
    } else {
        ui.note("plan only: nothing was written; re-run with --fix against the cluster to apply");
        (Exit::Findings, "planned")
    };
    ui.emit_structured(settings.output.format, &result(opts, outcome, plan))?;
    Ok(exit)
}

async fn restore_live(
    settings: &Settings,
    options: &ConnectOptions,
    opts: &RestoreOptions,
    ui: &mut Ui,
    interactive: bool,
    backup: &ConfigMap,
) -> anyhow::Result<Exit> {
    let conn = connect_live(options, ui).await?;
    let loaded = read_live_snapshots(&conn, settings.judging, ui).await?;
    let name = loaded.distro.snapshots_configmap();
    let current = read_configmap(&conn, &name).await?;
    let trace = |line: &str| ui.trace(line);
    let cluster = read_cluster_identity(&conn, &trace).await;
    let plan = plan(backup, current.as_ref(), &name, &cluster)?
        .against_cluster(&ClusterInventory::of(&loaded.state));
    if !opts.fix || plan.is_empty() {
        return finish_plan_only(settings, opts, ui, plan, verdict(&loaded, opts));
    }
    show_plan(settings, opts, ui, &plan)?;
    if !plan.needs_force.is_empty() && !opts.force {
        return Err(Failure::Refused(format!(
            "{}; re-run with --force if this backup is meant for this ConfigMap; nothing was written",
            plan.needs_force.join("; ")
        ))
        .into());
    }
    super::require_confirmation_means(opts.yes, interactive)?;
    check_permission(&conn, &name, current.is_none()).await?;
    match write_configmap(&conn, &name, &plan.data, current.as_ref(), true).await {
        Ok(_) => ui.note("server-side dry run: accepted"),
        Err(WriteError::Conflict) => return Err(changed_since_read(&name).into()),
        // A refused dry run changed nothing: the same exit and wording as a refused write.
        Err(WriteError::Other(e) | WriteError::Unanswered(e)) => {
            return Err(super::write_failed_nothing_written(e).into());
        }
    }
    if !opts.yes && !confirm(&conn, &plan, opts) {
        ui.note("declined: nothing was written");
        ui.emit_structured(settings.output.format, &result(opts, "declined", plan))?;
        return Ok(Exit::Findings);
    }
    let saved = match &current {
        Some(cm) => Some(save_current(opts, &name, cm, &cluster, ui)?),
        None => None,
    };
    // The precondition is the resourceVersion just read: a change made since (k3s's own
    // controller, another operator) is a 409 and nothing is overwritten.
    let what = format!("restored from backup {}", opts.from_backup.display());
    let write = ConfigMapWrite {
        name: &name,
        reason: EventReason::SnapshotEntriesRestored,
        counts: (plan.add.len(), plan.update.len(), plan.remove.len()),
        what: &what,
        command: "snapshots restore --fix",
    };
    let holds_plan = |data: &std::collections::BTreeMap<String, String>| *data == plan.data;
    let sent = configmap_write::write_through(
        &conn,
        ui,
        &write,
        &plan.data,
        current.as_ref(),
        &holds_plan,
    )
    .await?;
    let rv = match sent {
        Sent::Written(rv) => rv,
        Sent::Conflict => return Err(changed_since_read(&name).into()),
    };
    report_after(&conn, settings, opts, ui, plan, saved, rv).await
}

fn changed_since_read(name: &str) -> Failure {
    Failure::Incomplete(format!(
        "ConfigMap kube-system/{name} changed since it was read (409); nothing was written; run the command again \
         to plan against it as it is now"
    ))
}

fn save_current(
    opts: &RestoreOptions,
    name: &str,
    cm: &ConfigMap,
    cluster: &ClusterIdentity,
    ui: &Ui,
) -> Result<String, Failure> {
    let path = super::save_backup(opts.backup.as_deref(), name, cm, cluster)?;
    ui.note(&format!(
        "saved ConfigMap kube-system/{name} to {}",
        path.display()
    ));
    if let Some(note) = super::unidentified_backup_note(cluster) {
        ui.note(&note);
    }
    Ok(path.display().to_string())
}

async fn report_after(
    conn: &Connection,
    settings: &Settings,
    opts: &RestoreOptions,
    ui: &mut Ui,
    plan: RestorePlan,
    saved: Option<String>,
    resource_version: Option<String>,
) -> anyhow::Result<Exit> {
    let name = plan.configmap.clone();
    let unverified = |e: String| {
        Failure::Incomplete(format!(
            "wrote ConfigMap kube-system/{name}, but {e}; check it with k3sdoctor snapshots diff"
        ))
    };
    let back = configmap_write::read_back(conn, settings, ui, &name, |e| {
        unverified(format!("it could not be read back: {e}"))
    })
    .await?;
    let (after, analysis) = (back.after, back.analysis);
    let exact = back.data == plan.data;
    let mut result = result(opts, "written", plan);
    result.backup = saved;
    result.resource_version = resource_version;
    result.after = Some(analysis);
    ui.emit_structured(settings.output.format, &result)?;
    if !exact {
        return Err(
            unverified("reading it back does not show exactly the backed-up data".into()).into(),
        );
    }
    Ok(verdict(&after, opts))
}

fn confirm(conn: &Connection, plan: &RestorePlan, opts: &RestoreOptions) -> bool {
    super::confirm_write(
        conn,
        &format!(
            "replace the data of ConfigMap kube-system/{} with {} ({} to add, {} to update, {} to remove)",
            plan.configmap,
            opts.from_backup.display(),
            plan.add.len(),
            plan.update.len(),
            plan.remove.len()
        ),
    )
}
