//! Which k3s/RKE2 lines k3s-io/k3s#10046 affects and where each got the fix
//! (k3s-io/k3s#10047 and its backports):
//! what a `<prog>` / `<prog>-etcd` split does on a version, and where to upgrade.

use std::fmt;

use super::{Build, ProductVersion, release_name};
use crate::distro::Distro;

impl ProductVersion {
    /// What a `<prog>` / `<prog>-etcd` split means on this version.
    pub(crate) fn split_impact(&self) -> SplitImpact {
        let Some(line) = affected_line(self.major, self.minor) else {
            return if self.major == 1 && self.minor > LAST_AFFECTED_MINOR {
                SplitImpact::Unaffected
            } else {
                SplitImpact::PredatesSnapshotCrs
            };
        };
        let advice = line.advice(self.distro().unwrap_or(Distro::K3s));
        if let Build::K3sCommit(_) = self.build {
            // A commit build carries the branch's Kubernetes patch, which moves to P+1 only at
            // the release commit: `v1.29.5+k3s-…` may be anything from before v1.29.5+k3s1 up to
            // just before v1.29.6+k3s1. Only patches clear of both boundaries are certain.
            let p = self.patch;
            return match line.fixed {
                Some(fixed) if p >= fixed => SplitImpact::Fixed,
                Some(fixed) if p + 1 == fixed => SplitImpact::Undetermined { advice },
                _ if p + 1 == line.first_affected => SplitImpact::Undetermined { advice },
                _ if p + 1 < line.first_affected => SplitImpact::PredatesSnapshotCrs,
                _ => SplitImpact::Affected { advice },
            };
        }
        // A release candidate is cut from the branch that becomes that release, with the
        // same backports, so `-rcN` is judged as the release it precedes.
        if self.patch < line.first_affected {
            SplitImpact::PredatesSnapshotCrs
        } else if line.fixed.is_some_and(|fixed| self.patch >= fixed) {
            SplitImpact::Fixed
        } else {
            SplitImpact::Affected { advice }
        }
    }

    /// Whether this version has ETCDSnapshotFile resources (k3s `pkg/crd/crds.go`): the first affected
    /// release of each line, from Oct 2023.
    pub(crate) fn has_snapshot_crds(&self) -> bool {
        match affected_line(self.major, self.minor) {
            Some(line) => self.patch >= line.first_affected,
            None => self.major == 1 && self.minor > LAST_AFFECTED_MINOR,
        }
    }
}

/// What a split between `<prog>` and `<prog>-etcd` does on a version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SplitImpact {
    /// Before ETCDSnapshotFile resources (Oct 2023) the split had no known visible effect.
    PredatesSnapshotCrs,
    /// The `-etcd` informers never start: the snapshot ConfigMap stops following the CRs.
    Affected { advice: UpgradeAdvice },
    /// The fix (k3s-io/k3s#10047) starts the informers from the `-etcd` callback too.
    Fixed,
    /// Lines after 1.30 were released with the fix.
    Unaffected,
    /// An untagged commit build whose base version cannot tell whether it has the fix.
    Undetermined { advice: UpgradeAdvice },
}

/// Where to go to get the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum UpgradeAdvice {
    /// The first fixed release on the same minor line.
    SameLine(String),
    /// The line never got the fix; the nearest line that did.
    LaterLine(String),
}

impl fmt::Display for UpgradeAdvice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UpgradeAdvice::SameLine(v) => write!(f, "upgrade to {v} or later"),
            UpgradeAdvice::LaterLine(v) => write!(
                f,
                "this minor line never got the fix; upgrade (one minor at a time) to {v} or later"
            ),
        }
    }
}

impl UpgradeAdvice {
    pub(crate) fn target(&self) -> &str {
        match self {
            UpgradeAdvice::SameLine(v) | UpgradeAdvice::LaterLine(v) => v,
        }
    }
}

/// One line's row: the first release with ETCDSnapshotFile resources (and so with a
/// visible symptom) and the first release with k3s-io/k3s#10047. k3s and RKE2 share patch numbers.
#[derive(Debug, Clone, Copy)]
struct AffectedLine {
    minor: u64,
    first_affected: u64,
    fixed: Option<u64>,
}

const AFFECTED_LINES: [AffectedLine; 6] = [
    AffectedLine {
        minor: 25,
        first_affected: 15,
        fixed: None,
    },
    AffectedLine {
        minor: 26,
        first_affected: 10,
        fixed: None,
    },
    // v1.27.15+k3s1 is inferred from the backport issue k3s-io/k3s#10232.
    AffectedLine {
        minor: 27,
        first_affected: 7,
        fixed: Some(15),
    },
    AffectedLine {
        minor: 28,
        first_affected: 3,
        fixed: Some(11),
    },
    AffectedLine {
        minor: 29,
        first_affected: 0,
        fixed: Some(6),
    },
    AffectedLine {
        minor: 30,
        first_affected: 0,
        fixed: Some(2),
    },
];
const LAST_AFFECTED_MINOR: u64 = 30;

fn affected_line(major: u64, minor: u64) -> Option<AffectedLine> {
    if major != 1 {
        return None;
    }
    AFFECTED_LINES.iter().copied().find(|l| l.minor == minor)
}

impl AffectedLine {
    fn advice(self, distro: Distro) -> UpgradeAdvice {
        if let Some(fixed) = self.fixed {
            return UpgradeAdvice::SameLine(release_name(distro, self.minor, fixed));
        }
        let nearest = AFFECTED_LINES.iter().find_map(|l| {
            (l.minor > self.minor)
                .then_some(l.fixed.map(|f| (l.minor, f)))
                .flatten()
        });
        match nearest {
            Some((minor, fixed)) => UpgradeAdvice::LaterLine(release_name(distro, minor, fixed)),
            None => UpgradeAdvice::LaterLine(release_name(distro, LAST_AFFECTED_MINOR + 1, 0)),
        }
    }
}
