//! What each minor line of the servers should run, judged against k3s-io/k3s#10046, and the
//! one warning `check` gives while any line is affected.

use std::collections::BTreeMap;

use serde::Serialize;

use super::finding::{Finding, FindingCode, Severity};
use crate::model::cluster_state::ClusterState;
use crate::version::{ProductVersion, SplitImpact};

/// What a minor line's servers should run.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct VersionAdvice {
    pub line: String,
    pub running: Vec<String>,
    /// `affected`, `fixed`, `not-affected`, `predates-snapshot-crds` or `undetermined`.
    // A plain string in the schema, as it was before the type.
    #[schemars(with = "String")]
    pub status: VersionStatus,
    pub upgrade_to: Option<String>,
    pub advice: String,
}

/// What k3s-io/k3s#10046 means for a minor line: [`SplitImpact`] without its upgrade advice,
/// as `check` prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum VersionStatus {
    Affected,
    Undetermined,
    Fixed,
    NotAffected,
    PredatesSnapshotCrds,
}

/// One warning while any server line is affected: a repaired split can come back after any
/// restart until the upgrade, and `--fail-on warning` monitoring should keep seeing that.
pub(super) fn version_affected(advice: &[VersionAdvice]) -> Option<Finding> {
    let affected: Vec<&VersionAdvice> = advice
        .iter()
        .filter(|a| a.status == VersionStatus::Affected)
        .collect();
    let running: Vec<String> = affected.iter().flat_map(|a| a.running.clone()).collect();
    let targets: Vec<String> = affected
        .iter()
        .filter_map(|a| a.upgrade_to.clone())
        .collect();
    if affected.is_empty() {
        return None;
    }
    Some(
        Finding::new(
            Severity::Warning,
            FindingCode::VersionAffected,
            "server Nodes",
            format!(
                "{} affected by k3s-io/k3s#10046: whenever the two locks land on different servers again (any \
                 server restart can do it), the etcd snapshot controller stops and snapshots go missing from \
                 the ConfigMap",
                running.join(", ")
            ),
        )
        .fix(format!("upgrade to {} or later", targets.join(" / "))),
    )
}

pub(super) fn version_advice(state: &ClusterState) -> Vec<VersionAdvice> {
    let mut lines: BTreeMap<(u64, u64), Vec<ProductVersion>> = BTreeMap::new();
    for node in state.nodes().iter().filter(|n| n.is_server()) {
        if let Some(v) = &node.version {
            let running = lines.entry((v.major, v.minor)).or_default();
            if !running.contains(v) {
                running.push(v.clone());
            }
        }
    }
    lines
        .into_iter()
        .map(|((major, minor), mut running)| {
            running.sort();
            let oldest = &running[0];
            let (status, upgrade_to, advice) = match oldest.split_impact() {
                SplitImpact::Affected { advice } => (
                    VersionStatus::Affected,
                    Some(advice.target().to_string()),
                    format!("affected by k3s-io/k3s#10046: {advice}"),
                ),
                SplitImpact::Undetermined { advice } => (
                    VersionStatus::Undetermined,
                    Some(advice.target().to_string()),
                    format!("a commit build; to be sure of the fix for k3s-io/k3s#10046, {advice}"),
                ),
                SplitImpact::Fixed => (VersionStatus::Fixed, None, "has the fix for k3s-io/k3s#10046".to_string()),
                SplitImpact::Unaffected => (VersionStatus::NotAffected, None, "not affected by k3s-io/k3s#10046".to_string()),
                SplitImpact::PredatesSnapshotCrs => (
                    VersionStatus::PredatesSnapshotCrds,
                    None,
                    "predates ETCDSnapshotFile resources; the lease split has no known visible effect".to_string(),
                ),
            };
            VersionAdvice {
                line: format!("{major}.{minor}"),
                running: running.iter().map(ToString::to_string).collect(),
                status,
                upgrade_to,
                advice,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::check::analyse_check;
    use crate::diagnose::finding::FindingCode;
    use crate::diagnose::test_cluster::{TestCluster, now};
    use crate::distro::Distro;

    #[test]
    fn a_fixed_version_gets_no_version_warning() {
        let state = TestCluster::k3s()
            .server("s1", "v1.29.6+k3s1")
            .lease("k3s", "s1", 1)
            .lease("k3s-etcd", "s1", 1)
            .build();
        let a = analyse_check(&state, Distro::K3s, now());
        assert!(
            a.all_findings()
                .iter()
                .all(|f| f.code != FindingCode::VersionAffected)
        );
    }

    #[test]
    fn versions_on_lines_that_never_got_the_fix_point_to_the_nearest_line() {
        let state = TestCluster::k3s()
            .server("a", "v1.26.15+k3s1")
            .lease("k3s", "a", 1)
            .lease("k3s-etcd", "a", 1)
            .build();
        let advice = &analyse_check(&state, Distro::K3s, now()).version_advice[0];
        assert_eq!(
            (advice.line.as_str(), advice.status),
            ("1.26", VersionStatus::Affected)
        );
        assert_eq!(advice.upgrade_to.as_deref(), Some("v1.27.15+k3s1"));
        assert!(advice.advice.contains("never got the fix"));
    }
}
