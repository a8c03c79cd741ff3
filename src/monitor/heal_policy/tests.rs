use super::*;
use crate::repair::heal_gates::{Blocked, Gate, SplitCandidate};

fn t(secs: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + secs).unwrap()
}

fn settings(mode: HealMode) -> HealSettings {
    HealSettings {
        mode,
        heal_after: SignedDuration::from_secs(300),
        cooldown: SignedDuration::from_mins(30),
    }
}

fn split(to: &str) -> SplitCandidate {
    SplitCandidate {
        lock: "k3s".into(),
        from: "s1".into(),
        to: to.into(),
        plan: None,
        blocked: Vec::new(),
    }
}

fn gated(gate: Gate) -> SplitCandidate {
    SplitCandidate {
        blocked: vec![Blocked {
            gate,
            why: "x".into(),
        }],
        ..split("s2")
    }
}

fn labels(d: &Decision) -> Vec<&'static str> {
    match d {
        Decision::Blocked(b) => b.iter().map(|b| b.gate.label()).collect(),
        other => panic!("expected blocked, got {other:?}"),
    }
}

/// Evaluations every 5 s from `from` until the policy decides something other than waiting.
fn run_until_decided(p: &mut HealPolicy, from: i64, c: &SplitCandidate) -> (i64, Decision) {
    let mut at = from;
    loop {
        match p.evaluate(t(at), Some(c), true) {
            Decision::Waiting { .. } if at < from + 100_000 => at += 5,
            d => return (at, d),
        }
    }
}

#[test]
fn no_split_is_nothing_to_do() {
    let mut p = HealPolicy::new(settings(HealMode::On));
    assert_eq!(p.evaluate(t(0), None, true), Decision::NoSplit);
}

#[test]
fn a_split_is_moved_only_after_heal_after_on_the_server_clock() {
    let mut p = HealPolicy::new(settings(HealMode::On));
    let c = split("s2");
    assert!(matches!(
        p.evaluate(t(0), Some(&c), true),
        Decision::Waiting { evaluations: 1, .. }
    ));
    assert!(matches!(
        p.evaluate(t(299), Some(&c), true),
        Decision::Waiting { .. }
    ));
    assert_eq!(p.evaluate(t(300), Some(&c), true), Decision::Move);
}

#[test]
fn three_evaluations_are_needed_however_long_the_split_lasted() {
    let mut p = HealPolicy::new(settings(HealMode::On));
    let c = split("s2");
    p.evaluate(t(0), Some(&c), true);
    assert!(matches!(
        p.evaluate(t(1000), Some(&c), true),
        Decision::Waiting { evaluations: 2, .. }
    ));
    assert_eq!(p.evaluate(t(1001), Some(&c), true), Decision::Move);
}

#[test]
fn a_clock_stepped_back_does_not_age_the_split() {
    let mut p = HealPolicy::new(settings(HealMode::On));
    let c = split("s2");
    p.evaluate(t(0), Some(&c), true);
    p.evaluate(t(-600), Some(&c), true);
    assert!(matches!(
        p.evaluate(t(-500), Some(&c), true),
        Decision::Waiting { .. }
    ));
}

#[test]
fn a_split_that_ends_starts_over() {
    let mut p = HealPolicy::new(settings(HealMode::On));
    let c = split("s2");
    p.evaluate(t(0), Some(&c), true);
    p.evaluate(t(200), Some(&c), true);
    p.evaluate(t(250), None, true);
    assert!(matches!(
        p.evaluate(t(310), Some(&c), true),
        Decision::Waiting { evaluations: 1, .. }
    ));
}

#[test]
fn another_target_is_another_episode() {
    let mut p = HealPolicy::new(settings(HealMode::On));
    p.evaluate(t(0), Some(&split("s2")), true);
    p.evaluate(t(200), Some(&split("s2")), true);
    assert!(matches!(
        p.evaluate(t(310), Some(&split("s3")), true),
        Decision::Waiting { evaluations: 1, .. }
    ));
}

