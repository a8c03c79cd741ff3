//! What the copies of a lock hold when a write did not end as planned — its answer lost, a
//! second copy refused, a second signal — read again and said exactly.

use super::{REREAD_LIMIT, Unapplied};
use crate::apply::WriteError;
use crate::apply::landed::{Landed, lock_landed};
use crate::commands::lock_writes::read_lock_objects;
use crate::exit::Failure;
use crate::follow::follow_plan::{FollowPlan, LockCopy};
use crate::follow::follow_rejudge::finish_advice;
use crate::follow::lock_objects::{LockObjects, WrittenCopy};
use crate::input::connect::Connection;
use crate::input::narrator::Narrator;

/// A write of `copy` that no answer proves refused, settled by reading it again: what the
/// write now is, or, for the first copy, the end of the run (nothing of this run landed, or
/// it is not known).
pub(super) async fn settle_unanswered(
    conn: &Connection,
    plan: &FollowPlan,
    copy: LockCopy,
    objects: &LockObjects,
    e: &crate::input::ReadError,
    first: bool,
    ui: &dyn Narrator,
) -> Result<Result<WrittenCopy, WriteError>, Unapplied> {
    let before = objects.resource_version(copy).unwrap_or_default();
    match settle(conn, plan, copy, &before, &e.message, ui).await {
        Ok(w) => Ok(Ok(w)),
        Err(Unsettled::NotOurs(line)) if first => {
            Err(Failure::Incomplete(format!("{line}; nothing was written")).into())
        }
        Err(Unsettled::Unknown(line)) if first => Err(Failure::Incomplete(line).into()),
        Err(unsettled) => Ok(Err(WriteError::Other(unsettled.into()))),
    }
}

/// What a write whose answer was lost did, when it did not land as planned: the sentence
/// says what the copy holds instead.
pub(super) enum Unsettled {
    /// Read again, it holds nothing of this run.
    NotOurs(String),
    /// It could not be read again.
    Unknown(String),
}

impl From<Unsettled> for crate::input::ReadError {
    fn from(u: Unsettled) -> crate::input::ReadError {
        match u {
            Unsettled::NotOurs(line) | Unsettled::Unknown(line) => {
                crate::input::ReadError::new(line)
            }
        }
    }
}

/// A write of `copy` whose answer was lost (`why`): the copy read again decides. The write it
/// proves landed comes back as written.
pub(super) async fn settle(
    conn: &Connection,
    plan: &FollowPlan,
    copy: LockCopy,
    before: &str,
    why: &str,
    ui: &dyn Narrator,
) -> Result<WrittenCopy, Unsettled> {
    let object = copy.object(&plan.lock);
    let read =
        tokio::time::timeout(REREAD_LIMIT, read_lock_objects(conn, &plan.lock, &[copy])).await;
    let Ok(Ok(objects)) = read else {
        return Err(Unsettled::Unknown(format!(
            "{why}; {object} may or may not have been written, and reading it again failed: check it with \
             k3sdoctor leases"
        )));
    };
    let record = objects.record(copy);
    let rv = objects.resource_version(copy).unwrap_or_default();
    let now = record
        .as_ref()
        .map(|r| (rv.as_str(), r.holder_identity.as_str()));
    let landed = lock_landed(before, now, &plan.from_holder, &plan.to_identity);
    let said = format!("{why}; read again, {object} {}", landed.describe());
    match landed {
        Landed::Written { resource_version } => {
            ui.note(&said);
            Ok(WrittenCopy {
                object,
                resource_version,
                renew_time: record.and_then(|r| r.renew_time),
            })
        }
        Landed::NotWritten | Landed::ByOther(_) => Err(Unsettled::NotOurs(said)),
    }
}

/// The second of two writes failed: what landed, why the other did not, and — read again —
/// what each copy names now and the command that makes them agree (if one is needed).
pub(super) async fn partial_write(
    conn: &Connection,
    plan: &FollowPlan,
    written: &[(LockCopy, WrittenCopy)],
    failed: LockCopy,
    e: WriteError,
) -> String {
    let done: Vec<String> = written.iter().map(|(_, w)| w.object.clone()).collect();
    let why = match e {
        WriteError::Conflict => "it changed since it was read (409)".to_string(),
        WriteError::Other(e) | WriteError::Unanswered(e) => e.message,
    };
    format!(
        "{} now names {} but writing {} failed: {why}. The two copies disagree, so the current leader exits and the \
         next one is left to chance; {}",
        done.join(" and "),
        plan.to_identity,
        failed.object(&plan.lock),
        read_again(conn, plan).await
    )
}

/// A second signal while `pending` was being written: exactly what was confirmed, that the
/// pending write may or may not have landed, and the copies as read again.
pub(super) async fn stopped(
    conn: &Connection,
    plan: &FollowPlan,
    written: &[(LockCopy, WrittenCopy)],
    pending: LockCopy,
) -> Failure {
    let confirmed = if written.is_empty() {
        "no write was confirmed".to_string()
    } else {
        let done: Vec<String> = written
            .iter()
            .map(|(_, w)| format!("{} (resourceVersion {})", w.object, w.resource_version))
            .collect();
        format!("confirmed written: {}", done.join(" and "))
    };
    Failure::Incomplete(format!(
        "stopped by a second interrupt: {confirmed}; the write of {} was sent and may or may not have landed; {}",
        pending.object(&plan.lock),
        read_again(conn, plan).await
    ))
}

/// The copies of the lock read again (bounded), described for the operator.
async fn read_again(conn: &Connection, plan: &FollowPlan) -> String {
    let read = tokio::time::timeout(
        REREAD_LIMIT,
        read_lock_objects(conn, &plan.lock, &plan.writes),
    )
    .await;
    let objects = match read {
        Ok(Ok(objects)) => Some(objects),
        _ => None,
    };
    if plan.writes.len() == 1 {
        let copy = plan.writes[0];
        return match objects.as_ref().and_then(|o| o.record(copy)) {
            Some(r) => format!(
                "read again, {} names {:?}",
                copy.object(&plan.lock),
                r.holder_identity
            ),
            None => format!(
                "could not read {} again: check it with k3sdoctor leases",
                copy.object(&plan.lock)
            ),
        };
    }
    let objects = objects.unwrap_or_default();
    let lease = objects.record(LockCopy::Lease);
    let lease_rv = objects
        .resource_version(LockCopy::Lease)
        .unwrap_or_default();
    finish_advice(
        &plan.lock,
        &plan.to_identity,
        objects.record(LockCopy::ConfigMap).as_ref(),
        lease.as_ref().map(|r| (r, lease_rv.as_str())),
    )
}
