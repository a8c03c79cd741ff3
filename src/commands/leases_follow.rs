//! `k3sdoctor leases follow`: plan → (with `--fix`) permission check, server-side dry run,
//! confirmation, preconditioned write → verify the takeover → the `leases` verdict again.

mod awaiting_takeover;

use awaiting_takeover::{Move, await_takeover};

use super::Ui;
use super::follow_write::{Applied, Unapplied, apply};
use super::load::{
    Loaded, connect_live, load_lease_state, read_live, read_live_for_a_move, runtime,
};
use super::lock_writes::{check_permissions, read_lock_objects, write_copy};
use super::repair_events;
use super::termination::Termination;
use crate::apply::WriteError;
use crate::diagnose::leases::analyse_leases;
use crate::events::repair_event::EventReason;
use crate::exit::{Exit, Failure};
use crate::follow::follow_event::lock_move_event;
use crate::follow::follow_plan::{FollowOutcome, FollowPlan, FollowRequest, LockCopy, plan_follow};
use crate::follow::lock_objects::WrittenCopy;
use crate::follow::repair_result::{RepairOutcome, RepairResult};
use crate::heal::heal_gates::PAUSE_ANNOTATION;
use crate::input::connect::{ConnectOptions, Connection};
use crate::input::live::own_access_review::WriterRole;
use crate::render::{self, OutputFormat};
use crate::report::LeaseReport;
use crate::settings::FollowOptions;
use crate::settings::{Settings, Source};

pub(crate) fn run(settings: &Settings, opts: &FollowOptions, ui: &mut Ui) -> anyhow::Result<Exit> {
    let request = FollowRequest {
        lease: opts.lease.clone(),
        to: opts.to.clone(),
        force: opts.force,
    };
    // `Settings` refuses --fix with --from-file: a dump is only planned.
    let Source::Live(options) = &settings.source else {
        let loaded = load_lease_state(&settings.source, settings.judging, ui)?;
        super::load::require_primary(&loaded, crate::input::dump::dump_coverage::Primary::Locks)?;
        let outcome = plan(&loaded, &request)?;
        let moves = matches!(outcome, FollowOutcome::Move(_));
        let (exit, status) = if moves {
            (Exit::Findings, RepairOutcome::Planned)
        } else {
            (verdict(&loaded, opts), RepairOutcome::Aligned)
        };
        emit(settings, ui, &RepairResult::new(status, outcome))?;
        if moves {
            ui.note("plan only: a dump is never written to; run against the cluster with --fix to apply");
        }
        return Ok(exit);
    };
    let interactive = ui.interactive();
    runtime()?.block_on(follow_live(
        settings,
        options,
        opts,
        &request,
        ui,
        interactive,
    ))
}

fn plan(loaded: &Loaded, request: &FollowRequest) -> Result<FollowOutcome, Failure> {
    plan_follow(&loaded.state, loaded.distro, loaded.now.time, request)
        .map_err(|r| Failure::Refused(r.0))
}

