//! Which versions delete orphaned node password Secrets themselves.
//! k3s-io/k3s#13072 ("K3s may leak node-password Secrets if the kubelet fails to start and
//! create a Node") was fixed on main by #13095, which moved the Secrets into a controller
//! (`pkg/nodepassword/controller.go`) that, once a minute, deletes every node password Secret
//! older than `MinOrphanSecretAge` (10 minutes) whose Node does not exist, and gives each
//! Secret its Node as owner. Backports: #13112 (release-1.34), #13113 (1.33), #13114 (1.32),
//! #13115 (1.31), validated on the branches on 2025-11-12/13 for the November 2025 releases:
//! v1.34.2, v1.33.6, v1.32.10 and v1.31.14 (docs.k3s.io lists v1.31.14+k3s1 on Nov 20 2025,
//! after v1.31.13 on Sep 22; the 1.32-1.34 tags are inferred from the same monthly cycle and
//! #13114 for 1.32 was still shown open when read). 1.35.0 (December 2025) was cut from main after the fix. RKE2
//! tracked the same change in rancher/rke2#9164–#9168, validated for the November 2025 cycle:
//! the same patch numbers with `+rke2r1`. 1.30 and older had no release after it.

use super::ProductVersion;
use super::first_releases::FirstReleases;

/// The November 2025 releases, and every 1.35.
pub(crate) const NODE_PASSWORD_CLEANUP: FirstReleases = FirstReleases {
    backports: &[(31, 14), (32, 10), (33, 6), (34, 2)],
    all_from: 35,
};

impl ProductVersion {
    /// Whether this server deletes node password Secrets whose Node is gone. `None` for a
    /// kubelet that is not k3s/RKE2 or a commit build next to the boundary.
    pub(crate) fn deletes_orphaned_node_passwords(&self) -> Option<bool> {
        NODE_PASSWORD_CLEANUP.include(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deletes(v: &str) -> Option<bool> {
        ProductVersion::parse(v)
            .unwrap()
            .deletes_orphaned_node_passwords()
    }

    #[test]
    fn the_november_2025_releases_are_the_first_that_delete_orphans() {
        assert_eq!(deletes("v1.34.2+k3s1"), Some(true));
        assert_eq!(deletes("v1.34.1+k3s1"), Some(false));
        assert_eq!(deletes("v1.33.6+k3s1"), Some(true));
        assert_eq!(deletes("v1.33.5+k3s1"), Some(false));
        assert_eq!(deletes("v1.32.10+rke2r1"), Some(true));
        assert_eq!(deletes("v1.32.9+k3s1"), Some(false));
        assert_eq!(deletes("v1.31.14+k3s1"), Some(true));
        assert_eq!(deletes("v1.31.13+k3s1"), Some(false));
        assert_eq!(deletes("v1.30.14+k3s2"), Some(false));
        assert_eq!(deletes("v1.35.0+k3s1"), Some(true));
        assert_eq!(deletes("v1.34.2"), None);
    }
}
