//! `k3sdoctor snapshots backfill`: plan → (with `--fix`) permission check, backup, server-side
//! dry run, confirmation, preconditioned write (re-planned on 409) → diff again.

use std::path::PathBuf;

use k8s_openapi::api::core::v1::ConfigMap;

use super::Ui;
use super::configmap_write::{self, ConfigMapWrite, Sent};
use super::load::{connect_live, load_snapshot_state, read_live_snapshots, runtime};
use super::snapshot_configmap_io::{check_permission, read_configmap, write_configmap};
use super::snapshots::analyse;
use crate::apply::WriteError;
use crate::diagnose::finding::FailOn;
use crate::events::repair_event::EventReason;
use crate::exit::{Exit, Failure};
use crate::input::connect::ConnectOptions;
use crate::input::connect::Connection;
use crate::input::live::cluster_identity::read_cluster_identity;
use crate::render;
use crate::report::API_VERSION;
use crate::settings::BackfillOptions;
use crate::settings::{Settings, Source};
use crate::snapshots::backfill_plan::{BackfillPlan, plan_backfill};
use crate::snapshots::repair_results::BackfillResult;

const MAX_ATTEMPTS: usize = 5;

pub(crate) fn run(
    settings: &Settings,
    opts: &BackfillOptions,
    ui: &mut Ui,
) -> anyhow::Result<Exit> {
    // `Settings` refuses --fix with --from-file: a dump is only planned.
    let Source::Live(options) = &settings.source else {
        let loaded = load_snapshot_state(&settings.source, settings.judging, ui)?;
        super::load::require_primary(
            &loaded,
            crate::input::dump::dump_coverage::Primary::Snapshots,
        )?;
        let analysis = analyse(&loaded);
        if let Some(count) = &analysis.entry_count {
            return Err(Failure::Refused(format!(
                "cannot plan a backfill of ConfigMap kube-system/{}: {} shows only its entry count ({}), not \
                 its entries; add `kubectl -n kube-system get configmap {} -o yaml` to --from-file",
                analysis.configmap, count.from, count.entries, analysis.configmap
            ))
            .into());
        }
        let current = loaded
            .state
            .configmap(&analysis.configmap)
            .map(|c| c.data.clone())
            .unwrap_or_default();
        let plan =
            plan_backfill(&analysis, &current, opts.prune).map_err(|e| Failure::Refused(e.0))?;
        return finish_plan_only(
            settings,
            ui,
            plan,
            verdict(&analysis.findings, opts.fail_on),
        );
    };
    let interactive = ui.interactive();
    runtime()?.block_on(backfill_live(settings, options, opts, ui, interactive))
}

fn result(outcome: &'static str, plan: BackfillPlan) -> BackfillResult {
    BackfillResult {
        api_version: API_VERSION,
        kind: "BackfillResult",
        outcome,
        plan,
        backup: None,
        resource_version: None,
        after: None,
    }
}

/// `nothing_to_do`: the exit when the plan is empty, the verdict of the cluster as read.
fn finish_plan_only(
    settings: &Settings,
    ui: &mut Ui,
    plan: BackfillPlan,
    nothing_to_do: Exit,
) -> anyhow::Result<Exit> {
    let exit = if plan.is_empty() {
        nothing_to_do
    } else {
        Exit::Findings
    };
    show_plan(settings, ui, &plan)?;
    if !plan.is_empty() {
        ui.note("plan only: nothing was written; re-run with --fix against the cluster to apply");
    }
    ui.emit_structured(
        settings.output.format,
        &result(
            if plan.is_empty() {
                "nothing-to-do"
            } else {
                "planned"
            },
            plan,
        ),
    )?;
    Ok(exit)
}

fn show_plan(settings: &Settings, ui: &mut Ui, plan: &BackfillPlan) -> anyhow::Result<()> {
    if !settings.output.format.is_structured() && !ui.quiet {
        render::tolerate_closed_pipe(
            render::snapshots::write_backfill_plan(&mut ui.out, plan, ui.style).map_err(Into::into),
        )?;
    }
    Ok(())
}

