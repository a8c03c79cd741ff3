use super::*;
use crate::heal::heal_gates::{Blocked, Gate, SplitCandidate};

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

fn not_leader() -> Blocked {
    Blocked {
        gate: Gate::NotLeader,
        why: "another replica holds the heal Lease".into(),
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
        match p.evaluate(t(at), Some(c), None) {
            Decision::Waiting { .. } if at < from + 100_000 => at += 5,
            d => return (at, d),
        }
    }
}

#[test]
fn no_split_is_nothing_to_do() {
    let mut p = HealPolicy::new(settings(HealMode::On));
    assert_eq!(p.evaluate(t(0), None, None), Decision::NoSplit);
}

#[test]
fn a_split_is_moved_only_after_heal_after_on_the_server_clock() {
    let mut p = HealPolicy::new(settings(HealMode::On));
    let c = split("s2");
    assert!(matches!(
        p.evaluate(t(0), Some(&c), None),
        Decision::Waiting { evaluations: 1, .. }
    ));
    assert!(matches!(
        p.evaluate(t(299), Some(&c), None),
        Decision::Waiting { .. }
    ));
    assert_eq!(p.evaluate(t(300), Some(&c), None), Decision::Move);
}

#[test]
fn three_evaluations_are_needed_however_long_the_split_lasted() {
    let mut p = HealPolicy::new(settings(HealMode::On));
    let c = split("s2");
    p.evaluate(t(0), Some(&c), None);
    assert!(matches!(
        p.evaluate(t(1000), Some(&c), None),
        Decision::Waiting { evaluations: 2, .. }
    ));
    assert_eq!(p.evaluate(t(1001), Some(&c), None), Decision::Move);
}

#[test]
fn a_clock_stepped_back_does_not_age_the_split() {
    let mut p = HealPolicy::new(settings(HealMode::On));
    let c = split("s2");
    p.evaluate(t(0), Some(&c), None);
    p.evaluate(t(-600), Some(&c), None);
    assert!(matches!(
        p.evaluate(t(-500), Some(&c), None),
        Decision::Waiting { .. }
    ));
}

#[test]
fn a_split_that_ends_starts_over() {
    let mut p = HealPolicy::new(settings(HealMode::On));
    let c = split("s2");
    p.evaluate(t(0), Some(&c), None);
    p.evaluate(t(200), Some(&c), None);
    p.evaluate(t(250), None, None);
    assert!(matches!(
        p.evaluate(t(310), Some(&c), None),
        Decision::Waiting { evaluations: 1, .. }
    ));
}

