//! A change that arrived in one month's releases of several lines at once: the first patch of
//! each line that has it, and the line from which every release has it. The version gates
//! judge a server by it and the findings name the releases from it, so the two cannot
//! disagree.

use super::ProductVersion;

pub(crate) struct FirstReleases {
    /// (minor, first patch) of each line that got the change as a backport, oldest first.
    pub backports: &'static [(u64, u64)],
    /// Every release of this minor and later has it.
    pub all_from: u64,
}

impl FirstReleases {
    /// Whether `version` has the change. `None` for a kubelet that is not k3s/RKE2 or a
    /// commit build next to the boundary.
    pub(crate) fn include(&self, version: &ProductVersion) -> Option<bool> {
        if version.major != 1 || version.distro().is_none() {
            return None;
        }
        if version.minor >= self.all_from {
            return Some(true);
        }
        match self
            .backports
            .iter()
            .find(|(minor, _)| *minor == version.minor)
        {
            Some((_, first)) => version.includes_patch(*first),
            None => Some(false),
        }
    }

    /// `v1.27.13, v1.28.9, v1.29.4 and 1.30`, for messages.
    pub(crate) fn listed(&self) -> String {
        let lines: Vec<String> = self
            .backports
            .iter()
            .map(|(minor, patch)| format!("v1.{minor}.{patch}"))
            .collect();
        format!("{} and 1.{}", lines.join(", "), self.all_from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GATE: FirstReleases = FirstReleases {
        backports: &[(27, 13), (28, 9)],
        all_from: 29,
    };

    #[test]
    fn a_line_is_judged_by_its_own_first_patch_and_named_with_the_others() {
        let has = |v: &str| GATE.include(&ProductVersion::parse(v).unwrap());
        assert_eq!(has("v1.27.13+k3s1"), Some(true));
        assert_eq!(has("v1.28.8+rke2r1"), Some(false));
        assert_eq!(has("v1.26.15+k3s1"), Some(false));
        assert_eq!(has("v1.30.0+k3s1"), Some(true));
        assert_eq!(has("v1.28.9"), None);
        assert_eq!(GATE.listed(), "v1.27.13, v1.28.9 and 1.29");
    }
}
