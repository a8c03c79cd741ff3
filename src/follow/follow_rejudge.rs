//! Judging `leases follow`'s write again, on the exact objects it is conditioned on. Pure:
//! the plan the user approved and a fresh plan (or the records read back) in, a decision out.
//!
//! Every write carries the resourceVersion of the objects this judgement read, so whatever
//! changes *after* it makes the API server answer 409 and nothing is overwritten. These
//! functions decide about what changed *before* it, since the plan was shown.

use super::follow_plan::{FollowOutcome, FollowPlan, LockCopy, Refusal};
use super::lock_objects::LockObjects;
use crate::model::cluster_state::ClusterState;
use crate::model::configmap::ConfigMapFacts;
use crate::model::lease::LeaseFacts;
use crate::model::lock::LockRecord;

/// `state` with the copies of `lock` replaced by `objects`: the objects the write will be
/// conditioned on, so the plan is judged on exactly them (the rest of the state — Nodes, the
/// other lock — as read just before).
pub(crate) fn judged_state(
    mut state: ClusterState,
    lock: &str,
    objects: &LockObjects,
) -> ClusterState {
    if let Some(lease) = &objects.lease {
        let leases = state.leases.get_or_insert_with(Vec::new);
        leases.retain(|l| l.name != lock);
        leases.push(LeaseFacts::from_api(lease));
    }
    if let Some(cm) = &objects.configmap {
        let configmaps = state.configmaps.get_or_insert_with(Vec::new);
        configmaps.retain(|c| c.name != lock);
        configmaps.push(ConfigMapFacts::from_api(cm));
    }
    state
}

/// What a fresh plan, made on the objects the write is conditioned on, allows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Rejudged {
    /// The same change: write, with this plan's edit (it reads the record as it is now).
    Proceed(Box<FollowPlan>),
    /// The lock already names the target (another run, or the target itself, did it).
    AlreadyAligned,
    /// Something other than a renewal happened: stop, nothing written; the line says what.
    Changed(String),
}

/// The rule: go on only when the fresh plan moves the same lock, through the same copies,
/// from the same holder to the same target. The operator approved replacing holder X by Y,
/// never replacing whoever holds the lock now:
/// - a renewal by the holder (k3s writes `renewTime` every 2 s) changes only the record's
///   times and the resourceVersion, so the plan is the same change and the write goes on;
/// - a k3s takeover, a release, or another k3sdoctor run that wrote its own `--to` changes
///   the holder, so `from` differs: stop (exit 4), even with `--force`;
/// - the default target follows the other lock's holder; if that lock moved, `to` differs and
///   writing the old target would create the split the command exists to end: stop;
/// - a plan that would now be refused (the target went NotReady, quorum is at risk) is a
///   change too: stop with its reason, nothing written.
///
/// The other lock is read, not written, so it is judged as read a moment before; a move of
/// it in the last round trip is not fenced. Verification then sees who renews.
pub(crate) fn rejudge(planned: &FollowPlan, fresh: Result<FollowOutcome, Refusal>) -> Rejudged {
    let fresh = match fresh {
        Ok(FollowOutcome::Aligned { .. }) => return Rejudged::AlreadyAligned,
        Ok(FollowOutcome::Move(fresh)) => fresh,
        Err(refusal) => {
            return Rejudged::Changed(format!(
                "the lock changed since the plan and a new plan is refused: {refusal}; nothing was written; run \
                 the command again to plan from the new state"
            ));
        }
    };
    let same = fresh.lock == planned.lock
        && fresh.from_holder == planned.from_holder
        && fresh.to_identity == planned.to_identity
        && fresh.writes == planned.writes;
    if same {
        return Rejudged::Proceed(fresh);
    }
    Rejudged::Changed(format!(
        "the lock changed since the plan: now {} would move from {} to {} (planned: from {} to {}); nothing was \
         written; run the command again to plan from the new state",
        fresh.lock,
        shown(&fresh.from_holder),
        shown(&fresh.to_identity),
        shown(&planned.from_holder),
        shown(&planned.to_identity)
    ))
}

fn shown(holder: &str) -> String {
    if holder.is_empty() {
        "(released)".into()
    } else {
        format!("{holder:?}")
    }
}

