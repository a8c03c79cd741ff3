//! What changed between two lease analyses: the events `leases --watch` prints. A renewal by
//! the same holder is not a change (it happens every couple of seconds); a new holder, a new
//! state (held, expired, released, missing, ...), a new transition count or a split starting or
//! ending is.

use jiff::Timestamp;
use serde::Serialize;

use super::LeaseAnalysis;
use super::lock_status::{LockPurpose, LockState, LockStatus};
use crate::diagnose::finding::FindingCode;

/// One lock as a change line shows it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LockSide {
    pub holder: Option<String>,
    /// The Node the holder identity maps to.
    pub node: Option<String>,
    pub state: LockState,
    pub transitions: Option<i64>,
}

impl LockSide {
    fn of(lock: &LockStatus) -> LockSide {
        LockSide {
            holder: lock.holder.clone().filter(|h| !h.is_empty()),
            node: lock.node.as_ref().map(|n| n.name.clone()),
            state: lock.state,
            transitions: lock.transitions,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LockChange {
    /// When the change was seen.
    pub time: Timestamp,
    pub lock: String,
    pub purpose: LockPurpose,
    pub from: LockSide,
    pub to: LockSide,
    /// Whether the locks are split after this change (a `lease-split` finding).
    pub split: bool,
}

/// The changes from `before` to `after`, lock by lock, in the analysis' lock order.
pub(crate) fn lease_changes(
    before: &LeaseAnalysis,
    after: &LeaseAnalysis,
    time: Timestamp,
) -> Vec<LockChange> {
    let split_before = is_split(before);
    let split = is_split(after);
    let mut changes: Vec<LockChange> = after
        .locks
        .iter()
        .filter_map(|new| {
            let old = before.locks.iter().find(|l| l.name == new.name)?;
            let (from, to) = (LockSide::of(old), LockSide::of(new));
            (from != to).then(|| LockChange {
                time,
                lock: new.name.clone(),
                purpose: new.purpose,
                from,
                to,
                split,
            })
        })
        .collect();
    // A split can start or end without either lock changing (a holder's Node appearing, an
    // upgrade changing the verdict): say so on the core lock, the one `follow` moves.
    if changes.is_empty() && split != split_before {
        changes.extend(
            after
                .locks
                .iter()
                .find(|l| l.purpose == LockPurpose::Core)
                .map(|lock| LockChange {
                    time,
                    lock: lock.name.clone(),
                    purpose: lock.purpose,
                    from: LockSide::of(lock),
                    to: LockSide::of(lock),
                    split,
                }),
        );
    }
    changes
}

fn is_split(analysis: &LeaseAnalysis) -> bool {
    analysis
        .findings
        .iter()
        .any(|f| f.code == FindingCode::LeaseSplit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::leases::analyse_leases;
    use crate::diagnose::test_cluster::{TestCluster, now};
    use crate::distro::Distro;

    fn cluster() -> TestCluster {
        TestCluster::k3s()
            .server("s1", "v1.29.4+k3s1")
            .server("s2", "v1.29.4+k3s1")
    }

    fn analyse(cluster: TestCluster) -> LeaseAnalysis {
        analyse_leases(&cluster.build(), Distro::K3s, now())
    }

    #[test]
    fn a_renewal_by_the_same_holder_is_no_change() {
        let before = analyse(cluster().lease("k3s", "s1", 5).lease("k3s-etcd", "s1", 5));
        let after = analyse(cluster().lease("k3s", "s1", 1).lease("k3s-etcd", "s1", 0));
        assert_eq!(lease_changes(&before, &after, now()), []);
    }

    #[test]
    fn a_new_holder_is_one_change_that_says_whether_the_locks_are_now_split() {
        let before = analyse(cluster().lease("k3s", "s1", 1).lease("k3s-etcd", "s1", 1));
        let mut after = analyse(cluster().lease("k3s", "s1", 1).lease("k3s-etcd", "s2", 0));
        after.locks[1].transitions = Some(2);
        let changes = lease_changes(&before, &after, now());
        assert_eq!(changes.len(), 1, "{changes:#?}");
        let change = &changes[0];
        assert_eq!(change.lock, "k3s-etcd");
        assert_eq!(change.purpose, LockPurpose::Etcd);
        assert_eq!(change.from.holder.as_deref(), Some("s1"));
        assert_eq!(change.to.holder.as_deref(), Some("s2"));
        assert_eq!(change.to.node.as_deref(), Some("s2"));
        assert_eq!(
            (change.from.transitions, change.to.transitions),
            (Some(1), Some(2))
        );
        assert!(change.split);
        assert_eq!(change.time, now());

        let healed = analyse(cluster().lease("k3s", "s2", 0).lease("k3s-etcd", "s2", 0));
        let changes = lease_changes(&after, &healed, now());
        assert_eq!(
            changes.len(),
            2,
            "k3s moved, k3s-etcd's transitions went back: {changes:#?}"
        );
        assert_eq!(changes[0].lock, "k3s");
        assert!(!changes[0].split);
    }

    #[test]
    fn expiry_and_release_are_changes_of_state() {
        let before = analyse(cluster().lease("k3s", "s1", 1).lease("k3s-etcd", "s1", 1));
        let after = analyse(cluster().lease("k3s", "s1", 120).lease("k3s-etcd", "", 1));
        let changes = lease_changes(&before, &after, now());
        let states: Vec<_> = changes.iter().map(|c| (c.from.state, c.to.state)).collect();
        assert_eq!(
            states,
            [
                (LockState::Held, LockState::Expired),
                (LockState::Held, LockState::Released)
            ]
        );
        assert_eq!(changes[1].to.holder, None, "a released lock has no holder");
    }

    #[test]
    fn a_deleted_lease_is_a_change_to_missing() {
        let before = analyse(cluster().lease("k3s", "s1", 1).lease("k3s-etcd", "s1", 1));
        let after = analyse(cluster().lease("k3s-etcd", "s1", 1));
        let changes = lease_changes(&before, &after, now());
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].to.state, LockState::Missing);
        assert_eq!(changes[0].from.holder.as_deref(), Some("s1"));
    }

    #[test]
    fn a_split_that_starts_without_a_lock_changing_is_reported_on_the_core_lock() {
        let before = analyse(cluster().lease("k3s", "s1", 1).lease("k3s-etcd", "s2", 1));
        let mut after = before.clone();
        let mut unsplit = before.clone();
        unsplit
            .findings
            .retain(|f| f.code != FindingCode::LeaseSplit);
        assert!(is_split(&after) && !is_split(&unsplit));
        after.locks.reverse();
        let changes = lease_changes(&unsplit, &after, now());
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].lock, "k3s");
        assert_eq!(changes[0].from, changes[0].to);
        assert!(changes[0].split);
        assert!(!lease_changes(&after, &unsplit, now())[0].split);
    }
}
