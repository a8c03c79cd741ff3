//! The k3s-io/k3s#10046 verdict: `<prog>` and `<prog>-etcd` held by different servers, and
//! what that does on the version that matters.

use super::lock_status::LockStatus;
use crate::diagnose::cluster_summary::oldest_server_version;
use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::distro::Distro;
use crate::model::cluster_state::ClusterState;
use crate::model::node::node_for_identity;
use crate::version::{LockStyle, ProductVersion, SplitImpact};

/// The version the verdict is judged on, and why that one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct VerdictVersion {
    pub version: ProductVersion,
    pub from: String,
}

/// The fix lives in the `-etcd` leader's callback (k3s-io/k3s#10047 starts the informers
/// there), so the `-etcd` holder's version decides; then the `<prog>` holder's; then the
/// oldest server's.
pub(super) fn verdict_version(
    state: &ClusterState,
    distro: Distro,
    core: &LockStatus,
    etcd: &LockStatus,
) -> Option<VerdictVersion> {
    let holder_version = |lock: &LockStatus| {
        let holder = lock.holder.as_deref()?;
        let (node, _) = node_for_identity(state.nodes(), distro, holder)?;
        Some(VerdictVersion {
            version: node.version.clone()?,
            from: format!("{} holder {}", lock.name, node.name),
        })
    };
    holder_version(etcd)
        .or_else(|| holder_version(core))
        .or_else(|| {
            oldest_server_version(state).map(|version| VerdictVersion {
                version,
                from: "oldest server".to_string(),
            })
        })
}

pub(super) fn split_finding(
    distro: Distro,
    style: Option<LockStyle>,
    core: &LockStatus,
    etcd: &LockStatus,
    verdict: Option<&VerdictVersion>,
) -> Option<Finding> {
    let core_holder = core.settled_holder()?;
    let etcd_holder = etcd.settled_holder()?;
    if core_holder == etcd_holder {
        return None;
    }
    let object = format!("Lease kube-system/{}", core.name);
    let held = format!(
        "{} is held by {core_holder} but {} by {etcd_holder}.",
        core.name, etcd.name
    );
    let symptom = format!(
        "the etcd controllers on {etcd_holder} never start their informers: new ETCDSnapshotFiles stop \
         reaching ConfigMap kube-system/{}, and Rancher shows missing or 0-byte snapshots",
        distro.snapshots_configmap()
    );
    let workaround = move_command(distro, style, &core.name, etcd_holder, core_holder);
    let Some(verdict) = verdict else {
        return Some(
            Finding::new(
                Severity::Warning,
                FindingCode::LeaseSplit,
                object,
                format!(
                    "{held} The version is unknown (no Node objects), so whether this matters cannot be told; \
                     on versions affected by k3s-io/k3s#10046 {symptom}."
                ),
            )
            .fix("re-run with Node objects (kubectl get nodes -o yaml) in the dump"),
        );
    };
    let version = &verdict.version;
    let finding = match version.split_impact() {
        SplitImpact::Affected { advice } => Finding::new(
            Severity::Error,
            FindingCode::LeaseSplit,
            object,
            format!("{held} On {version} (k3s-io/k3s#10046) {symptom}."),
        )
        .fix(format!("{workaround}; lasting fix: {advice}")),
        SplitImpact::Undetermined { advice } => Finding::new(
            Severity::Error,
            FindingCode::LeaseSplit,
            object,
            format!(
                "{held} {version} is an untagged commit build, so its version cannot tell whether it has the \
                 fix for k3s-io/k3s#10046; if it does not, {symptom}."
            ),
        )
        .fix(format!("{workaround}; lasting fix: {advice}")),
        // Info, as the message says: a harmless state must not fail `--fail-on warning`.
        SplitImpact::Fixed | SplitImpact::Unaffected => Finding::new(
            Severity::Info,
            FindingCode::LeaseSplit,
            object,
            format!(
                "{held} Harmless on {version}, which starts the etcd controllers' informers from the {} \
                 callback too (k3s-io/k3s#10047).",
                etcd.name
            ),
        ),
        SplitImpact::PredatesSnapshotCrs => Finding::new(
            Severity::Warning,
            FindingCode::LeaseSplit,
            object,
            format!(
                "{held} {version} predates ETCDSnapshotFile resources; the split has no known visible effect \
                 on it (it would on the versions affected by k3s-io/k3s#10046)."
            ),
        ),
    };
    Some(finding)
}

/// The repair: move `<prog>` onto the `-etcd` holder (k3s `pkg/server/server.go`); `leases follow` writes both
/// copies on MultiLock versions (client-go `resourcelock.MultiLock`).
fn move_command(
    distro: Distro,
    style: Option<LockStyle>,
    lock: &str,
    to: &str,
    from: &str,
) -> String {
    let copies = match style {
        Some(LockStyle::ConfigMapAndLease) => "its Lease and ConfigMap copies",
        Some(LockStyle::ConfigMap) => "its ConfigMap annotation",
        _ => "its Lease",
    };
    format!(
        "k3sdoctor leases follow --fix (moves {lock} to {to} by editing {copies}; the {} service on {from} \
         restarts once)",
        distro.server_unit()
    )
}