async fn follow_live(
    settings: &Settings,
    options: &ConnectOptions,
    opts: &FollowOptions,
    request: &FollowRequest,
    ui: &mut Ui,
    interactive: bool,
) -> anyhow::Result<Exit> {
    let conn = connect_live(options, ui).await?;
    let loaded = read_live_for_a_move(&conn, settings.judging, ui).await?;
    let outcome = plan(&loaded, request)?;
    let FollowOutcome::Move(planned) = outcome.clone() else {
        emit(
            settings,
            ui,
            &RepairResult::new(RepairOutcome::Aligned, outcome),
        )?;
        return Ok(verdict(&loaded, opts));
    };
    let mut result = RepairResult::new(RepairOutcome::Planned, outcome);
    if !settings.output.format.is_structured() && !ui.quiet {
        render::tolerate_closed_pipe(
            render::follow::write_plan(&mut ui.out, &result.plan, ui.style).map_err(Into::into),
        )?;
    }
    if !opts.fix {
        ui.note("dry run: nothing was written; re-run with --fix to apply this plan");
        ui.emit_structured(settings.output.format, &result)?;
        return Ok(Exit::Findings);
    }
    if !cleared_to_write(&conn, &planned, opts, interactive, ui).await? {
        ui.note("declined: nothing was written");
        result.outcome = RepairOutcome::Declined;
        ui.emit_structured(settings.output.format, &result)?;
        return Ok(Exit::Findings);
    }

    // From here on SIGINT/SIGTERM are caught, not fatal: once a write is sent, the pair is
    // finished or reported exactly (copies that disagree stop the current leader), and a
    // signal while waiting for the takeover says what was written rather than dying silently.
    let mut term = Termination::catch();
    let asked_by = repair_events::asked_by(&conn, "leases follow --fix");
    let applied = match apply(&conn, settings.judging, &planned, request, ui, &mut term).await {
        Ok(applied) => applied,
        Err(unapplied) => {
            let recorded = unapplied_event(&planned, &unapplied, &asked_by);
            repair_events::record(&conn, ui, &recorded).await;
            return Err(unapplied.failure.into());
        }
    };
    let written = match applied {
        Applied::Written(written) => written,
        Applied::AlreadyAligned => {
            ui.note(&format!(
                "{} already names {} now: nothing to write",
                planned.lock, planned.to_identity
            ));
            result.outcome = RepairOutcome::Aligned;
            let after = read_live(&conn, settings.judging, ui).await?;
            ui.emit_structured(settings.output.format, &result)?;
            return Ok(verdict(&after, opts));
        }
    };
    result.written = written.iter().map(|(_, w)| w.clone()).collect();
    result.outcome = RepairOutcome::Written;

    let mv = Move {
        conn: &conn,
        planned: &planned,
        asked_by: &asked_by,
    };
    let result = after_the_write(mv, &written, settings, opts, result, &mut term, ui).await?;
    judge_after_write(&conn, &planned, settings, opts, result, ui).await
}

/// The takeover awaited (unless `--no-wait`) and the move's Event recorded; an unverified
/// takeover is the error, after the cluster is shown as it is now.
async fn after_the_write(
    mv: Move<'_>,
    written: &[(LockCopy, WrittenCopy)],
    settings: &Settings,
    opts: &FollowOptions,
    mut result: RepairResult,
    term: &mut Termination,
    ui: &mut Ui,
) -> anyhow::Result<RepairResult> {
    let Move {
        conn,
        planned,
        asked_by,
    } = mv;
    let event =
        |reason, outcome: &str| lock_move_event(reason, planned, written, outcome, asked_by);
    if opts.no_wait {
        // The write itself was read back (the PUT answered with the new holder); the takeover
        // is left to the user.
        ui.note("not waiting for the takeover (--no-wait); check with `k3sdoctor leases`");
        let moved = event(
            EventReason::LockMoved,
            "The takeover was not waited for (--no-wait).",
        );
        repair_events::record(conn, ui, &moved).await;
    } else {
        let verification = await_takeover(
            Move {
                conn,
                planned,
                asked_by,
            },
            written,
            opts,
            term,
            settings.output.format,
            &result,
            ui,
        )
        .await?;
        result.verification = Some(verification.clone());
        let reason = if verification.verified {
            EventReason::LockMoved
        } else {
            EventReason::LockMoveFailed
        };
        repair_events::record(conn, ui, &event(reason, &verification.message)).await;
        if !verification.verified {
            result.outcome = RepairOutcome::NotVerified;
            // Still show the cluster as it is now; the failure is the error line at the end.
            if let Ok(after) = read_live(conn, settings.judging, ui).await {
                show_after(settings, ui, &mut result, &after)?;
            }
            ui.emit_structured(settings.output.format, &result)?;
            return Err(Failure::Incomplete(verification.message).into());
        }
        // A failure is the error line at the end; success is worth a line of its own.
        ui.note(&verification.message);
        result.outcome = RepairOutcome::Verified;
    }

    Ok(result)
}

/// The Event of a move that did not end as planned: `LockMoved` when every copy landed before
/// the run stopped (unverified), `LockMoveFailed` otherwise, naming the copies written.
fn unapplied_event(
    planned: &FollowPlan,
    unapplied: &Unapplied,
    asked_by: &str,
) -> crate::events::repair_event::RepairEvent {
    let reason = if unapplied.all_written {
        EventReason::LockMoved
    } else {
        EventReason::LockMoveFailed
    };
    let line = unapplied.failure.to_string();
    lock_move_event(reason, planned, &unapplied.written, &line, asked_by)
}

