//! Which etcd-snapshot behaviours a version has (k3s `pkg/etcd/snapshot.go`,
//! `pkg/etcd/s3`):
//! the periodic snapshot reconcile, and which flag S3 retention follows.

use super::ProductVersion;

/// A yes/no about a version, and whether it is read from a release note or inferred from the
/// order of commits (then findings say "(inferred)").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Known {
    pub yes: bool,
    pub inferred: bool,
}

impl Known {
    fn sure(yes: bool) -> Known {
        Known {
            yes,
            inferred: false,
        }
    }

    #[cfg(test)]
    fn inferred(yes: bool) -> Known {
        Known {
            yes,
            inferred: true,
        }
    }
}

/// Which flag S3 retention counts against on a version (pkg/etcd/s3/s3.go `SnapshotRetention`,
/// pkg/cli/server/server.go).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum S3RetentionRule {
    /// Before `--etcd-s3-retention` (PR #12669): S3 keeps `--etcd-snapshot-retention` (default 5).
    SnapshotRetention,
    /// k3s-io/k3s#13769: only `--etcd-s3-retention` (default 5) counts; a raised
    /// `--etcd-snapshot-retention` no longer reaches S3.
    S3FlagOnly,
    /// After the fix (PR #13770): `--etcd-s3-retention`, else `--etcd-snapshot-retention` when
    /// set, else 5.
    S3FlagOrSnapshotRetention,
}

impl ProductVersion {
    /// Whether the server reconciles its snapshots every `--etcd-snapshot-reconcile-interval`
    /// (k3s-io/k3s PR #11881): v1.32.3, v1.31.7 (release notes), v1.30.11 and v1.29.15
    /// (inferred from the backport order), every 1.33+. `None` for a kubelet that is not
    /// k3s/RKE2 or a commit build next to the boundary. RKE2 tags are not confirmed; RKE2
    /// builds on the k3s of the same patch, so the same patches are used, inferred.
    pub(crate) fn periodic_snapshot_reconcile(&self) -> Option<Known> {
        if self.major != 1 || self.distro().is_none() {
            return None;
        }
        let rke2 = matches!(self.build, super::Build::Rke2Release(_));
        let (first, inferred) = match self.minor {
            m if m >= 33 => return Some(Known::sure(true)),
            32 => (3, false),
            31 => (7, false),
            30 => (11, true),
            29 => (15, true),
            _ => return Some(Known::sure(false)),
        };
        self.includes_patch(first).map(|yes| Known {
            yes,
            inferred: inferred || rke2,
        })
    }

    /// Which flag S3 retention follows (k3s-io/k3s#13769): `--etcd-s3-retention` came in v1.31.12
    /// (inferred), v1.32.8, v1.33.4 and 1.34; the fallback to `--etcd-snapshot-retention`
    /// (#13770) in v1.33.10 (inferred), v1.34.6, v1.35.3 and 1.36. 1.31 got no fix; whether a
    /// 1.32 tag ships it is not confirmed, so 1.32.14+ is taken as fixed, inferred.
    pub(crate) fn s3_retention_rule(&self) -> Option<(S3RetentionRule, bool)> {
        use S3RetentionRule::*;
        if self.major != 1 || self.distro().is_none() {
            return None;
        }
        let rke2 = matches!(self.build, super::Build::Rke2Release(_));
        // (first with --etcd-s3-retention, inferred), (first with the fallback, inferred)
        let (flag, fix): ((u64, bool), Option<(u64, bool)>) = match self.minor {
            m if m >= 36 => return Some((S3FlagOrSnapshotRetention, rke2)),
            35 => ((0, false), Some((3, false))),
            34 => ((0, false), Some((6, false))),
            33 => ((4, false), Some((10, true))),
            32 => ((8, false), Some((14, true))),
            31 => ((12, true), None),
            _ => return Some((SnapshotRetention, false)),
        };
        if let Some((fixed_in, inferred)) = fix
            && self.includes_patch(fixed_in)?
        {
            return Some((S3FlagOrSnapshotRetention, inferred || rke2));
        }
        let (first, inferred) = flag;
        Some(match self.includes_patch(first)? {
            true => (S3FlagOnly, inferred || rke2),
            false => (SnapshotRetention, inferred || rke2),
        })
    }

    /// The release to upgrade to for the #13770 fix, for advice, and whether that tag is
    /// inferred. 1.31 never got it; whether a 1.32 tag has it is not confirmed, so 1.31 and
    /// 1.32 are pointed at 1.33's fix.
    pub(crate) fn s3_retention_fixed_in(&self) -> (&'static str, bool) {
        match self.minor {
            35 => ("v1.35.3+k3s1", false),
            34 => ("v1.34.6+k3s1", false),
            _ => ("v1.33.10+k3s1", true),
        }
    }

