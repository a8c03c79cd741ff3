//! `k3sdoctor leases follow`: plan → (with `--fix`) permission check, server-side dry run,
//! confirmation, preconditioned write → verify the takeover → the `leases` verdict again.

use std::io::IsTerminal;
use std::time::Duration;

use super::Ui;
use super::load::{Loaded, connect_live, load_lease_state, read_live, runtime};
use crate::cli::{FollowArgs, GlobalArgs};
use crate::cluster::connect::Connection;
use crate::diagnose::leases::analyse_leases;
use crate::exit::{Exit, Failure};
use crate::render::{self, OutputFormat};
use crate::repair::follow_apply::{
    WriteError, WrittenCopy, check_permissions, read_lock_objects, write_copy,
};
use crate::repair::follow_plan::{FollowOutcome, FollowPlan, FollowRequest, LockCopy, plan_follow};
use crate::repair::follow_verify::{Progress, verify_takeover};
use crate::report::{LeaseReport, RepairOutcome, RepairResult};

/// Re-plans after a 409 at most this many times before giving up.
const MAX_ATTEMPTS: usize = 5;

pub fn run(global: &GlobalArgs, args: &FollowArgs, ui: &mut Ui) -> anyhow::Result<Exit> {
    let request = FollowRequest {
        lease: args.lease.clone(),
        to: args.to.clone(),
        force: args.force,
    };
    if !global.from_file.is_empty() {
        if args.fix {
            return Err(super::refuse_fix_on_dump().into());
        }
        let loaded = load_lease_state(global, ui)?;
        super::load::require_primary(&loaded, crate::cluster::dump_coverage::Primary::Locks)?;
        let outcome = plan(&loaded, &request)?;
        let moves = matches!(outcome, FollowOutcome::Move(_));
        let (exit, status) = if moves {
            (Exit::Findings, RepairOutcome::Planned)
        } else {
            (verdict(&loaded, args), RepairOutcome::Aligned)
        };
        emit(global, ui, &RepairResult::new(status, outcome))?;
        if moves {
            ui.note("plan only: a dump is never written to; run against the cluster with --fix to apply");
        }
        return Ok(exit);
    }
    let interactive = ui.interactive();
    runtime()?.block_on(follow_live(global, args, &request, ui, interactive))
}

fn plan(loaded: &Loaded, request: &FollowRequest) -> Result<FollowOutcome, Failure> {
    plan_follow(&loaded.state, loaded.distro, loaded.now.time, request)
        .map_err(|r| Failure::Refused(r.0))
}

async fn follow_live(
    global: &GlobalArgs,
    args: &FollowArgs,
    request: &FollowRequest,
    ui: &mut Ui,
    interactive: bool,
) -> anyhow::Result<Exit> {
    let conn = connect_live(global, ui).await?;
    let loaded = read_live(&conn, global, ui).await?;
    let outcome = plan(&loaded, request)?;
    let FollowOutcome::Move(planned) = outcome.clone() else {
        emit(
            global,
            ui,
            &RepairResult::new(RepairOutcome::Aligned, outcome),
        )?;
        return Ok(verdict(&loaded, args));
    };
    let mut result = RepairResult::new(RepairOutcome::Planned, outcome);
    if !global.output.is_structured() && !ui.quiet {
        render::tolerate_closed_pipe(
            render::follow::write_plan(&mut ui.out, &result.plan, ui.style).map_err(Into::into),
        )?;
    }
    if !args.fix {
        ui.note("dry run: nothing was written; re-run with --fix to apply this plan");
        ui.emit_structured(global, &result)?;
        return Ok(Exit::Findings);
    }
    super::require_confirmation_means(args.yes, interactive)?;
    check_permissions(&conn, &planned.lock, &planned.writes).await?;
    dry_run(&conn, &planned).await?;
    ui.note("server-side dry run: accepted");
    if !args.yes && !confirm(&conn, &planned) {
        ui.note("declined: nothing was written");
        result.outcome = RepairOutcome::Declined;
        ui.emit_structured(global, &result)?;
        return Ok(Exit::Findings);
    }

    let written = match apply(&conn, global, &planned, request, ui).await? {
        Applied::Written(written) => written,
        Applied::AlreadyAligned => {
            ui.note(&format!(
                "{} already names {} now: nothing to write",
                planned.lock, planned.to_identity
            ));
            result.outcome = RepairOutcome::Aligned;
            let after = read_live(&conn, global, ui).await?;
            ui.emit_structured(global, &result)?;
            return Ok(verdict(&after, args));
        }
    };
    result.written = written.iter().map(|(_, w)| w.clone()).collect();
    result.outcome = RepairOutcome::Written;

    if args.no_wait {
        // The write itself was read back (the PUT answered with the new holder); the takeover
        // is left to the user.
        ui.note("not waiting for the takeover (--no-wait); check with `k3sdoctor leases`");
    } else {
        let verification = {
            let spinner = Spinner::new(ui);
            let phase = |line: &str| spinner.set(line);
            let note = |line: &str| spinner.suspend(|| ui.note(line));
            verify_takeover(
                &conn,
                &planned.lock,
                &written,
                &planned.from_holder,
                &planned.to_identity,
                args.timeout
                    .unwrap_or_else(|| planned.timing.verify_timeout()),
                &Progress {
                    phase: &phase,
                    note: &note,
                },
            )
            .await
        };
        result.verification = Some(verification.clone());
        if !verification.verified {
            result.outcome = RepairOutcome::NotVerified;
            // Still show the cluster as it is now; the failure is the error line at the end.
            if let Ok(after) = read_live(&conn, global, ui).await {
                show_after(global, ui, &mut result, &after)?;
            }
            ui.emit_structured(global, &result)?;
            return Err(Failure::Incomplete(verification.message).into());
        }
        // A failure is the error line at the end; success is worth a line of its own.
        ui.note(&verification.message);
        result.outcome = RepairOutcome::Verified;
    }

    // One exit rule for every repair: once the write is verified, the exit code is the verdict
    // of the cluster read afresh, exactly as `leases --fail-on` computes it.
    let after = read_live(&conn, global, ui).await.map_err(|e| {
        Failure::Read(crate::cluster::ReadError::new(format!(
            "{} was written and verified, but the cluster could not be read again to judge it: {e}; run \
             k3sdoctor leases",
            planned.lock
        )))
    })?;
    show_after(global, ui, &mut result, &after)?;
    ui.emit_structured(global, &result)?;
    Ok(verdict(&after, args))
}

