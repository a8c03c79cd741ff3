//! Against a real k3s/RKE2 cluster, opt-in: `K3SDOCTOR_REAL_KUBECONFIG=/path/to/kubeconfig
//! cargo test --test cli real_cluster`. Read-only commands only; the reports must deserialise
//! into the documented shapes. Without the variable the test only says it was skipped.

use crate::report::{CheckReport, LeaseReport};
use crate::support::harness::k3sdoctor;

#[test]
fn real_cluster_reports_have_the_documented_shape() {
    let Some(kubeconfig) = std::env::var_os("K3SDOCTOR_REAL_KUBECONFIG") else {
        eprintln!("skipped: set K3SDOCTOR_REAL_KUBECONFIG to run against a real cluster");
        return;
    };
    let kubeconfig = kubeconfig.to_string_lossy().into_owned();
    let run = |args: &[&str]| {
        let out =
            k3sdoctor(
                args.iter()
                    .copied()
                    .chain(["-o", "json", "--kubeconfig", &kubeconfig]),
            )
            .run();
        assert!(
            matches!(out.code, 0 | 1),
            "{args:?} exited {}: {}",
            out.code,
            out.stderr
        );
        out
    };
    let leases: LeaseReport = run(&["leases"]).json();
    assert_eq!(leases.kind, "LeaseReport");
    let check: CheckReport = run(&["check"]).json();
    assert_eq!(check.kind, "CheckReport");
    let diff: serde_json::Value = run(&["snapshots", "diff"]).json();
    assert_eq!(diff["kind"], "SnapshotDiff");
}
