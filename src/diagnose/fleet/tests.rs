//! Unit tests of the fleet verdicts: ranking, the exit rule, rows and counts.

use super::*;
use crate::diagnose::check::{CheckAnalysis, analyse_check};
use crate::diagnose::test_cluster::{TestCluster, now};
use crate::distro::Distro;
use crate::model::read_failure_kind::ReadFailure;

const AFFECTED: &str = "v1.29.4+k3s1";
const FIXED: &str = "v1.29.6+k3s1";

/// A server as the etcd member controller leaves it, so that only the locks matter.
fn synced(name: &str) -> serde_json::Value {
    serde_json::json!({"finalizers": ["wrangler.cattle.io/managed-etcd-controller"],
           "annotations": {"etcd.k3s.cattle.io/node-name": format!("{name}-1a2b3c4d")}})
}

fn checked(context: &str, version: &str, core: &str, etcd: &str) -> FleetEntry<CheckAnalysis> {
    let state = TestCluster::k3s()
        .server_with("s1", version, synced("s1"))
        .server_with("s2", version, synced("s2"))
        .lease("k3s", core, 1)
        .lease("k3s-etcd", etcd, 1)
        .snapshot_configmap(&[])
        .build();
    FleetEntry::checked(
        context.into(),
        format!("https://{context}:6443"),
        analyse_check(&state, Distro::K3s, now()),
    )
}

fn unreadable(context: &str, kind: ReadFailureKind) -> FleetEntry<CheckAnalysis> {
    let error = ReadFailure {
        message: format!("cannot list nodes at {context}"),
        kind,
        action: Some("list leases in kube-system".into()),
    };
    FleetEntry::unreadable(context.into(), String::new(), &error)
}

#[test]
fn worst_first_unreadable_then_errors_then_warnings_then_healthy() {
    let mut entries = vec![
        checked("b-healthy", FIXED, "s1", "s1"),
        checked("a-split", AFFECTED, "s1", "s2"),
        unreadable("z-down", ReadFailureKind::Unreachable),
        checked("c-affected", AFFECTED, "s1", "s1"),
    ];
    sort_worst_first(&mut entries, false);
    let order: Vec<&str> = entries.iter().map(|e| e.context.as_str()).collect();
    assert_eq!(order, ["z-down", "a-split", "c-affected", "b-healthy"]);
    // Ignored, an unreadable cluster ranks as a warning, before healthy ones by name.
    sort_worst_first(&mut entries, true);
    let order: Vec<&str> = entries.iter().map(|e| e.context.as_str()).collect();
    assert_eq!(order, ["a-split", "c-affected", "z-down", "b-healthy"]);
}

#[test]
fn the_exit_rule_puts_unreadable_before_findings() {
    let healthy = checked("h", FIXED, "s1", "s1");
    let split = checked("s", AFFECTED, "s1", "s2");
    let down = unreadable("d", ReadFailureKind::Unreachable);
    let exit = |entries: &[FleetEntry<CheckAnalysis>], fail_on, ignore| {
        fleet_exit(entries, fail_on, ignore)
    };
    assert_eq!(
        exit(std::slice::from_ref(&healthy), FailOn::Error, false),
        Exit::Healthy
    );
    assert_eq!(
        exit(&[healthy.clone(), split.clone()], FailOn::Error, false),
        Exit::Findings
    );
    assert_eq!(
        exit(&[split.clone(), down.clone()], FailOn::Error, false),
        Exit::ReadFailed
    );
    assert_eq!(
        exit(&[split.clone(), down.clone()], FailOn::Never, false),
        Exit::ReadFailed
    );
    // Ignored, an unreadable cluster is a warning: it fails --fail-on warning only.
    assert_eq!(
        exit(&[healthy.clone(), down.clone()], FailOn::Error, true),
        Exit::Healthy
    );
    assert_eq!(
        exit(&[healthy.clone(), down.clone()], FailOn::Warning, true),
        Exit::Findings
    );
    assert_eq!(exit(&[split, down], FailOn::Error, true), Exit::Findings);
}

#[test]
fn rows_say_split_drift_etcd_and_status_in_words() {
    let row = summary_row(&checked("a", AFFECTED, "s1", "s2"), false);
    assert_eq!(
        (row.version.as_str(), row.locks.as_str(), row.drift.as_str()),
        (AFFECTED, "split", "0/0/0")
    );
    assert_eq!(row.split_severity, Some(Severity::Error));
    assert_eq!((row.etcd.as_str(), row.status.as_str()), ("2/2", "error"));
    let row = summary_row(&checked("b", FIXED, "s2", "s2"), false);
    assert_eq!((row.locks.as_str(), row.status.as_str()), ("s2", "ok"));
    assert_eq!(row.split_severity, None);
}

#[test]
fn unreadable_rows_give_a_short_reason_and_a_403_names_the_request() {
    let reason = |kind| summary_row(&unreadable("x", kind), false).status;
    assert_eq!(reason(ReadFailureKind::Unreachable), "unreachable");
    assert_eq!(reason(ReadFailureKind::Tls), "TLS");
    assert_eq!(reason(ReadFailureKind::Unauthorized), "401");
    assert_eq!(reason(ReadFailureKind::Forbidden), "403 list leases");
    assert_eq!(reason(ReadFailureKind::Other), "error");
    let entry = unreadable("x", ReadFailureKind::Unauthorized);
    assert_eq!(entry.outcome, FleetOutcome::Unauthorized);
    assert_eq!(entry.refused_request, None);
    assert_eq!(entry.error.as_deref(), Some("cannot list nodes at x"));
}

#[test]
fn the_summary_counts_clusters_by_their_worst_finding() {
    let entries = [
        checked("a", AFFECTED, "s1", "s2"),
        checked("b", FIXED, "s1", "s1"),
        checked("c", AFFECTED, "s1", "s1"),
        unreadable("d", ReadFailureKind::Forbidden),
    ];
    assert_eq!(
        FleetSummary::of(&entries),
        FleetSummary {
            clusters: 4,
            checked: 3,
            unreadable: 1,
            with_errors: 1,
            with_warnings: 1,
            with_infos: 0,
            healthy: 1,
        }
    );
}
