//! Whether a `leases follow` move leaves `<prog>` and `<prog>-etcd` on different servers, and
//! what that costs on the version that decides it. Pure.

use serde::Serialize;

use crate::distro::Distro;
use crate::version::{ProductVersion, SplitImpact};

/// A move that ends with the two locks on different servers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SplitAfterMove {
    /// The locks were already split before the move (`false`: the move creates the split).
    pub kept: bool,
    pub core_holder: String,
    pub etcd_holder: String,
    /// What a split does on the version of the `-etcd` holder after the move.
    pub cost: String,
    /// One sentence for the plan's first line and for the refusal.
    pub summary: String,
}

/// The holders after the move are the target for the moved lock and the current holder for
/// the other one; `None` when they end up equal or the other lock has no holder to compare.
pub(super) fn split_after_move(
    distro: Distro,
    moves_core: bool,
    to_identity: &str,
    core_holder_now: Option<&str>,
    etcd_holder_now: Option<&str>,
    etcd_holder_version: Option<&ProductVersion>,
) -> Option<SplitAfterMove> {
    let (core_after, etcd_after) = if moves_core {
        (Some(to_identity), etcd_holder_now)
    } else {
        (core_holder_now, Some(to_identity))
    };
    let (core_after, etcd_after) = (
        core_after.filter(|h| !h.is_empty())?,
        etcd_after.filter(|h| !h.is_empty())?,
    );
    if core_after == etcd_after {
        return None;
    }
    let kept = matches!(
        (core_holder_now, etcd_holder_now),
        (Some(c), Some(e)) if !c.is_empty() && !e.is_empty() && c != e
    );
    let cost = cost(distro, etcd_after, etcd_holder_version);
    let summary = format!(
        "this {} a split ({} on {core_after}, {} on {etcd_after}): {cost}",
        if kept { "keeps" } else { "creates" },
        distro.core_lock(),
        distro.etcd_lock(),
    );
    Some(SplitAfterMove {
        kept,
        core_holder: core_after.to_string(),
        etcd_holder: etcd_after.to_string(),
        cost,
        summary,
    })
}

/// k3s `pkg/server/server.go`: before k3s-io/k3s#10047 only the `<prog>` callback starts the informers, so the
/// etcd controllers registered on a `-etcd` holder that lacks `<prog>` stay idle.
fn cost(distro: Distro, etcd_holder: &str, version: Option<&ProductVersion>) -> String {
    let Some(version) = version else {
        return "the version of the etcd lock holder is unknown, so whether that matters cannot be told"
            .to_string();
    };
    match version.split_impact() {
        SplitImpact::Affected { advice } | SplitImpact::Undetermined { advice } => format!(
            "on {version} (k3s-io/k3s#10046) the etcd controllers on {etcd_holder} never start their informers, \
             so new ETCDSnapshotFiles stop reaching ConfigMap kube-system/{} until {} moves onto {etcd_holder} \
             ({advice})",
            distro.snapshots_configmap(),
            distro.core_lock()
        ),
        SplitImpact::Fixed | SplitImpact::Unaffected => format!(
            "harmless on {version}, which starts the etcd controllers from the {} callback too \
             (k3s-io/k3s#10047)",
            distro.etcd_lock()
        ),
        SplitImpact::PredatesSnapshotCrs => {
            format!(
                "{version} predates ETCDSnapshotFile resources; the split has no known visible effect"
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> ProductVersion {
        ProductVersion::parse(s).unwrap()
    }

    #[test]
    fn moving_core_onto_the_etcd_holder_ends_the_split() {
        let affected = v("v1.29.4+k3s1");
        let after = split_after_move(
            Distro::K3s,
            true,
            "s2",
            Some("s1"),
            Some("s2"),
            Some(&affected),
        );
        assert_eq!(after, None);
    }

    #[test]
    fn moving_core_elsewhere_keeps_the_split_and_says_what_it_costs() {
        let affected = v("v1.29.4+k3s1");
        let after = split_after_move(
            Distro::K3s,
            true,
            "s3",
            Some("s1"),
            Some("s2"),
            Some(&affected),
        )
        .unwrap();
        assert!(after.kept);
        let text = &after.summary;
        assert!(
            text.starts_with("this keeps a split (k3s on s3, k3s-etcd on s2)"),
            "{text}"
        );
        assert!(
            text.contains("etcd controllers on s2 never start"),
            "{text}"
        );
        assert!(text.contains("v1.29.6+k3s1"), "{text}");
    }

    #[test]
    fn moving_away_from_an_aligned_pair_creates_a_split() {
        let fixed = v("v1.29.6+k3s1");
        let after = split_after_move(
            Distro::K3s,
            false,
            "s3",
            Some("s1"),
            Some("s1"),
            Some(&fixed),
        )
        .unwrap();
        assert!(!after.kept);
        assert_eq!(
            (after.core_holder.as_str(), after.etcd_holder.as_str()),
            ("s1", "s3")
        );
        assert!(
            after.cost.starts_with("harmless on v1.29.6+k3s1"),
            "{}",
            after.cost
        );
    }

    #[test]
    fn a_released_other_lock_is_no_split() {
        assert_eq!(
            split_after_move(Distro::K3s, true, "s3", Some("s1"), Some(""), None),
            None
        );
        assert_eq!(
            split_after_move(Distro::K3s, true, "s3", Some("s1"), None, None),
            None
        );
    }
}