/// Reads everything afresh and plans against the ConfigMap exactly as it is now.
async fn plan_now(
    conn: &Connection,
    settings: &Settings,
    ui: &Ui,
    prune: bool,
    fail_on: FailOn,
) -> Result<(BackfillPlan, Option<ConfigMap>, Exit), Failure> {
    let loaded = read_live_snapshots(conn, settings.judging, ui).await?;
    let analysis = analyse(&loaded);
    let original = read_configmap(conn, &analysis.configmap).await?;
    let current = original
        .as_ref()
        .and_then(|c| c.data.clone())
        .unwrap_or_default();
    let plan = plan_backfill(&analysis, &current.into_iter().collect(), prune).map_err(|e| {
        Failure::Refused(format!("the planned ConfigMap cannot fit the apiserver's 1 MiB limit ({e}); nothing was written"))
    })?;
    Ok((plan, original, verdict(&analysis.findings, fail_on)))
}

async fn backfill_live(
    settings: &Settings,
    options: &ConnectOptions,
    opts: &BackfillOptions,
    ui: &mut Ui,
    interactive: bool,
) -> anyhow::Result<Exit> {
    let conn = connect_live(options, ui).await?;
    let (plan, original, nothing_to_do) =
        plan_now(&conn, settings, ui, opts.prune, opts.fail_on).await?;
    if !opts.fix || plan.is_empty() {
        return finish_plan_only(settings, ui, plan, nothing_to_do);
    }
    show_plan(settings, ui, &plan)?;
    super::require_confirmation_means(opts.yes, interactive)?;
    check_permission(&conn, &plan.configmap, original.is_none()).await?;
    match write_configmap(&conn, &plan.configmap, &plan.data, original.as_ref(), true).await {
        Ok(_) | Err(WriteError::Conflict) => ui.note("server-side dry run: accepted"),
        // A refused dry run (422 invalid, 413 too large, 500) changed nothing: the same
        // exit and wording as a refused write (README, "Failure behaviour").
        Err(WriteError::Other(e) | WriteError::Unanswered(e)) => {
            return Err(super::write_failed_nothing_written(e).into());
        }
    }
    if !opts.yes && !confirm(&conn, &plan) {
        ui.note("declined: nothing was written");
        ui.emit_structured(settings.output.format, &result("declined", plan))?;
        return Ok(Exit::Findings);
    }

    let (mut plan, mut original, mut nothing_to_do) = (plan, original, nothing_to_do);
    let mut backup: Option<PathBuf> = None;
    for attempt in 1..=MAX_ATTEMPTS {
        if attempt > 1 {
            // The last write met a 409: plan again against the ConfigMap as it is now.
            (plan, original, nothing_to_do) =
                plan_now(&conn, settings, ui, opts.prune, opts.fail_on).await?;
        }
        if plan.is_empty() {
            ui.note("the ConfigMap already holds what k3s would write now: nothing to do");
            return Ok(nothing_to_do);
        }
        if let (None, Some(cm)) = (&backup, &original) {
            let trace = |line: &str| ui.trace(line);
            let cluster = read_cluster_identity(&conn, &trace).await;
            let path = super::save_backup(opts.backup.as_deref(), &plan.configmap, cm, &cluster)?;
            if let Some(note) = super::unidentified_backup_note(&cluster) {
                ui.note(&note);
            }
            ui.note(&format!(
                "saved ConfigMap kube-system/{} to {} (undo with: k3sdoctor snapshots restore --from-backup {} --fix)",
                plan.configmap,
                path.display(),
                crate::render::rerun::shell_quote(&path.display().to_string())
            ));
            backup = Some(path);
        }
        let write = ConfigMapWrite {
            name: &plan.configmap,
            reason: EventReason::SnapshotEntriesBackfilled,
            counts: (plan.add.len(), plan.update.len(), plan.remove.len()),
            what: "backfilled what k3s's snapshot controller would have written",
            command: "snapshots backfill --fix",
        };
        let holds_plan =
            |data: &std::collections::BTreeMap<String, String>| plan.unverified(data).is_empty();
        let sent = configmap_write::write_through(
            &conn,
            ui,
            &write,
            &plan.data,
            original.as_ref(),
            &holds_plan,
        )
        .await?;
        match sent {
            Sent::Written(rv) => {
                return report_after(&conn, settings, ui, plan, backup, rv, opts.fail_on).await;
            }
            Sent::Conflict => ui.note(&format!(
                "ConfigMap kube-system/{} changed while planning (409); re-reading",
                plan.configmap
            )),
        }
    }
    Err(Failure::Incomplete(format!(
        "ConfigMap kube-system/{} changed under every one of {MAX_ATTEMPTS} write attempts; nothing was written; run \
         the command again",
        plan.configmap
    ))
    .into())
}