#[test]
fn every_gate_of_the_state_blocks_and_is_named() {
    for gate in [
        Gate::LockNotFresh,
        Gate::TargetNotReady,
        Gate::QuorumAtRisk,
        Gate::Paused,
        Gate::FixedVersion,
    ] {
        let mut p = HealPolicy::new(settings(HealMode::On));
        let c = gated(gate.clone());
        let (_, d) = run_until_decided(&mut p, 0, &c);
        assert_eq!(labels(&d), [gate.label()]);
    }
}

#[test]
fn a_replica_without_the_lease_never_moves() {
    let mut p = HealPolicy::new(settings(HealMode::On));
    let c = split("s2");
    for at in [0, 300, 600] {
        let d = p.evaluate(t(at), Some(&c), false);
        assert_eq!(labels(&d), ["not-leader"]);
    }
}

#[test]
fn dry_run_would_move_and_records_once_per_episode() {
    let mut p = HealPolicy::new(settings(HealMode::DryRun));
    let c = split("s2");
    let (at, d) = run_until_decided(&mut p, 0, &c);
    assert_eq!(d, Decision::WouldMove { record: true });
    assert_eq!(
        p.evaluate(t(at + 5), Some(&c), true),
        Decision::WouldMove { record: false }
    );
    // A new episode records again.
    p.evaluate(t(at + 10), None, true);
    let (_, d) = run_until_decided(&mut p, at + 15, &c);
    assert_eq!(d, Decision::WouldMove { record: true });
}

#[test]
fn a_recurrence_inside_the_cooldown_is_blocked_and_doubles_it_up_to_a_day() {
    let mut p = HealPolicy::new(settings(HealMode::On));
    let c = split("s2");
    let (at, d) = run_until_decided(&mut p, 0, &c);
    assert_eq!(d, Decision::Move);
    let pair = MovePair::of(&c);
    p.heal_done(t(at), &pair, true);
    p.evaluate(t(at + 60), None, true);
    // Back 10 minutes later: reported, not healed; the cooldown is now an hour.
    let d = p.evaluate(t(at + 600), Some(&c), true);
    assert_eq!(labels(&d), ["cooldown"]);
    assert_eq!(p.cooldown, SignedDuration::from_hours(1));
    // Still blocked after the first 30 minutes, free after the hour.
    assert_eq!(
        labels(&p.evaluate(t(at + 1900), Some(&c), true)),
        ["cooldown"]
    );
    assert_eq!(p.evaluate(t(at + 3600), Some(&c), true), Decision::Move);
    // Doubling stops at a day.
    for _ in 0..10 {
        p.heal_done(t(at + 3600), &pair, true);
        p.evaluate(t(at + 3601), None, true);
        p.evaluate(t(at + 3602), Some(&c), true);
    }
    assert_eq!(p.cooldown, DAY);
}

#[test]
fn a_day_without_a_split_resets_the_cooldown() {
    let mut p = HealPolicy::new(settings(HealMode::On));
    let c = split("s2");
    let pair = MovePair::of(&c);
    p.heal_done(t(0), &pair, true);
    p.evaluate(t(10), Some(&c), true);
    assert_eq!(p.cooldown, SignedDuration::from_hours(1));
    p.evaluate(t(20), None, true);
    p.evaluate(t(20 + 86_400), None, true);
    assert_eq!(p.cooldown, SignedDuration::from_mins(30));
}

#[test]
fn a_failed_move_is_not_retried_until_the_state_changes() {
    let mut p = HealPolicy::new(settings(HealMode::On));
    let c = split("s2");
    let (at, _) = run_until_decided(&mut p, 0, &c);
    p.heal_done(t(at), &MovePair::of(&c), false);
    // Long after the cooldown, the same move is still not tried.
    let d = p.evaluate(t(at + 86_000), Some(&c), true);
    assert_eq!(labels(&d), ["failed-before"]);
    // The split ended (a person ran follow --fix) and came back: tried again.
    p.evaluate(t(at + 86_005), None, true);
    let (_, d) = run_until_decided(&mut p, at + 86_010, &c);
    assert_eq!(d, Decision::Move);
}

#[test]
fn durations_read_as_flags() {
    assert_eq!(friendly(SignedDuration::from_mins(30)), "30m");
    assert_eq!(friendly(SignedDuration::from_hours(24)), "24h");
    assert_eq!(friendly(SignedDuration::from_secs(5)), "5s");
}
