//! Which versions publish the `EtcdIsVoter` Node condition (k3s `pkg/etcd/etcd.go`):
//! k3s-io/k3s#8033 (PR #8724) and its backports, first in the November 2023 releases.

use super::{ProductVersion, release_name};
use crate::distro::Distro;

impl ProductVersion {
    /// Whether this version's etcd servers publish `EtcdIsVoter`. First in v1.28.4, v1.27.8,
    /// v1.26.11 and v1.25.16: the backports (k3s-io/k3s#8816, #8817, #8818) were validated on
    /// the commit builds v1.25.16+k3s-c8165989, v1.26.11+k3s-d00ad9db and v1.27.8+k3s-0abb8a5a
    /// on 2023-11-22, and k3s-io/k3s#9048 reports the condition on v1.26.11, v1.27.8 and v1.28.4;
    /// RKE2 the same patches (rancher/rke2#5034, validated on v1.28.4+rke2r1). Every 1.29+ has
    /// it; 1.24 and older lines had ended. `None` for a kubelet that is not k3s/RKE2 or a commit
    /// build at the boundary.
    pub(crate) fn publishes_etcd_voter(&self) -> Option<bool> {
        if self.major != 1 || self.distro().is_none() {
            return None;
        }
        match self.minor {
            m if m >= 29 => Some(true),
            m => match first_voter_patch(m) {
                Some(first) => self.includes_patch(first),
                None => Some(false),
            },
        }
    }

    /// The release of this line that first publishes `EtcdIsVoter`, for notes; 1.24 and older
    /// lines never got it, so they are pointed at 1.25's.
    pub(crate) fn etcd_voter_since(&self) -> String {
        let distro = self.distro().unwrap_or(Distro::K3s);
        match first_voter_patch(self.minor) {
            Some(first) if self.major == 1 => release_name(distro, self.minor, first),
            _ => release_name(distro, 25, 16),
        }
    }
}

fn first_voter_patch(minor: u64) -> Option<u64> {
    match minor {
        28 => Some(4),
        27 => Some(8),
        26 => Some(11),
        25 => Some(16),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Option<bool> {
        ProductVersion::parse(s).unwrap().publishes_etcd_voter()
    }

    #[test]
    fn first_releases_per_line() {
        assert_eq!(p("v1.28.3+k3s2"), Some(false));
        assert_eq!(p("v1.28.4+k3s1"), Some(true));
        assert_eq!(p("v1.27.7+k3s2"), Some(false));
        assert_eq!(p("v1.27.8+k3s1"), Some(true));
        assert_eq!(p("v1.26.10+k3s2"), Some(false));
        assert_eq!(p("v1.26.11+k3s1"), Some(true));
        assert_eq!(p("v1.25.15+k3s2"), Some(false));
        assert_eq!(p("v1.25.16+k3s4"), Some(true));
        assert_eq!(p("v1.24.17+k3s1"), Some(false));
        assert_eq!(p("v1.29.0+k3s1"), Some(true));
        assert_eq!(p("v1.28.4+rke2r1"), Some(true));
        assert_eq!(p("v1.26.10+rke2r2"), Some(false));
        // The validated commit builds carry the next patch already.
        assert_eq!(p("v1.26.11+k3s-d00ad9db"), None);
        assert_eq!(p("v1.26.12+k3s-d00ad9db"), Some(true));
        assert_eq!(p("v1.28.4"), None);
    }

    #[test]
    fn where_to_upgrade() {
        let since = |s: &str| ProductVersion::parse(s).unwrap().etcd_voter_since();
        assert_eq!(since("v1.26.10+k3s2"), "v1.26.11+k3s1");
        assert_eq!(since("v1.28.2+rke2r1"), "v1.28.4+rke2r1");
        assert_eq!(since("v1.23.17+k3s1"), "v1.25.16+k3s1");
    }
}
