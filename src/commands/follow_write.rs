//! The writes of `leases follow --fix`: every copy of the lock conditioned on the very objects
//! the plan was judged on, and a MultiLock pair finished or reported exactly — on a failure,
//! and on SIGINT/SIGTERM too.

use super::load::{Loaded, read_live_for_a_move};
mod after_a_failure;

use self::after_a_failure::{partial_write, settle, settle_unanswered, stopped};
use super::lock_writes::{read_lock_objects, write_copy};
use super::termination::{REREAD_LIMIT, Termination};
use crate::apply::WriteError;
use crate::exit::Failure;
use crate::follow::follow_plan::{FollowPlan, FollowRequest, LockCopy, plan_follow};
use crate::follow::follow_rejudge::{
    LaterCopy, Rejudged, judged_state, later_copy, rejudge, written_list,
};
use crate::follow::lock_objects::{LockObjects, WrittenCopy};
use crate::input::connect::Connection;
use crate::input::narrator::Narrator;
use crate::settings::Judging;

/// Re-plans after a 409 at most this many times before giving up.
const MAX_ATTEMPTS: usize = 5;

/// How often a later copy of a MultiLock is re-read and written again after a 409.
const LATER_COPY_ATTEMPTS: usize = 3;

pub(super) enum Applied {
    Written(Vec<(LockCopy, WrittenCopy)>),
    AlreadyAligned,
}

/// A move that did not end as planned, with the copies that did land, so its Event names
/// exactly what was written.
pub(super) struct Unapplied {
    pub failure: Failure,
    pub written: Vec<(LockCopy, WrittenCopy)>,
    /// Every copy landed (an interrupted run stops before the takeover is verified).
    pub all_written: bool,
}

impl Unapplied {
    fn nothing_written(failure: Failure) -> Unapplied {
        Unapplied {
            failure,
            written: Vec::new(),
            all_written: false,
        }
    }
}

impl From<Failure> for Unapplied {
    fn from(failure: Failure) -> Unapplied {
        Unapplied::nothing_written(failure)
    }
}

/// Judges the plan again on the lock objects as they are now and writes every copy with
/// *their* resourceVersions: whatever changes after this judgement is a 409, never
/// overwritten. On a 409 on the first copy the loop judges again (`rejudge` holds the rule);
/// a failure after the first copy leaves the copies disagreeing, which is said exactly.
///
/// `term` has caught SIGINT/SIGTERM since before the first read: before anything is sent, a
/// signal stops with nothing written; once the first write is sent, the pair is finished
/// first (a second signal stops at once, with a report of what each copy names).
pub(super) async fn apply(
    conn: &Connection,
    judging: Judging,
    planned: &FollowPlan,
    request: &FollowRequest,
    ui: &dyn Narrator,
    term: &mut Termination,
) -> Result<Applied, Unapplied> {
    for attempt in 1..=MAX_ATTEMPTS {
        let judged = tokio::select! {
            judged = judge(conn, judging, planned, request, ui) => judged?,
            _ = term.received() => {
                return Err(Failure::Incomplete(
                    "interrupted before anything was sent: nothing was written".into(),
                ).into());
            }
        };
        let (current, objects) = match judged {
            (Rejudged::Proceed(current), objects) => (current, objects),
            (Rejudged::AlreadyAligned, _) => return Ok(Applied::AlreadyAligned),
            (Rejudged::Changed(line), _) => return Err(Failure::Incomplete(line).into()),
        };
        match write_pair(conn, &current, &objects, ui, term).await? {
            Some(written) => return Ok(Applied::Written(written)),
            None => ui.trace(&format!(
                "conflict writing {} (attempt {attempt}); re-reading",
                current.writes[0].object(&current.lock)
            )),
        }
    }
    Err(Failure::Incomplete(format!(
        "{} changed under every one of {MAX_ATTEMPTS} write attempts; nothing was written; run the command again",
        planned.lock
    ))
    .into())
}

/// The cluster read again, with the lock's copies read last and substituted: the plan is
/// made on exactly the objects (and resourceVersions) the writes will carry.
async fn judge(
    conn: &Connection,
    judging: Judging,
    planned: &FollowPlan,
    request: &FollowRequest,
    ui: &dyn Narrator,
) -> Result<(Rejudged, LockObjects), Failure> {
    let fresh = read_live_for_a_move(conn, judging, ui).await?;
    let objects = read_lock_objects(conn, &planned.lock, &planned.writes).await?;
    let judged = Loaded {
        state: judged_state(fresh.state, &planned.lock, &objects),
        ..fresh
    };
    let outcome = plan_follow(&judged.state, judged.distro, judged.now.time, request);
    Ok((rejudge(planned, outcome), objects))
}

