//! What `snapshots list|diff` say about snapshots: the ConfigMap comparison, and what the
//! other snapshot analysers find in the ETCDSnapshotFiles (failed saves, stuck deletions, S3
//! retention, …), so the two commands show what `check` says about snapshots.

use jiff::Timestamp;

use super::analysers::{Inputs, SNAPSHOT_FILE_ANALYSERS};
use super::finding::{Finding, rank};
use super::leases::analyse_leases;
use super::linking::{dedupe, link};
use super::rancher::{RancherSummary, analyse_rancher};
use super::snapshots::{SnapshotAnalysis, analyse_snapshots};
use crate::distro::Distro;
use crate::model::cluster_state::ClusterState;

/// The ConfigMap comparison with the snapshot analysers' findings added, most severe first,
/// and Rancher's records where Rancher's side was read (or asked for), compared as `check`
/// compares them: their findings hang under the downstream ones that explain them, and the
/// summary says why they were not checked. Runs the comparison even without the CRD (it then
/// compares nothing), unlike `check`.
pub(crate) fn analyse_snapshots_in_full(
    state: &ClusterState,
    distro: Distro,
    now: Timestamp,
) -> (SnapshotAnalysis, Option<RancherSummary>) {
    let leases = analyse_leases(state, distro, now);
    let mut analysis = analyse_snapshots(state, distro, now, &leases);
    let inputs = Inputs {
        state,
        distro,
        now,
        leases: &leases,
        snapshots: Some(&analysis),
    };
    let mut found: Vec<Finding> = SNAPSHOT_FILE_ANALYSERS
        .iter()
        .flat_map(|analyser| analyser(&inputs).findings)
        .collect();
    let downstream: Vec<Finding> = leases
        .findings
        .iter()
        .chain(&analysis.findings)
        .chain(&found)
        .cloned()
        .collect();
    let rancher = analyse_rancher(state, distro, now, &downstream).map(|r| {
        found.extend(r.findings);
        r.summary
    });
    let added = as_check_lists_them(&leases.findings, &analysis.findings, found);
    analysis.findings.extend(added);
    rank(&mut analysis.findings);
    (analysis, rancher)
}

/// `found` as `check` lists them: said once, not repeating the comparison's findings, and
/// each one a lease split caused right after that split (once per split finding), so both
/// commands keep `check`'s order.
fn as_check_lists_them(leases: &[Finding], shown: &[Finding], found: Vec<Finding>) -> Vec<Finding> {
    // Compared in place, as `dedupe` does: a message can list 50,000 snapshots.
    fn among(findings: &[Finding], f: &Finding) -> bool {
        findings
            .iter()
            .any(|e| e.code == f.code && e.message == f.message)
    }
    let found = found.into_iter().filter(|f| !among(shown, f));
    let listed = link(dedupe(leases.iter().cloned().chain(found).collect()));
    listed
        .into_iter()
        .flat_map(|f| std::iter::once(f.finding).chain(f.children))
        .filter(|f| !among(leases, f))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::diagnose::check::analyse_check;
    use crate::diagnose::test_cluster::{TestCluster, now, snapshot_json};

    const V: &str = "v1.29.4+k3s1";
    /// Hours before `now()`.
    const T0: i64 = 1_717_142_400;

    /// What `snapshots list|diff` did before: every `snapshot-*` finding of `check` not
    /// already in the comparison, added to it.
    fn filtered_from_check(state: &ClusterState) -> SnapshotAnalysis {
        let leases = analyse_leases(state, Distro::K3s, now());
        let mut analysis = analyse_snapshots(state, Distro::K3s, now(), &leases);
        let others: Vec<Finding> = analyse_check(state, Distro::K3s, now())
            .all_findings()
            .into_iter()
            .filter(|f| f.code.as_str().starts_with("snapshot-"))
            .filter(|f| {
                !analysis
                    .findings
                    .iter()
                    .any(|shown| shown.code == f.code && shown.message == f.message)
            })
            .collect();
        analysis.findings.extend(others);
        rank(&mut analysis.findings);
        analysis
    }

    fn synced(name: &str) -> serde_json::Value {
        json!({"finalizers": ["wrangler.cattle.io/managed-etcd-controller"],
               "annotations": {"etcd.k3s.cattle.io/node-name": format!("{name}-1a2b3c4d")}})
    }

    fn cluster(etcd_holder: &str) -> TestCluster {
        let mut idle = snapshot_json("s2", T0, true);
        idle["metadata"]["finalizers"] = json!([]);
        let mut failed = snapshot_json("s1", T0 + 3600, false);
        failed["status"] = json!({"readyToUse": false, "creationTime": "2024-05-31T09:00:00Z",
            "error": {"time": "2024-05-31T09:00:00Z", "message": "save failed"}});
        let mut deleting = snapshot_json("s3", T0 + 60, false);
        deleting["metadata"]["deletionTimestamp"] = json!("2024-05-31T08:00:00Z");
        let mut removed_node = snapshot_json("gone", T0 + 120, false);
        removed_node["spec"]["nodeName"] = json!("gone");
        TestCluster::k3s()
            .server_with("s1", V, synced("s1"))
            .server_with("s2", V, synced("s2"))
            .server_with("s3", V, synced("s3"))
            .lease("k3s", "s1", 1)
            .lease("k3s-etcd", etcd_holder, 1)
            .extra_metadata()
            .snapshot_json(idle)
            .snapshot_json(failed)
            .snapshot_json(deleting)
            .snapshot_json(removed_node)
            .snapshot_configmap(&[])
    }

    #[test]
    fn gives_exactly_the_snapshot_findings_check_gives() {
        let mut no_files = cluster("s2").into_dump().build();
        no_files.snapshot_files = None;
        let mut no_crd = cluster("s2").build();
        no_crd.snapshot_crd_missing = true;
        for state in [
            cluster("s2").build(),
            cluster("s1").build(),
            cluster("s2").without_nodes().build(),
            no_files,
            no_crd,
        ] {
            let full = analyse_snapshots_in_full(&state, Distro::K3s, now()).0;
            assert_eq!(full, filtered_from_check(&state));
        }
        // The fixture reaches the cases that matter: findings beyond the comparison, and
        // some of them caused by the split.
        let split = analyse_snapshots_in_full(&cluster("s2").build(), Distro::K3s, now()).0;
        let shown = analyse_snapshots(
            &cluster("s2").build(),
            Distro::K3s,
            now(),
            &analyse_leases(&cluster("s2").build(), Distro::K3s, now()),
        );
        let added: Vec<&Finding> = split
            .findings
            .iter()
            .filter(|f| !shown.findings.contains(f))
            .collect();
        assert!(added.len() >= 2, "{added:#?}");
        assert!(added.iter().any(|f| f.caused_by.is_some()), "{added:#?}");
    }
}