/// The `leases` verdict on a state under `--fail-on`.
fn verdict(loaded: &Loaded, args: &FollowArgs) -> Exit {
    let analysis = analyse_leases(&loaded.state, loaded.distro, loaded.now.time);
    Exit::verdict(args.fail_on.is_failure(&analysis.findings))
}

/// The `leases` table after the repair, and the analysis in the result.
fn show_after(
    global: &GlobalArgs,
    ui: &mut Ui,
    result: &mut RepairResult,
    after: &Loaded,
) -> anyhow::Result<()> {
    let analysis = analyse_leases(&after.state, after.distro, after.now.time);
    if !global.output.is_structured() && !ui.quiet {
        let report = LeaseReport::new(after.now, analysis.clone());
        let mut out = Vec::new();
        render::leases::write_table(
            &mut out,
            &report,
            global.output == OutputFormat::Wide,
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
            Err(WriteError::Other(e)) => return Err(super::write_failed_nothing_written(e)),
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

enum Applied {
    Written(Vec<(LockCopy, WrittenCopy)>),
    AlreadyAligned,
}

/// Writes every copy with the resourceVersion just read. A 409 on the first copy means the
/// lock moved on (usually a renewal): re-read, re-plan, and go on only if the plan is the same
/// change. A failure after the first copy leaves the copies disagreeing: say exactly that.
async fn apply(
    conn: &Connection,
    global: &GlobalArgs,
    planned: &FollowPlan,
    request: &FollowRequest,
    ui: &Ui,
) -> Result<Applied, Failure> {
    'attempt: for attempt in 1..=MAX_ATTEMPTS {
        let fresh = read_live(conn, global, ui).await?;
        match plan(&fresh, request)? {
            FollowOutcome::Aligned { .. } => return Ok(Applied::AlreadyAligned),
            FollowOutcome::Move(p) if !same_change(&p, planned) => {
                return Err(Failure::Incomplete(format!(
                    "the lock changed since the plan: now {} would move from {:?} to {:?} (planned: from {:?} to {:?}); \
                     nothing was written; run the command again to plan from the new state",
                    p.lock, p.from_holder, p.to_identity, planned.from_holder, planned.to_identity
                )));
            }
            FollowOutcome::Move(_) => {}
        }
        let objects = read_lock_objects(conn, &planned.lock, &planned.writes).await?;
        let mut written = Vec::new();
        for (i, copy) in planned.writes.iter().enumerate() {
            match write_copy(conn, &planned.lock, *copy, &objects, planned.edit(), false).await {
                Ok(w) => {
                    ui.note(&format!(
                        "wrote {} (resourceVersion {})",
                        w.object, w.resource_version
                    ));
                    written.push((*copy, w));
                }
                Err(WriteError::Conflict) if i == 0 => {
                    ui.trace(&format!(
                        "conflict writing {} (attempt {attempt}); re-reading",
                        copy.object(&planned.lock)
                    ));
                    continue 'attempt;
                }
                Err(WriteError::Other(e)) if i == 0 => {
                    return Err(super::write_failed_nothing_written(e));
                }
                Err(WriteError::Conflict) => {
                    // The first copy landed, so the old holder is fenced (client-go's MultiLock
                    // reads it first); a 409 here is its last renewal of the Lease racing in.
                    // Re-read that copy and write it again, bounded.
                    let w = rewrite_after_conflict(conn, planned, *copy, ui)
                        .await
                        .map_err(|e| {
                            Failure::Incomplete(partial_write(planned, &written, *copy, e))
                        })?;
                    written.push((*copy, w));
                }
                Err(e) => {
                    return Err(Failure::Incomplete(partial_write(
                        planned, &written, *copy, e,
                    )));
                }
            }
        }
        return Ok(Applied::Written(written));
    }
    Err(Failure::Incomplete(format!(
        "{} changed under every one of {MAX_ATTEMPTS} write attempts; nothing was written; run the command again",
        planned.lock
    )))
}

/// How often a later copy of a MultiLock is re-read and written again after a 409.
const LATER_COPY_ATTEMPTS: usize = 3;

async fn rewrite_after_conflict(
    conn: &Connection,
    planned: &FollowPlan,
    copy: LockCopy,
    ui: &Ui,
) -> Result<WrittenCopy, WriteError> {
    let mut last = WriteError::Conflict;
    for attempt in 1..=LATER_COPY_ATTEMPTS {
        ui.trace(&format!(
            "conflict writing {} after the first copy landed (attempt {attempt}); re-reading it",
            copy.object(&planned.lock)
        ));
        let objects = read_lock_objects(conn, &planned.lock, &[copy])
            .await
            .map_err(WriteError::Other)?;
        match write_copy(conn, &planned.lock, copy, &objects, planned.edit(), false).await {
            Ok(w) => {
                ui.note(&format!(
                    "wrote {} (resourceVersion {})",
                    w.object, w.resource_version
                ));
                return Ok(w);
            }
            Err(WriteError::Conflict) => last = WriteError::Conflict,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

fn same_change(a: &FollowPlan, b: &FollowPlan) -> bool {
    a.lock == b.lock
        && a.from_holder == b.from_holder
        && a.to_identity == b.to_identity
        && a.writes == b.writes
}

fn partial_write(
    plan: &FollowPlan,
    written: &[(LockCopy, WrittenCopy)],
    failed: LockCopy,
    e: WriteError,
) -> String {
    let done: Vec<String> = written.iter().map(|(_, w)| w.object.clone()).collect();
    let why = match e {
        WriteError::Conflict => "it changed since it was read (409)".to_string(),
        WriteError::Other(e) => e.message,
    };
    let finish = match failed {
        LockCopy::Lease => format!(
            "kubectl -n kube-system patch lease {} --type merge -p '{{\"spec\":{{\"holderIdentity\":\"{}\"}}}}'",
            plan.lock, plan.to_identity
        ),
        LockCopy::ConfigMap => format!(
            "set holderIdentity to {:?} in the control-plane.alpha.kubernetes.io/leader annotation of ConfigMap kube-system/{}",
            plan.to_identity, plan.lock
        ),
    };
    format!(
        "{} now names {} but writing {} failed: {why}. The two copies disagree, so the current leader exits and the \
         next one is left to chance; finish now with: {finish} (or re-run k3sdoctor leases follow --fix)",
        done.join(" and "),
        plan.to_identity,
        failed.object(&plan.lock)
    )
}

fn emit(global: &GlobalArgs, ui: &mut Ui, result: &RepairResult) -> anyhow::Result<()> {
    if !global.output.is_structured() && !ui.quiet {
        render::tolerate_closed_pipe(
            render::follow::write_plan(&mut ui.out, &result.plan, ui.style).map_err(Into::into),
        )?;
    }
    ui.emit_structured(global, result)
}

/// The current phase on stderr while waiting, only on a terminal.
struct Spinner(Option<indicatif::ProgressBar>);

impl Spinner {
    fn new(ui: &Ui) -> Spinner {
        if ui.quiet || !std::io::stderr().is_terminal() {
            return Spinner(None);
        }
        let bar = indicatif::ProgressBar::new_spinner();
        bar.enable_steady_tick(Duration::from_millis(120));
        Spinner(Some(bar))
    }

    fn set(&self, line: &str) {
        if let Some(bar) = &self.0 {
            bar.set_message(line.to_string());
        }
    }

    /// Runs `print` (a line on stderr) with the spinner put aside.
    fn suspend(&self, print: impl FnOnce()) {
        match &self.0 {
            Some(bar) => bar.suspend(print),
            None => print(),
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}