/// A later copy of a MultiLock (the Lease, after the ConfigMap landed) met a 409 and was read
/// again: whether to write it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LaterCopy {
    /// Still the old holder: its last renewal raced in (client-go's MultiLock reads the
    /// ConfigMap first, so it is fenced now). Write again on this read.
    Rewrite,
    /// Already names the target: the pair agrees, nothing to write.
    AlreadyTarget,
    /// Names someone else: do not overwrite it; report the pair as it is.
    Elsewhere(String),
}

pub(crate) fn later_copy(planned: &FollowPlan, now: Option<&LockRecord>) -> LaterCopy {
    match now.map(|r| r.holder_identity.as_str()) {
        Some(h) if h == planned.to_identity => LaterCopy::AlreadyTarget,
        Some(h) if h == planned.from_holder => LaterCopy::Rewrite,
        Some(h) => LaterCopy::Elsewhere(h.to_string()),
        None => LaterCopy::Elsewhere("(no record)".into()),
    }
}

/// The two copies of a MultiLock as read again after a write of the pair failed or was
/// interrupted, and what to tell the operator. Never suggests a command that would make them
/// disagree anew: the command (if any) makes the Lease name what the ConfigMap — MultiLock's
/// primary, which every candidate writes first — names now, conditioned on the Lease's
/// resourceVersion just read, so a change after this read is refused by the API server.
pub(crate) fn finish_advice(
    lock: &str,
    target: &str,
    configmap: Option<&LockRecord>,
    lease: Option<(&LockRecord, &str)>,
) -> String {
    let (Some(cm), Some((lease, lease_rv))) = (configmap, lease) else {
        return format!(
            "could not read both copies of {lock} again: check them with k3sdoctor leases before changing \
             anything, then re-run k3sdoctor leases follow --fix"
        );
    };
    let (cm_holder, lease_holder) = (cm.holder_identity.as_str(), lease.holder_identity.as_str());
    if cm_holder == lease_holder {
        return if cm_holder == target {
            format!(
                "read again, both copies of {lock} name {target}: the pair agrees, nothing is left to finish"
            )
        } else {
            format!(
                "read again, both copies of {lock} name {} (the servers moved the lock since): they agree, nothing \
                 is left to finish; do not edit them",
                shown(cm_holder)
            )
        };
    }
    let moved = if cm_holder == target {
        String::new()
    } else {
        format!(" (it no longer names {target}: a server took the lock since)")
    };
    format!(
        "read again, ConfigMap kube-system/{lock} names {}{moved} and Lease kube-system/{lock} names {}; finish \
         now with: kubectl -n kube-system patch lease {lock} --type merge -p \
         '{{\"metadata\":{{\"resourceVersion\":\"{lease_rv}\"}},\"spec\":{{\"holderIdentity\":\"{cm_holder}\"}}}}' \
         (or re-run k3sdoctor leases follow --fix); the patch is refused if the Lease changes first",
        shown(cm_holder),
        shown(lease_holder)
    )
}

