//! The metrics set from reports of the bundled dump and from watch health.
use std::path::PathBuf;

use super::*;
use crate::diagnose::check::analyse_check;
use crate::input::dump::read_dump;
use crate::report::{Now, NowSource};

/// The bundled dump: k3s and k3s-etcd split on v1.29.4, 15 snapshot entries missing.
fn split_report() -> CheckReport {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/split-cluster");
    let state = read_dump(&[dir], Default::default()).expect("the bundled dump reads");
    let now = state.newest_timestamp.expect("timestamps in the dump");
    let distro = state.detect_distro().expect("a k3s dump");
    let now = Now {
        time: now,
        source: NowSource::NewestInDump,
    };
    CheckReport::new(now, analyse_check(&state, distro, now.time))
}

fn value(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|line| {
        let (name, value) = line.rsplit_once(' ')?;
        (name == series).then(|| value.parse().ok())?
    })
}

#[test]
fn a_split_report_sets_the_split_its_findings_holders_and_snapshot_gaps() {
    let metrics = Metrics::new("1.2.3");
    let report = split_report();
    metrics.record_evaluation(&report, true, Duration::from_millis(3), report.now.time);
    let text = metrics.encode(report.now.time);
    for (series, expected) in [
        ("k3sdoctor_up", 1.0),
        (r#"k3sdoctor_lease_split{lock="k3s",affected="true"}"#, 1.0),
        (
            r#"k3sdoctor_findings{code="lease-split",severity="error"}"#,
            1.0,
        ),
        (r#"k3sdoctor_snapshot_entries{state="missing"}"#, 15.0),
        (r#"k3sdoctor_snapshot_entries{state="orphaned"}"#, 6.0),
        (r#"k3sdoctor_etcd_members{state="ready"}"#, 3.0),
        (r#"k3sdoctor_build_info{version="1.2.3"}"#, 1.0),
        ("k3sdoctor_evaluation_duration_seconds_count", 1.0),
    ] {
        assert_eq!(value(&text, series), Some(expected), "{series}\n{text}");
    }
    let holders = text
        .lines()
        .filter(|l| l.starts_with("k3sdoctor_lease_holder_info{"))
        .count();
    assert_eq!(holders, 2, "{text}");
}

/// The `pending` state (an entry k3s writes within a minute); the metric
/// carries it, so a dashboard can tell a fresh snapshot from a missing one.
#[test]
fn pending_entries_have_their_own_state() {
    let metrics = Metrics::new("1.2.3");
    let mut report = split_report();
    report.analysis.snapshots.as_mut().unwrap().pending = 4;
    metrics.record_evaluation(&report, true, Duration::ZERO, report.now.time);
    let text = metrics.encode(report.now.time);
    assert_eq!(
        value(&text, r#"k3sdoctor_snapshot_entries{state="pending"}"#),
        Some(4.0),
        "{text}"
    );
    assert_eq!(
        value(&text, r#"k3sdoctor_snapshot_entries{state="missing"}"#),
        Some(15.0)
    );
    report.analysis.snapshots.as_mut().unwrap().pending = 0;
    metrics.record_evaluation(&report, true, Duration::ZERO, report.now.time);
    let text = metrics.encode(report.now.time);
    assert_eq!(
        value(&text, r#"k3sdoctor_snapshot_entries{state="pending"}"#),
        Some(0.0)
    );
}

#[test]
fn series_of_what_is_gone_are_removed_not_left_at_their_last_value() {
    let metrics = Metrics::new("1.2.3");
    let split = split_report();
    metrics.record_evaluation(&split, true, Duration::ZERO, split.now.time);
    let mut healed = split.clone();
    healed.analysis.findings.clear();
    healed.analysis.locks.clear();
    healed.analysis.snapshots = None;
    metrics.record_evaluation(&healed, true, Duration::ZERO, split.now.time);
    let text = metrics.encode(split.now.time);
    assert!(!text.contains("k3sdoctor_findings{"), "{text}");
    assert!(!text.contains("k3sdoctor_lease_holder_info{"), "{text}");
    assert!(!text.contains("k3sdoctor_snapshot_entries{"), "{text}");
    assert!(
        !text.contains("k3sdoctor_lease_renew_age_seconds{"),
        "{text}"
    );
    assert_eq!(
        value(
            &text,
            r#"k3sdoctor_lease_split{lock="k3s",affected="true"}"#
        ),
        Some(0.0)
    );
}

#[test]
fn renewal_ages_are_worked_out_at_the_scrape_and_follow_renewals() {
    let metrics = Metrics::new("1.2.3");
    let report = split_report();
    metrics.record_evaluation(&report, true, Duration::ZERO, report.now.time);
    let lock = &report.analysis.locks[0];
    let renewed = lock.renew_time.expect("a renewed lock");
    let series = format!(
        r#"k3sdoctor_lease_renew_age_seconds{{lock="{}"}}"#,
        lock.name
    );
    let later = renewed + jiff::SignedDuration::from_secs(40);
    assert_eq!(value(&metrics.encode(later), &series), Some(40.0));
    metrics.refresh_renewals(|name| (name == lock.name).then_some(later));
    assert_eq!(value(&metrics.encode(later), &series), Some(0.0));
    // An older renewal (a relist replaying history) never moves the age back.
    metrics.refresh_renewals(|_| Some(renewed));
    assert_eq!(value(&metrics.encode(later), &series), Some(0.0));
}

#[test]
fn watch_health_sets_readiness_and_errors_count_per_resource_and_reason() {
    use crate::input::watch::watch_failure::WatchFailureReason;
    let metrics = Metrics::new("1.2.3");
    let health = [
        WatchHealth {
            resource: "leases".into(),
            synced: true,
            failing: None,
            absent: false,
        },
        WatchHealth {
            resource: "nodes".into(),
            synced: false,
            failing: Some(WatchFailureReason::Forbidden),
            absent: false,
        },
    ];
    metrics.record_watches(health.iter());
    let failure = WatchFailure {
        resource: "nodes".into(),
        reason: WatchFailureReason::Forbidden,
        line: String::new(),
    };
    metrics.count_watch_error(&failure);
    metrics.count_watch_error(&failure);
    let text = metrics.encode(jiff::Timestamp::UNIX_EPOCH);
    assert_eq!(value(&text, "k3sdoctor_ready"), Some(0.0));
    assert_eq!(
        value(&text, r#"k3sdoctor_watch_synced{resource="leases"}"#),
        Some(1.0)
    );
    assert_eq!(
        value(
            &text,
            r#"k3sdoctor_watch_errors_total{resource="nodes",reason="forbidden"}"#
        ),
        Some(2.0)
    );
    metrics.record_watches(health[..1].iter());
    assert_eq!(
        value(
            &metrics.encode(jiff::Timestamp::UNIX_EPOCH),
            "k3sdoctor_ready"
        ),
        Some(1.0)
    );
}

/// `--ignore`: an ignored finding moves to `k3sdoctor_findings_ignored`, so no alert keyed on
/// `k3sdoctor_findings` or `k3sdoctor_lease_split` fires on it; the rest stay where they were.
#[test]
fn ignored_findings_leave_the_alerting_series() {
    use crate::diagnose::suppression::{Suppression, Suppressions};
    let metrics = Metrics::new("1.2.3");
    let mut report = split_report();
    report.analysis =
        Suppressions(vec![Suppression::parse("lease-split").unwrap()]).apply(report.analysis);
    metrics.record_evaluation(&report, true, Duration::from_millis(3), report.now.time);
    let text = metrics.encode(report.now.time);
    for (series, expected) in [
        (
            r#"k3sdoctor_lease_split{lock="k3s",affected="true"}"#,
            Some(0.0),
        ),
        (
            r#"k3sdoctor_findings{code="lease-split",severity="error"}"#,
            None,
        ),
        (
            r#"k3sdoctor_findings_ignored{code="lease-split",severity="error"}"#,
            Some(1.0),
        ),
        (r#"k3sdoctor_snapshot_entries{state="missing"}"#, Some(15.0)),
    ] {
        assert_eq!(value(&text, series), expected, "{series}\n{text}");
    }
}