    /// The multi-server S3 save race (k3s-io/k3s#10989, rancher/rke2#6928), which leaves S3
    /// ETCDSnapshotFiles with no location and size 0: `Some(Some(release))` when this version
    /// has it, with the release to upgrade to; `Some(None)` when it does not; `None` when that
    /// cannot be told (not k3s/RKE2, or a commit build at the boundary). Fixed in v1.28.15,
    /// v1.29.10, v1.30.6 and v1.31.2 (k3s backports #11053, #11052, #11051, #11050, validated on
    /// v1.28.15-rc1 and v1.29.10-rc1; RKE2 the same patches, rancher/rke2#7030, #7029, #7028);
    /// 1.27 and older lines ended unfixed, and 1.32 came after the fix.
    pub(crate) fn s3_save_race(&self) -> Option<Option<String>> {
        let distro = self.distro()?;
        if self.major != 1 {
            return None;
        }
        let fixed = match self.minor {
            m if m >= 32 => return Some(None),
            31 => 2,
            30 => 6,
            29 => 10,
            28 => 15,
            _ => return Some(Some(super::release_name(distro, 28, 15))),
        };
        Some((!self.includes_patch(fixed)?).then(|| super::release_name(distro, self.minor, fixed)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> ProductVersion {
        ProductVersion::parse(s).unwrap()
    }

    #[test]
    fn s3_save_race_boundaries() {
        let r = |s: &str| v(s).s3_save_race();
        assert_eq!(r("v1.29.9+k3s1"), Some(Some("v1.29.10+k3s1".into())));
        assert_eq!(r("v1.29.10+k3s1"), Some(None));
        assert_eq!(r("v1.28.14+rke2r1"), Some(Some("v1.28.15+rke2r1".into())));
        assert_eq!(r("v1.30.6+k3s1"), Some(None));
        assert_eq!(r("v1.31.1+k3s1"), Some(Some("v1.31.2+k3s1".into())));
        assert_eq!(r("v1.27.16+k3s1"), Some(Some("v1.28.15+k3s1".into())));
        assert_eq!(r("v1.32.0+k3s1"), Some(None));
        assert_eq!(r("v1.29.10+k3s-da2625d1"), None);
    }

    #[test]
    fn periodic_reconcile_boundaries() {
        let p = |s: &str| v(s).periodic_snapshot_reconcile();
        assert_eq!(p("v1.32.2+k3s1"), Some(Known::sure(false)));
        assert_eq!(p("v1.32.3+k3s1"), Some(Known::sure(true)));
        assert_eq!(p("v1.31.6+k3s1"), Some(Known::sure(false)));
        assert_eq!(p("v1.31.7+k3s1"), Some(Known::sure(true)));
        assert_eq!(p("v1.30.10+k3s1"), Some(Known::inferred(false)));
        assert_eq!(p("v1.30.11+k3s1"), Some(Known::inferred(true)));
        assert_eq!(p("v1.29.15+k3s1"), Some(Known::inferred(true)));
        assert_eq!(p("v1.28.15+k3s1"), Some(Known::sure(false)));
        assert_eq!(p("v1.33.0+k3s1"), Some(Known::sure(true)));
        assert_eq!(p("v1.36.1+k3s1"), Some(Known::sure(true)));
        // RKE2 tags are not confirmed.
        assert_eq!(p("v1.32.3+rke2r1"), Some(Known::inferred(true)));
        // A commit build at the boundary could be either.
        assert_eq!(p("v1.32.3+k3s-abc12345"), None);
        assert_eq!(p("v1.32.3"), None);
    }

    #[test]
    fn s3_retention_rule_boundaries() {
        use S3RetentionRule::*;
        let r = |s: &str| v(s).s3_retention_rule().map(|(r, _)| r);
        assert_eq!(r("v1.30.14+k3s2"), Some(SnapshotRetention));
        assert_eq!(r("v1.31.11+k3s1"), Some(SnapshotRetention));
        assert_eq!(r("v1.31.12+k3s1"), Some(S3FlagOnly));
        assert_eq!(r("v1.31.14+k3s1"), Some(S3FlagOnly));
        assert_eq!(r("v1.32.7+k3s1"), Some(SnapshotRetention));
        assert_eq!(r("v1.32.8+k3s1"), Some(S3FlagOnly));
        assert_eq!(r("v1.32.13+k3s1"), Some(S3FlagOnly));
        assert_eq!(r("v1.32.14+k3s1"), Some(S3FlagOrSnapshotRetention));
        assert_eq!(r("v1.33.3+k3s1"), Some(SnapshotRetention));
        assert_eq!(r("v1.33.4+k3s1"), Some(S3FlagOnly));
        assert_eq!(r("v1.33.9+k3s1"), Some(S3FlagOnly));
        assert_eq!(r("v1.33.10+k3s1"), Some(S3FlagOrSnapshotRetention));
        assert_eq!(r("v1.34.0+k3s1"), Some(S3FlagOnly));
        assert_eq!(r("v1.34.5+k3s1"), Some(S3FlagOnly));
        assert_eq!(r("v1.34.6+k3s1"), Some(S3FlagOrSnapshotRetention));
        assert_eq!(r("v1.35.2+k3s1"), Some(S3FlagOnly));
        assert_eq!(r("v1.35.3+k3s1"), Some(S3FlagOrSnapshotRetention));
        assert_eq!(r("v1.36.0+k3s1"), Some(S3FlagOrSnapshotRetention));
        // Inferred tags are marked.
        assert!(v("v1.33.10+k3s1").s3_retention_rule().unwrap().1);
        assert!(!v("v1.34.6+k3s1").s3_retention_rule().unwrap().1);
        assert!(v("v1.31.12+k3s1").s3_retention_rule().unwrap().1);
    }
}
