//! The Event of a lock move (`leases follow --fix` and `serve --heal`): on the Lease (the
//! ConfigMap of a MultiLock pair related), saying from whom to whom and how it ended.

use super::follow_plan::{FollowPlan, LockCopy};
use super::lock_objects::WrittenCopy;
use crate::events::repair_event::{EventObject, EventReason, RepairEvent};

/// `written`: the copies that landed (none for a dry run or a move that wrote nothing);
/// `outcome`: how it ended, in one sentence (`takeover verified in 2.1 s`, the error line).
pub(crate) fn lock_move_event(
    reason: EventReason,
    plan: &FollowPlan,
    written: &[(LockCopy, WrittenCopy)],
    outcome: &str,
    asked_by: &str,
) -> RepairEvent {
    let object = |copy: LockCopy| {
        let rv = written
            .iter()
            .find(|(c, _)| *c == copy)
            .map(|(_, w)| w.resource_version.clone());
        match copy {
            LockCopy::Lease => EventObject::lease(&plan.lock, rv),
            LockCopy::ConfigMap => EventObject::configmap(&plan.lock, rv),
        }
    };
    // The Lease is what `kubectl get lease` shows and what every version from 1.24 has; a
    // 1.23 lock is a ConfigMap alone.
    let regarding = if plan.writes.contains(&LockCopy::Lease) {
        LockCopy::Lease
    } else {
        LockCopy::ConfigMap
    };
    let related = plan
        .writes
        .iter()
        .copied()
        .find(|c| *c != regarding)
        .map(object);
    let from = if plan.from_holder.is_empty() {
        "(released)".to_string()
    } else {
        plan.from_holder.clone()
    };
    let target = if plan.to_agentless {
        format!("{} (no Node)", plan.to_identity)
    } else {
        format!("{} (node {})", plan.to_identity, plan.to_node)
    };
    let verb = match reason {
        EventReason::WouldMoveLock => "would move",
        EventReason::LockMoveFailed => "tried to move",
        _ => "moved",
    };
    let what = format!(
        "{verb} lock kube-system/{} from {from} to {target}: {}. {outcome}",
        plan.lock,
        plan.why.trim_end_matches('.')
    );
    RepairEvent {
        reason,
        regarding: object(regarding),
        related,
        what,
        asked_by: asked_by.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::test_cluster::{TestCluster, now};
    use crate::distro::Distro;
    use crate::follow::follow_plan::{FollowOutcome, FollowRequest, plan_follow};

    fn plan(cluster: TestCluster) -> FollowPlan {
        match plan_follow(
            &cluster.build(),
            Distro::K3s,
            now(),
            &FollowRequest::default(),
        ) {
            Ok(FollowOutcome::Move(p)) => *p,
            other => panic!("expected a move, got {other:?}"),
        }
    }

    fn written(copy: LockCopy, rv: &str) -> (LockCopy, WrittenCopy) {
        (
            copy,
            WrittenCopy {
                object: copy.object("k3s"),
                resource_version: rv.into(),
                renew_time: None,
            },
        )
    }

    #[test]
    fn a_lease_move_is_about_the_lease_with_the_written_resource_version() {
        let p = plan(
            TestCluster::k3s()
                .server("s1", "v1.29.4+k3s1")
                .server("s2", "v1.29.4+k3s1")
                .server("s3", "v1.29.4+k3s1")
                .lease("k3s", "s1", 1)
                .lease("k3s-etcd", "s2", 1),
        );
        let e = lock_move_event(
            EventReason::LockMoved,
            &p,
            &[written(LockCopy::Lease, "77")],
            "takeover verified",
            "serve --heal",
        );
        assert_eq!(e.regarding, EventObject::lease("k3s", Some("77".into())));
        assert_eq!(e.related, None);
        let note = e.note();
        assert!(
            note.starts_with("moved lock kube-system/k3s from s1 to s2 (node s2): "),
            "{note}"
        );
        assert!(
            note.ends_with("takeover verified; asked by serve --heal."),
            "{note}"
        );
    }

    #[test]
    fn a_multilock_pair_relates_the_configmap_and_a_dry_run_says_would() {
        let p = plan(
            TestCluster::k3s()
                .server("s1", "v1.27.13+k3s1")
                .server("s2", "v1.27.13+k3s1")
                .server("s3", "v1.27.13+k3s1")
                .configmap_lock("k3s", "s1", 1)
                .lease("k3s", "s1", 1)
                .configmap_lock("k3s-etcd", "s2", 1)
                .lease("k3s-etcd", "s2", 1),
        );
        assert_eq!(p.writes.len(), 2, "{:?}", p.writes);
        let e = lock_move_event(
            EventReason::WouldMoveLock,
            &p,
            &[],
            "dry run",
            "serve --heal",
        );
        assert_eq!(e.regarding, EventObject::lease("k3s", None));
        assert_eq!(e.related, Some(EventObject::configmap("k3s", None)));
        assert!(
            e.note()
                .starts_with("would move lock kube-system/k3s from s1 to s2")
        );
    }

    #[test]
    fn a_configmap_only_lock_is_about_the_configmap() {
        let p = plan(
            TestCluster::k3s()
                .server("s1", "v1.23.17+k3s1")
                .server("s2", "v1.23.17+k3s1")
                .server("s3", "v1.23.17+k3s1")
                .configmap_lock("k3s", "s1", 1)
                .configmap_lock("k3s-etcd", "s2", 1),
        );
        let e = lock_move_event(
            EventReason::LockMoveFailed,
            &p,
            &[],
            "takeover not verified",
            "x",
        );
        assert_eq!(e.regarding.kind, "ConfigMap");
        assert!(e.note().starts_with("tried to move lock kube-system/k3s"));
    }
}