#[test]
fn another_target_is_another_episode() {
    let mut p = HealPolicy::new(settings(HealMode::On));
    p.evaluate(t(0), Some(&split("s2")), None);
    p.evaluate(t(200), Some(&split("s2")), None);
    assert!(matches!(
        p.evaluate(t(310), Some(&split("s3")), None),
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
        let d = p.evaluate(t(at), Some(&c), Some(not_leader()));
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
        p.evaluate(t(at + 5), Some(&c), None),
        Decision::WouldMove { record: false }
    );
    // A new episode records again.
    p.evaluate(t(at + 10), None, None);
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
    p.evaluate(t(at + 60), None, None);
    // Back 10 minutes later: reported, not healed; the cooldown is now an hour.
    let d = p.evaluate(t(at + 600), Some(&c), None);
    assert_eq!(labels(&d), ["cooldown"]);
    assert_eq!(p.cooldown, SignedDuration::from_hours(1));
    // Still blocked after the first 30 minutes, free after the hour.
    assert_eq!(
        labels(&p.evaluate(t(at + 1900), Some(&c), None)),
        ["cooldown"]
    );
    assert_eq!(p.evaluate(t(at + 3600), Some(&c), None), Decision::Move);
    // Doubling stops at a day.
    for _ in 0..10 {
        p.heal_done(t(at + 3600), &pair, true);
        p.evaluate(t(at + 3601), None, None);
        p.evaluate(t(at + 3602), Some(&c), None);
    }
    assert_eq!(p.cooldown, DAY);
}

#[test]
fn a_day_without_a_split_resets_the_cooldown() {
    let mut p = HealPolicy::new(settings(HealMode::On));
    let c = split("s2");
    let pair = MovePair::of(&c);
    p.heal_done(t(0), &pair, true);
    p.evaluate(t(10), Some(&c), None);
    assert_eq!(p.cooldown, SignedDuration::from_hours(1));
    p.evaluate(t(20), None, None);
    p.evaluate(t(20 + 86_400), None, None);
    assert_eq!(p.cooldown, SignedDuration::from_mins(30));
}

#[test]
fn a_failed_move_is_not_retried_until_the_state_changes() {
    let mut p = HealPolicy::new(settings(HealMode::On));
    let c = split("s2");
    let (at, _) = run_until_decided(&mut p, 0, &c);
    p.heal_done(t(at), &MovePair::of(&c), false);
    // Long after the cooldown, the same move is still not tried.
    let d = p.evaluate(t(at + 86_000), Some(&c), None);
    assert_eq!(labels(&d), ["failed-before"]);
    // The split ended (a person ran follow --fix) and came back: tried again.
    p.evaluate(t(at + 86_005), None, None);
    let (_, d) = run_until_decided(&mut p, at + 86_010, &c);
    assert_eq!(d, Decision::Move);
}

#[test]
fn durations_read_as_flags() {
    assert_eq!(friendly(SignedDuration::from_mins(30)), "30m");
    assert_eq!(friendly(SignedDuration::from_hours(24)), "24h");
    assert_eq!(friendly(SignedDuration::from_secs(5)), "5s");
}

#[test]
fn a_restarted_policy_keeps_the_cooldown_and_the_failed_moves_it_reads_back() {
    let c = split("s2");
    let pair = MovePair::of(&c);
    let mut before = HealPolicy::new(settings(HealMode::On));
    let (at, d) = run_until_decided(&mut before, 0, &c);
    assert_eq!(d, Decision::Move);
    before.heal_done(t(at), &pair, true);
    before.evaluate(t(at + 60), None, None);
    // Back within the cooldown: it doubles.
    before.evaluate(t(at + 120), Some(&c), None);
    let recorded = before.guardrails();
    assert_eq!(recorded.cooldown, Some(SignedDuration::from_hours(1)));

    // A new replica that read the guardrails back heals no sooner than the first would have.
    // It saw the split before it took the Lease (serve evaluates from its start), so taking
    // over is not one more recurrence.
    let mut after = HealPolicy::new(settings(HealMode::On));
    after.evaluate(t(at + 125), Some(&c), Some(not_leader()));
    after.restore(recorded, t(at + 130));
    let (healed_at, d) = run_until_decided(&mut after, at + 130, &c);
    assert_eq!(labels(&d), ["cooldown"], "{healed_at}");
    assert_eq!(after.cooldown, SignedDuration::from_hours(1));
    let mut at_free = at + 130;
    while let Decision::Blocked(_) = after.evaluate(t(at_free), Some(&c), None) {
        at_free += 5;
    }
    assert!(
        at_free >= at + 3600,
        "healed {} s after the last heal",
        at_free - at
    );

    // A failed move read back is not tried again, long after the cooldown.
    let mut failed = HealPolicy::new(settings(HealMode::On));
    failed.heal_done(t(0), &pair, false);
    let mut restarted = HealPolicy::new(settings(HealMode::On));
    restarted.restore(failed.guardrails(), t(10));
    let (_, d) = run_until_decided(&mut restarted, 86_000, &c);
    assert_eq!(labels(&d), ["failed-before"]);
}

#[test]
fn a_heal_counts_for_the_cooldown_from_its_start_unless_nothing_was_needed() {
    let mut p = HealPolicy::new(settings(HealMode::On));
    let previous = p.heal_started(t(0));
    assert_eq!(p.guardrails().last_heal, Some(t(0)));
    p.heal_not_needed(previous);
    assert_eq!(p.guardrails().last_heal, None);
}

#[test]
fn a_recorded_cooldown_stays_within_the_flag_and_a_day() {
    let mut p = HealPolicy::new(settings(HealMode::On));
    p.restore(
        Guardrails {
            cooldown: Some(SignedDuration::from_mins(1)),
            ..Guardrails::default()
        },
        t(0),
    );
    assert_eq!(p.cooldown, SignedDuration::from_mins(30));
    p.restore(
        Guardrails {
            cooldown: Some(SignedDuration::from_hours(100)),
            ..Guardrails::default()
        },
        t(0),
    );
    assert_eq!(p.cooldown, DAY);
    // The doubled period resets a day after it was read back without a split.
    p.evaluate(t(86_400), None, None);
    assert_eq!(p.cooldown, SignedDuration::from_mins(30));
}

/// What a killed replica left: a heal a minute before `at`, under the flag's cooldown.
fn recorded_heal(at: i64) -> Guardrails {
    Guardrails {
        last_heal: Some(t(at - 60)),
        cooldown: Some(SignedDuration::from_mins(30)),
        ..Guardrails::default()
    }
}

#[test]
fn a_restored_heal_does_not_double_the_cooldown_whichever_comes_first() {
    // Read back, then the split first seen.
    let mut read_first = HealPolicy::new(settings(HealMode::On));
    read_first.restore(recorded_heal(100), t(100));
    let d = read_first.evaluate(t(105), Some(&split("s2")), None);
    assert_eq!(labels(&d), ["cooldown"]);
    assert_eq!(read_first.cooldown, SignedDuration::from_mins(30));
    // The split first seen (not yet the leader), then read back.
    let mut seen_first = HealPolicy::new(settings(HealMode::On));
    seen_first.evaluate(t(100), Some(&split("s2")), Some(not_leader()));
    seen_first.restore(recorded_heal(100), t(105));
    let d = seen_first.evaluate(t(110), Some(&split("s2")), None);
    assert_eq!(labels(&d), ["cooldown"]);
    assert_eq!(seen_first.cooldown, SignedDuration::from_mins(30));
    // A split that comes back after the one in view is a recurrence again, in both.
    for p in [&mut read_first, &mut seen_first] {
        p.evaluate(t(200), None, None);
        p.evaluate(t(205), Some(&split("s2")), None);
        assert_eq!(p.cooldown, SignedDuration::from_hours(1));
    }
}

#[test]
fn a_person_removing_the_guardrails_makes_the_holder_forget_them() {
    let c = split("s2");
    let mut p = HealPolicy::new(settings(HealMode::On));
    p.heal_done(t(0), &MovePair::of(&c), false);
    p.evaluate(t(10), Some(&c), None);
    assert_eq!(
        labels(&p.evaluate(t(20), Some(&c), None)),
        ["cooldown", "failed-before"]
    );

    // `kubectl annotate lease k3sdoctor-heal k3sdoctor.io/heal-last- k3sdoctor.io/heal-failed-`
    // leaves only the cooldown on the Lease.
    p.adopt_edit(Guardrails {
        cooldown: Some(SignedDuration::from_hours(2)),
        ..Guardrails::default()
    });
    assert_eq!(p.guardrails().last_heal, None);
    assert!(p.guardrails().failed.is_empty());
    assert_eq!(p.cooldown, SignedDuration::from_hours(2));
    let (_, d) = run_until_decided(&mut p, 30, &c);
    assert_eq!(d, Decision::Move);

    // A cooldown edited below the flag's counts as the flag's; none at all, as the flag's.
    p.adopt_edit(Guardrails {
        cooldown: Some(SignedDuration::from_mins(1)),
        ..Guardrails::default()
    });
    assert_eq!(p.cooldown, SignedDuration::from_mins(30));
    p.adopt_edit(Guardrails::default());
    assert_eq!(p.cooldown, SignedDuration::from_mins(30));
}
