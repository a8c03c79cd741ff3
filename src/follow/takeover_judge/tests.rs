use super::*;
use k8s_openapi::api::coordination::v1::LeaseSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::ObjectMeta;

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_717_142_400 + secs).unwrap()
}

fn record(holder: &str, renewed: i64) -> Option<LockRecord> {
    Some(LockRecord {
        holder_identity: holder.to_string(),
        lease_duration_seconds: Some(45),
        acquire_time: None,
        renew_time: Some(at(renewed)),
        transitions: None,
    })
}

fn judge(copies: usize) -> TakeoverJudge {
    TakeoverJudge::new("k3s", "s1", "s2", vec![Some(at(0)); copies])
}

#[test]
fn the_record_as_written_is_waiting_and_names_the_target_once() {
    let mut j = judge(1);
    let written = j.as_written();
    assert_eq!(j.observe(&written), Judgement::Waiting);
    assert_eq!(j.observe(&written), Judgement::Waiting);
    assert_eq!(j.holders(), ["s1", "s2"]);
}

#[test]
fn a_renewal_by_the_target_past_what_we_wrote_is_verified() {
    let mut j = judge(1);
    let written = j.as_written();
    j.observe(&written);
    assert_eq!(j.observe(&[record("s2", 0)]), Judgement::Waiting);
    assert_eq!(j.observe(&[record("s2", 2)]), Judgement::Verified);
    let v = j.verified(Duration::from_millis(2300));
    assert!(v.verified);
    assert_eq!(v.seconds, Some(2.3));
    assert_eq!(v.message, "s2 renewed k3s itself 2.3s after the write");
    assert_eq!(v.observed_holders, ["s1", "s2"]);
}

#[test]
fn a_written_record_without_renew_time_is_verified_by_any_renewal() {
    let mut j = TakeoverJudge::new("k3s", "", "s2", vec![None]);
    assert_eq!(j.observe(&j.as_written()), Judgement::Waiting);
    assert_eq!(j.observe(&[record("s2", -100)]), Judgement::Verified);
    assert_eq!(j.holders(), ["(released)", "s2"]);
}

#[test]
fn a_multilock_is_verified_only_when_both_copies_name_the_target() {
    let mut j = judge(2);
    let written = j.as_written();
    j.observe(&written);
    // The Lease renewed, the ConfigMap copy gone: not verified, not taken either.
    assert_eq!(j.observe(&[None, record("s2", 2)]), Judgement::Waiting);
    assert_eq!(
        j.observe(&[record("s2", 0), record("s2", 2)]),
        Judgement::Verified
    );
}

#[test]
fn another_holder_ends_the_wait_with_the_sequence_seen() {
    let mut j = TakeoverJudge::new("k3s", "s1", "w1", vec![Some(at(0))]);
    j.observe(&j.as_written());
    assert_eq!(
        j.observe(&[record("s3", 5)]),
        Judgement::TakenBy("s3".into())
    );
    let v = j
        .decide(&Judgement::TakenBy("s3".into()), Duration::ZERO)
        .unwrap();
    assert!(!v.verified);
    assert_eq!(v.observed_holders, ["s1", "w1", "s3"]);
    assert_eq!(
        v.message,
        "s3 took k3s instead of w1; holders seen: s1 -> w1 -> s3"
    );
    // A release reads as "(released)".
    let mut j = judge(1);
    assert_eq!(
        j.observe(&[record("", 5)]),
        Judgement::TakenBy("(released)".into())
    );
}

#[test]
fn the_timeout_says_whether_the_last_read_failed() {
    let mut j = judge(1);
    j.observe(&j.as_written());
    assert_eq!(
        j.timed_out(Duration::from_secs(30), None).message,
        "takeover of k3s not verified within 30s: s2 did not renew it; holders seen: s1 -> s2"
    );
    assert_eq!(
        j.timed_out(
            Duration::from_secs(2),
            Some("cannot get lease kube-system/k3s: gone")
        )
        .message,
        "takeover of k3s not verified within 2s: could not read the lock at the end: cannot get \
         lease kube-system/k3s: gone; holders seen: s1 -> s2"
    );
    assert_eq!(j.decide(&Judgement::Waiting, Duration::ZERO), None);
    assert_eq!(
        j.waiting_phase(Duration::from_millis(3400)),
        "waiting for s2 to renew k3s (3s)"
    );
}

fn lease(holder: &str, rv: &str, renewed: i64) -> Lease {
    Lease {
        metadata: ObjectMeta {
            name: Some("k3s".into()),
            resource_version: Some(rv.into()),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(holder.into()),
            renew_time: Some(MicroTime(at(renewed))),
            ..LeaseSpec::default()
        }),
    }
}

#[test]
fn watch_events_become_records_and_resource_versions() {
    assert_eq!(
        lease_step(WatchEvent::Modified(lease("s2", "12", 3))),
        WatchStep::Seen {
            record: Some(LockRecord {
                holder_identity: "s2".into(),
                lease_duration_seconds: None,
                acquire_time: None,
                renew_time: Some(at(3)),
                transitions: None,
            }),
            resource_version: Some("12".into()),
        }
    );
    assert_eq!(
        lease_step(WatchEvent::Deleted(lease("s2", "13", 3))),
        WatchStep::Seen {
            record: None,
            resource_version: Some("13".into()),
        }
    );
    let bookmark: WatchEvent<Lease> = serde_json::from_value(serde_json::json!({
        "type": "BOOKMARK",
        "object": {"kind": "Lease", "apiVersion": "coordination.k8s.io/v1",
                   "metadata": {"resourceVersion": "20"}}
    }))
    .unwrap();
    assert_eq!(lease_step(bookmark), WatchStep::Progress("20".into()));
    let gone: WatchEvent<ConfigMap> = serde_json::from_value(serde_json::json!({
        "type": "ERROR",
        "object": {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                   "message": "too old resource version: 5 (9)", "reason": "Expired",
                   "code": 410}
    }))
    .unwrap();
    assert_eq!(
        configmap_step(gone),
        WatchStep::Ended(
            "the API server ended the watch: too old resource version: 5 (9) (410)".into()
        )
    );
}

#[test]
fn a_configmap_without_a_leader_annotation_has_no_record() {
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some("k3s".into()),
            resource_version: Some("7".into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    assert_eq!(
        configmap_step(WatchEvent::Added(cm)),
        WatchStep::Seen {
            record: None,
            resource_version: Some("7".into()),
        }
    );
}

#[test]
fn the_polling_note_names_the_object_once() {
    assert_eq!(
        polling_note(
            "watch lease kube-system/k3s",
            "cannot watch lease kube-system/k3s: forbidden (403): no"
        ),
        "note: cannot watch lease kube-system/k3s (forbidden (403): no); polling instead"
    );
    assert_eq!(
        polling_note(
            "watch lease kube-system/k3s",
            "cannot watch lease kube-system/k3s at https://x: reset"
        ),
        "note: cannot watch lease kube-system/k3s (at https://x: reset); polling instead"
    );
    assert_eq!(
        polling_note(
            "watch configmap kube-system/k3s",
            "the API server ended the watch: too old (410)"
        ),
        "note: cannot watch configmap kube-system/k3s (the API server ended the watch: too old \
         (410)); polling instead"
    );
}