/// The copies written so far, by name.
pub(crate) fn written_list(lock: &str, written: &[LockCopy]) -> String {
    let names: Vec<String> = written.iter().map(|c| c.object(lock)).collect();
    names.join(" and ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::test_cluster::{TestCluster, now};
    use crate::distro::Distro;
    use crate::follow::follow_plan::{FollowRequest, plan_follow};

    const V: &str = "v1.27.13+k3s1";

    fn cluster(core: &str, etcd: &str) -> TestCluster {
        TestCluster::k3s()
            .server("s1", V)
            .server("s2", V)
            .server("s3", V)
            .server("s4", V)
            .server("s5", V)
            .lease("k3s", core, 1)
            .configmap_lock("k3s", core, 1)
            .lease("k3s-etcd", etcd, 1)
            .configmap_lock("k3s-etcd", etcd, 1)
    }

    fn plan(c: TestCluster, to: Option<&str>) -> Result<FollowOutcome, Refusal> {
        let req = FollowRequest {
            to: to.map(str::to_string),
            force: to.is_some(),
            ..Default::default()
        };
        plan_follow(&c.build(), Distro::K3s, now(), &req)
    }

    fn approved(c: TestCluster, to: Option<&str>) -> FollowPlan {
        match plan(c, to) {
            Ok(FollowOutcome::Move(p)) => *p,
            other => panic!("expected a move, got {other:?}"),
        }
    }

    #[test]
    fn a_renewal_by_the_same_holder_is_the_same_change() {
        let planned = approved(cluster("s1", "s2"), None);
        // The holder renewed: only the times moved.
        let fresh = plan(cluster("s1", "s2").lease("k3s", "s1", 0), None);
        assert!(matches!(rejudge(&planned, fresh), Rejudged::Proceed(_)));
    }

    #[test]
    fn another_runs_target_is_never_overwritten() {
        let planned = approved(cluster("s1", "s1"), Some("s3"));
        // Another k3sdoctor run wrote its own --to s4 meanwhile.
        let fresh = plan(
            cluster("s4", "s1")
                .lease("k3s", "s4", 0)
                .configmap_lock("k3s", "s4", 0),
            Some("s3"),
        );
        let Rejudged::Changed(line) = rejudge(&planned, fresh) else {
            panic!("went on over another run's write")
        };
        assert!(line.contains("from \"s4\" to \"s3\""), "{line}");
        assert!(line.contains("planned: from \"s1\" to \"s3\""), "{line}");
        assert!(line.contains("nothing was written"), "{line}");
    }

    #[test]
    fn a_k3s_takeover_or_a_moved_etcd_lock_stops_the_default_plan() {
        let planned = approved(cluster("s1", "s2"), None);
        let takeover = plan(cluster("s3", "s2"), None);
        assert!(matches!(rejudge(&planned, takeover), Rejudged::Changed(_)));
        // k3s-etcd moved to s3: writing s2 would create a split.
        let etcd_moved = plan(cluster("s1", "s3"), None);
        let Rejudged::Changed(line) = rejudge(&planned, etcd_moved) else {
            panic!("wrote the old target after the other lock moved")
        };
        assert!(line.contains("to \"s3\""), "{line}");
    }

    #[test]
    fn the_target_already_holding_it_needs_nothing_and_a_refusal_stops() {
        let planned = approved(cluster("s1", "s2"), None);
        assert_eq!(
            rejudge(&planned, plan(cluster("s2", "s2"), None)),
            Rejudged::AlreadyAligned
        );
        let refused = Err(Refusal("target s2 is NotReady".into()));
        let Rejudged::Changed(line) = rejudge(&planned, refused) else {
            panic!("went on after a refusal")
        };
        assert!(
            line.contains("NotReady") && line.contains("nothing was written"),
            "{line}"
        );
    }

    fn record(holder: &str) -> LockRecord {
        LockRecord {
            holder_identity: holder.into(),
            lease_duration_seconds: Some(15),
            acquire_time: None,
            renew_time: None,
            transitions: None,
        }
    }

    #[test]
    fn a_later_copy_is_written_again_only_over_the_old_holder() {
        let planned = approved(cluster("s1", "s2"), None);
        assert_eq!(
            later_copy(&planned, Some(&record("s1"))),
            LaterCopy::Rewrite
        );
        assert_eq!(
            later_copy(&planned, Some(&record("s2"))),
            LaterCopy::AlreadyTarget
        );
        assert_eq!(
            later_copy(&planned, Some(&record("s3"))),
            LaterCopy::Elsewhere("s3".into())
        );
    }

    #[test]
    fn finish_advice_never_creates_a_new_disagreement() {
        let (s1, s2, s3) = (record("s1"), record("s2"), record("s3"));
        let done = finish_advice("k3s", "s2", Some(&s2), Some((&s2, "7")));
        assert!(
            done.contains("nothing is left to finish") && !done.contains("kubectl"),
            "{done}"
        );
        let moved = finish_advice("k3s", "s2", Some(&s3), Some((&s3, "7")));
        assert!(
            moved.contains("moved the lock since") && !moved.contains("kubectl"),
            "{moved}"
        );
        let half = finish_advice("k3s", "s2", Some(&s2), Some((&s1, "7")));
        assert!(
            half.contains(
                r#"'{"metadata":{"resourceVersion":"7"},"spec":{"holderIdentity":"s2"}}'"#
            ),
            "{half}"
        );
        // The ConfigMap moved on after our write: the Lease follows it, not our target.
        let taken = finish_advice("k3s", "s2", Some(&s3), Some((&s1, "9")));
        assert!(
            taken.contains(r#""holderIdentity":"s3""#) && taken.contains("no longer names s2"),
            "{taken}"
        );
        let unread = finish_advice("k3s", "s2", None, Some((&s1, "9")));
        assert!(
            !unread.contains("kubectl") && unread.contains("k3sdoctor leases"),
            "{unread}"
        );
    }
}
