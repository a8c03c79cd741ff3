//! Whether k3s's snapshot ConfigMap controller is writing right now. Only then is a CR seconds
//! old without its entry "pending" (k3s writes it shortly) and an entry whose CR was deleted
//! seconds ago "about to go" (k3s removes it right after the CR's deletion starts). When the
//! analysis already knows that nothing writes, those grace periods would be false comfort: the
//! entries are missing, or orphaned, now. Pure.

use jiff::{SignedDuration, Timestamp};

use crate::diagnose::finding::{FindingCode, Severity};
use crate::diagnose::leases::LeaseAnalysis;
use crate::diagnose::leases::lock_status::{LockPurpose, LockState};
use crate::model::snapshot_file::SnapshotFile;

/// Why the controller cannot be writing now, when the analysis shows it; `None` when it may be
/// (or when that cannot be told, as from a holder table without renew times).
///
/// - a split on an affected version: the `-etcd` holder registered the controller and never
///   started it (k3s-io/k3s#10046; `pkg/etcd/etcd.go` `Register` before the fix);
/// - no fresh `-etcd` holder (expired, released, missing, or MultiLock copies that disagree,
///   after which the holder exits): the controller runs only on the holder;
/// - CRs older than `grace` without the controller's finalizer: it has not processed them, so
///   it is idle whatever the leases say (wrangler adds the finalizer on first sync,
///   `pkg/generic/remove.go`).
pub(super) fn controller_not_writing(
    leases: &LeaseAnalysis,
    files: &[std::sync::Arc<SnapshotFile>],
    now: Timestamp,
    grace: SignedDuration,
) -> Option<String> {
    let split = leases
        .findings
        .iter()
        .any(|f| f.code == FindingCode::LeaseSplit && f.severity == Severity::Error);
    if split {
        return Some(
            "the locks are split on an affected version, so the snapshot controller never started \
             (k3s-io/k3s#10046)"
                .into(),
        );
    }
    if let Some(lock) = leases.locks.iter().find(|l| l.purpose == LockPurpose::Etcd) {
        let why = match lock.state {
            LockState::Expired => Some("is expired"),
            LockState::Released => Some("is released"),
            LockState::Missing => Some("is missing"),
            LockState::Disagreeing => Some("has copies naming different holders"),
            _ => None,
        };
        if let Some(why) = why {
            return Some(format!(
                "{} {why}: no server runs the snapshot controller",
                lock.name
            ));
        }
    }
    let idle = files.iter().any(|f| {
        !f.deleting
            && !f.has_controller_finalizer()
            && f.created.is_some_and(|c| now.duration_since(c) > grace)
    });
    idle.then(|| {
        "ETCDSnapshotFiles older than a minute lack the controller's finalizer: the snapshot \
         controller is idle"
            .into()
    })
}

/// Whether a CR being deleted began its deletion less than `grace` before `now`: k3s's
/// controller then removes its entry at once (its OnRemove handler deletes the key, then drops
/// the finalizer: `pkg/etcd/snapshot_controller.go`, wrangler `pkg/generic/remove.go`), so an
/// entry still there is not an orphan yet. The ConfigMap records nothing about when an entry's
/// CR went away, and the entry's own `createdAt` is the snapshot's time (old for a retention
/// delete), so the CR's `metadata.deletionTimestamp` is what tells: it is set when the delete
/// arrives and stays until the finalizer is gone. A CR without one, or deleted without the
/// finalizer (gone at once, never seen by the controller), gets no grace.
pub(super) fn removal_pending(file: &SnapshotFile, now: Timestamp, grace: SignedDuration) -> bool {
    file.deleting
        && file.has_controller_finalizer()
        && file
            .deletion_time
            .is_some_and(|t| now.duration_since(t) < grace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::leases::analyse_leases;
    use crate::diagnose::test_cluster::{TestCluster, now, snapshot_json};
    use crate::distro::Distro;
    use std::sync::Arc;

    const AFFECTED: &str = "v1.29.4+k3s1";
    const FIXED: &str = "v1.29.6+k3s1";
    const GRACE: SignedDuration = SignedDuration::from_secs(60);

    fn outlook(cluster: TestCluster) -> Option<String> {
        let state = cluster.build();
        let leases = analyse_leases(&state, Distro::K3s, now());
        let files: Vec<Arc<SnapshotFile>> = state.snapshot_files.clone().unwrap_or_default();
        controller_not_writing(&leases, &files, now(), GRACE)
    }

    fn servers(version: &str) -> TestCluster {
        TestCluster::k3s()
            .server("s1", version)
            .server("s2", version)
    }

    fn deleting(secs_ago: i64, finalizer: bool) -> SnapshotFile {
        let mut cr = snapshot_json("s1", now().as_second() - 7200, true);
        let at = Timestamp::from_second(now().as_second() - secs_ago).unwrap();
        cr["metadata"]["deletionTimestamp"] = serde_json::json!(at.to_string());
        if !finalizer {
            cr["metadata"]["finalizers"] = serde_json::json!([]);
        }
        SnapshotFile::from_json(&cr)
    }

    /// A retention delete leaves the entry for the moment k3s takes to
    /// remove it; an old snapshot's entry is not an orphan in that moment, but is once the
    /// deletion has hung for longer than the grace.
    #[test]
    fn an_entry_of_a_cr_deleted_seconds_ago_is_about_to_go() {
        assert!(removal_pending(&deleting(0, true), now(), GRACE));
        assert!(removal_pending(&deleting(59, true), now(), GRACE));
        assert!(!removal_pending(&deleting(60, true), now(), GRACE));
        assert!(!removal_pending(&deleting(600, true), now(), GRACE));
        // Without the finalizer the controller never sees the delete.
        assert!(!removal_pending(&deleting(1, false), now(), GRACE));
    }

    #[test]
    fn an_aligned_fresh_cluster_is_writing() {
        let c = servers(AFFECTED)
            .lease("k3s", "s1", 1)
            .lease("k3s-etcd", "s1", 1);
        assert_eq!(outlook(c), None);
    }

    #[test]
    fn a_split_on_an_affected_version_is_not_writing_and_on_a_fixed_one_is() {
        let split = |v| servers(v).lease("k3s", "s1", 1).lease("k3s-etcd", "s2", 1);
        let why = outlook(split(AFFECTED)).expect("affected split");
        assert!(why.contains("10046"), "{why}");
        assert_eq!(outlook(split(FIXED)), None);
    }

    #[test]
    fn an_expired_or_missing_etcd_lock_is_not_writing() {
        let expired = servers(AFFECTED)
            .lease("k3s", "s1", 1)
            .lease("k3s-etcd", "s1", 600);
        assert!(outlook(expired).unwrap().contains("k3s-etcd is expired"));
        let missing = servers(AFFECTED).lease("k3s", "s1", 1);
        assert!(outlook(missing).unwrap().contains("k3s-etcd is missing"));
    }

    #[test]
    fn an_old_cr_without_the_finalizer_means_idle_and_a_young_one_does_not() {
        let ts = now().as_second();
        let without_finalizer = |age: i64| {
            let mut cr = snapshot_json("s1", ts - age, true);
            cr["metadata"]["finalizers"] = serde_json::json!([]);
            servers(FIXED)
                .lease("k3s", "s1", 1)
                .lease("k3s-etcd", "s1", 1)
                .snapshot_json(cr)
        };
        assert!(outlook(without_finalizer(120)).unwrap().contains("idle"));
        assert_eq!(outlook(without_finalizer(10)), None);
    }
}
