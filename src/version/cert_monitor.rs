//! Which versions run the cert monitor that records certificate-expiry Events on each server's
//! Node (k3s `pkg/certmonitor`): k3s-io/k3s#9772 on master, then
//! 1.29, with the backports #9898 (release-1.28) and #9899 (release-1.27); rancher/rke2#5620,
//! #5717, #5718 alike. All in the April 2024 releases: the backport issues were validated on
//! v1.28.8+dev and v1.27.12+dev builds, so the first tags are v1.29.4, v1.28.9 and v1.27.13
//! (rke2r1 the same patches). 1.26 had its last release (v1.26.15) in March 2024 without it.

use super::ProductVersion;
use super::first_releases::FirstReleases;

/// The April 2024 releases, and every 1.30.
pub(crate) const CERT_MONITOR: FirstReleases = FirstReleases {
    backports: &[(27, 13), (28, 9), (29, 4)],
    all_from: 30,
};

impl ProductVersion {
    /// Whether this server records `CertificateExpirationWarning` and its kin. `None` for a
    /// kubelet that is not k3s/RKE2 or a commit build next to the boundary.
    pub(crate) fn has_cert_monitor(&self) -> Option<bool> {
        CERT_MONITOR.include(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has(v: &str) -> Option<bool> {
        ProductVersion::parse(v).unwrap().has_cert_monitor()
    }

    #[test]
    fn the_april_2024_releases_are_the_first_with_events() {
        assert_eq!(has("v1.29.4+k3s1"), Some(true));
        assert_eq!(has("v1.29.3+k3s1"), Some(false));
        assert_eq!(has("v1.28.9+rke2r1"), Some(true));
        assert_eq!(has("v1.28.8+k3s1"), Some(false));
        assert_eq!(has("v1.27.13+k3s1"), Some(true));
        assert_eq!(has("v1.26.15+k3s1"), Some(false));
        assert_eq!(has("v1.30.0+k3s1"), Some(true));
        assert_eq!(has("v1.29.4"), None);
    }
}