/// One exit rule for every repair: once the write is verified, the exit code is the verdict
/// of the cluster read afresh, exactly as `leases --fail-on` computes it.
async fn judge_after_write(
    conn: &Connection,
    planned: &FollowPlan,
    settings: &Settings,
    opts: &FollowOptions,
    mut result: RepairResult,
    ui: &mut Ui,
) -> anyhow::Result<Exit> {
    let after = read_live(conn, settings.judging, ui).await.map_err(|e| {
        Failure::Read(crate::input::ReadError::new(format!(
            "{} was written and verified, but the cluster could not be read again to judge it: {e}; run \
             k3sdoctor leases",
            planned.lock
        )))
    })?;
    show_after(settings, ui, &mut result, &after)?;
    ui.emit_structured(settings.output.format, &result)?;
    Ok(verdict(&after, opts))
}

/// Between the plan and the first write: --yes or a terminal to ask on, the heal's pause
/// (noted, not obeyed: a person decides), the permissions, a server-side dry run, and the
/// question. `false`: the person declined.
async fn cleared_to_write(
    conn: &Connection,
    planned: &FollowPlan,
    opts: &FollowOptions,
    interactive: bool,
    ui: &Ui,
) -> anyhow::Result<bool> {
    super::require_confirmation_means(opts.yes, interactive)?;
    if let Some(reason) = heal_paused(conn).await {
        ui.note(&format!(
            "serve --heal is paused on this cluster ({PAUSE_ANNOTATION}: {reason:?}); a repair run by a person is \
             not, so this one goes ahead"
        ));
    }
    check_permissions(conn, &planned.lock, &planned.writes, WriterRole::Repair).await?;
    dry_run(conn, planned).await?;
    ui.note("server-side dry run: accepted");
    Ok(opts.yes || confirm(conn, planned))
}

/// The pause annotation of `serve --heal`, when it is there (an unreadable Namespace: none).
async fn heal_paused(conn: &Connection) -> Option<String> {
    super::serve_heal::read_heal_pause(conn)
        .await
        .ok()
        .flatten()
}

/// The `leases` verdict on a state under `--fail-on`.
fn verdict(loaded: &Loaded, opts: &FollowOptions) -> Exit {
    let analysis = analyse_leases(&loaded.state, loaded.distro, loaded.now.time);
    Exit::verdict(opts.fail_on.is_failure(&analysis.findings))
}

/// The `leases` table after the repair, and the analysis in the result.
fn show_after(
    settings: &Settings,
    ui: &mut Ui,
    result: &mut RepairResult,
    after: &Loaded,
) -> anyhow::Result<()> {
    let analysis = analyse_leases(&after.state, after.distro, after.now.time);
    if !settings.output.format.is_structured() && !ui.quiet {
        let report = LeaseReport::new(after.now, analysis.clone());
        let mut out = Vec::new();
        render::leases::write_table(
            &mut render::streams::TableOut::together(&mut out),
            &report,
            settings.output.format == OutputFormat::Wide,
            ui.style,
        )?;
        ui.write_after(&out)?;
    }
    result.after = Some(analysis);
    Ok(())
}

/// The server-side dry run of every write, on freshly read objects; a conflict here only
/// means the holder renewed, which the real write handles.
async fn dry_run(conn: &Connection, plan: &FollowPlan) -> Result<(), Failure> {
    let objects = read_lock_objects(conn, &plan.lock, &plan.writes).await?;
    for copy in &plan.writes {
        match write_copy(conn, &plan.lock, *copy, &objects, plan.edit(), true).await {
            Ok(_) | Err(WriteError::Conflict) => {}
            Err(WriteError::Other(e) | WriteError::Unanswered(e)) => {
                return Err(super::write_failed_nothing_written(e));
            }
        }
    }
    Ok(())
}

fn confirm(conn: &Connection, plan: &FollowPlan) -> bool {
    let from = if plan.from_holder.is_empty() {
        "(released)".to_string()
    } else {
        plan.from_holder.clone()
    };
    super::confirm_write(
        conn,
        &format!(
            "move lock kube-system/{} from {from} to the server with hostname {} ({})",
            plan.lock,
            plan.to_identity,
            if plan.to_agentless {
                "no Node: it runs without an agent".to_string()
            } else {
                format!("node {}", plan.to_node)
            }
        ),
    )
}

fn emit(settings: &Settings, ui: &mut Ui, result: &RepairResult) -> anyhow::Result<()> {
    if !settings.output.format.is_structured() && !ui.quiet {
        render::tolerate_closed_pipe(
            render::follow::write_plan(&mut ui.out, &result.plan, ui.style).map_err(Into::into),
        )?;
    }
    ui.emit_structured(settings.output.format, result)
}