async fn report_after(
    conn: &Connection,
    settings: &Settings,
    ui: &mut Ui,
    plan: BackfillPlan,
    backup: Option<PathBuf>,
    resource_version: Option<String>,
    args_fail_on: FailOn,
) -> anyhow::Result<Exit> {
    let name = plan.configmap.clone();
    let back = configmap_write::read_back(conn, settings, ui, &name, |e| {
        Failure::Incomplete(format!(
            "ConfigMap kube-system/{name} was written but could not be read back to verify it: {e}; check it with \
             k3sdoctor snapshots diff"
        ))
    })
    .await?;
    if let Some(split) = split_remains(&back.after) {
        ui.note(&split);
    }
    let analysis = back.analysis;
    let unverified = plan.unverified(&back.data);
    let mut result = result("written", plan);
    result.backup = backup.map(|p| p.display().to_string());
    result.resource_version = resource_version;
    result.after = Some(analysis);
    let findings = result
        .after
        .as_ref()
        .map(|a| a.findings.clone())
        .unwrap_or_default();
    ui.emit_structured(settings.output.format, &result)?;
    if !unverified.is_empty() {
        return Err(Failure::Incomplete(format!(
            "wrote ConfigMap kube-system/{}, but reading it back does not show {} of the planned changes ({}); \
             check it with k3sdoctor snapshots diff",
            result.plan.configmap,
            unverified.len(),
            unverified.join(", ")
        ))
        .into());
    }
    // One exit rule for every repair: after a verified write, the verdict of the cluster as it
    // is now (orphans kept without --prune are warnings, not a failed repair).
    Ok(verdict(&findings, args_fail_on))
}

/// A backfill writes what the idle controller missed; it does not start the controller. While
/// the split that idles it remains, the next snapshot goes without its entry again, so the
/// person is told, with the repair that ends it.
fn split_remains(after: &super::load::Loaded) -> Option<String> {
    let leases =
        crate::diagnose::leases::analyse_leases(&after.state, after.distro, after.now.time);
    leases
        .findings
        .iter()
        .find(|f| {
            f.code == crate::diagnose::finding::FindingCode::LeaseSplit
                && f.severity == crate::diagnose::finding::Severity::Error
        })
        .map(|_| {
            format!(
                "the split of the {core} and {etcd} locks remains: k3s's snapshot controller still does not run, so the \
                 next snapshot gets no entry again; run k3sdoctor leases follow --fix to end it",
                core = after.distro.core_lock(),
                etcd = after.distro.etcd_lock()
            )
        })
}

fn verdict(findings: &[crate::diagnose::finding::Finding], fail_on: FailOn) -> Exit {
    Exit::verdict(fail_on.is_failure(findings))
}

fn confirm(conn: &Connection, plan: &BackfillPlan) -> bool {
    super::confirm_write(
        conn,
        &format!(
            "write ConfigMap kube-system/{} ({} to add, {} to update, {} to remove)",
            plan.configmap,
            plan.add.len(),
            plan.update.len(),
            plan.remove.len()
        ),
    )
}