/// Every copy, in order. `None`: a 409 on the first copy, nothing written.
async fn write_pair(
    conn: &Connection,
    plan: &FollowPlan,
    objects: &LockObjects,
    ui: &dyn Narrator,
    term: &mut Termination,
) -> Result<Option<Vec<(LockCopy, WrittenCopy)>>, Unapplied> {
    let mut written: Vec<(LockCopy, WrittenCopy)> = Vec::new();
    let mut interrupted = false;
    for (i, copy) in plan.writes.iter().copied().enumerate() {
        let send = write_copy(conn, &plan.lock, copy, objects, plan.edit(), false);
        let Some(mut result) = unless_stopped(send, term, &mut interrupted, ui, plan).await else {
            let failure = stopped(conn, plan, &written, copy).await;
            // The Event names the copy if it did land.
            let before = objects.resource_version(copy).unwrap_or_default();
            let why = "stopped by a second interrupt";
            if let Ok(w) = settle(conn, plan, copy, &before, why, ui).await {
                written.push((copy, w));
            }
            return Err(unapplied(plan, failure, written));
        };
        if let Err(WriteError::Unanswered(e)) = result {
            result = settle_unanswered(conn, plan, copy, objects, &e, i == 0, ui).await?;
        }
        match result {
            Ok(w) => {
                ui.note(&format!(
                    "wrote {} (resourceVersion {})",
                    w.object, w.resource_version
                ));
                written.push((copy, w));
            }
            Err(WriteError::Conflict) if i == 0 && interrupted => {
                return Err(Failure::Incomplete(format!(
                    "interrupted: {} changed since it was read (409), so nothing was written",
                    copy.object(&plan.lock)
                ))
                .into());
            }
            Err(WriteError::Conflict) if i == 0 => return Ok(None),
            Err(WriteError::Other(e) | WriteError::Unanswered(e)) if i == 0 => {
                return Err(super::write_failed_nothing_written(e).into());
            }
            Err(WriteError::Conflict) => {
                let again =
                    rewrite_after_conflict(conn, plan, copy, ui, term, &mut interrupted).await;
                match again {
                    Some(Ok(Some(w))) => written.push((copy, w)),
                    // The copy names the target already: the pair agrees.
                    Some(Ok(None)) => {}
                    Some(Err(e)) => {
                        let line = partial_write(conn, plan, &written, copy, e).await;
                        return Err(unapplied(plan, Failure::Incomplete(line), written));
                    }
                    None => {
                        let failure = stopped(conn, plan, &written, copy).await;
                        return Err(unapplied(plan, failure, written));
                    }
                }
            }
            Err(e) => {
                let line = partial_write(conn, plan, &written, copy, e).await;
                return Err(unapplied(plan, Failure::Incomplete(line), written));
            }
        }
    }
    if interrupted {
        let failure = Failure::Incomplete(format!(
            "interrupted: finished the write first: {} now {} {}; the takeover was not verified; check it with \
             k3sdoctor leases",
            written_list(&plan.lock, &plan.writes),
            if plan.writes.len() > 1 {
                "name"
            } else {
                "names"
            },
            plan.to_identity
        ));
        return Err(unapplied(plan, failure, written));
    }
    Ok(Some(written))
}

fn unapplied(
    plan: &FollowPlan,
    failure: Failure,
    written: Vec<(LockCopy, WrittenCopy)>,
) -> Unapplied {
    let all_written = plan
        .writes
        .iter()
        .all(|c| written.iter().any(|(w, _)| w == c));
    Unapplied {
        failure,
        written,
        all_written,
    }
}

/// Runs `send` to its end through a first SIGINT/SIGTERM (noted, remembered in `interrupted`);
/// `None` when a second one comes first.
async fn unless_stopped<T>(
    send: impl std::future::Future<Output = T>,
    term: &mut Termination,
    interrupted: &mut bool,
    ui: &dyn Narrator,
    plan: &FollowPlan,
) -> Option<T> {
    term.finish_first(send, interrupted, || {
        ui.note(&format!(
            "interrupted: a write is already sent, so k3sdoctor first finishes writing {} (interrupt again to \
             stop at once and see what each copy names)",
            written_list(&plan.lock, &plan.writes)
        ));
    })
    .await
}

/// A later copy met a 409 after the first landed: read it again and write it again only over
/// the old holder's own renewal (`later_copy`). `Ok(None)`: it names the target already.
/// `None`: stopped by a second signal.
async fn rewrite_after_conflict(
    conn: &Connection,
    plan: &FollowPlan,
    copy: LockCopy,
    ui: &dyn Narrator,
    term: &mut Termination,
    interrupted: &mut bool,
) -> Option<Result<Option<WrittenCopy>, WriteError>> {
    for attempt in 1..=LATER_COPY_ATTEMPTS {
        ui.trace(&format!(
            "conflict writing {} after the first copy landed (attempt {attempt}); re-reading it",
            copy.object(&plan.lock)
        ));
        let copies = [copy];
        let read = read_lock_objects(conn, &plan.lock, &copies);
        let objects = match unless_stopped(read, term, interrupted, ui, plan).await? {
            Ok(objects) => objects,
            Err(e) => return Some(Err(WriteError::Other(e))),
        };
        match later_copy(plan, objects.record(copy).as_ref()) {
            LaterCopy::Rewrite => {}
            LaterCopy::AlreadyTarget => return Some(Ok(None)),
            LaterCopy::Elsewhere(holder) => {
                return Some(Err(WriteError::Other(crate::input::ReadError::new(
                    format!(
                        "it names {holder:?} now, so it was left alone rather than overwritten"
                    ),
                ))));
            }
        }
        let send = write_copy(conn, &plan.lock, copy, &objects, plan.edit(), false);
        match unless_stopped(send, term, interrupted, ui, plan).await? {
            Err(WriteError::Unanswered(e)) => {
                let before = objects.resource_version(copy).unwrap_or_default();
                let settled = settle(conn, plan, copy, &before, &e.message, ui).await;
                return Some(settled.map(Some).map_err(|u| WriteError::Other(u.into())));
            }
            Ok(w) => {
                ui.note(&format!(
                    "wrote {} (resourceVersion {})",
                    w.object, w.resource_version
                ));
                return Some(Ok(Some(w)));
            }
            Err(WriteError::Conflict) => {}
            Err(e) => return Some(Err(e)),
        }
    }
    Some(Err(WriteError::Conflict))
}
