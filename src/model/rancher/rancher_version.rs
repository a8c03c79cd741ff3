//! Rancher's version (`settings.management.cattle.io/server-version`), and what each line
//! writes: the version gates of rancher/rancher's release branches v2.6–v2.15 (2.11 reads
//! ETCDSnapshotFiles, rancher/rancher#49158; 2.14 names records by digest, #52463).

use std::fmt;

/// A Rancher release, `v2.11.3`; pre-release and build suffixes are kept for display only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RancherVersion {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pub text: String,
}

impl PartialOrd for RancherVersion {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for RancherVersion {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.major, self.minor, self.patch).cmp(&(other.major, other.minor, other.patch))
    }
}

impl fmt::Display for RancherVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// How this Rancher keeps its records, by line: ≤ 2.10 from the ConfigMap (`plansecret`,
/// `snapshotbackpopulate`), 2.11+ from the ETCDSnapshotFiles (rancher/rancher#49158).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum RecordScheme {
    /// 2.7–2.10: records from the ConfigMap and the nodes' `etcd-snapshot list`.
    ConfigMap,
    /// 2.11–2.13: one record per ETCDSnapshotFile, named `<cluster>-<name>-<local|s3>`.
    SnapshotFiles,
    /// 2.14+: the new name and `restore-mode-options`.
    SnapshotFilesNamed,
}

impl RancherVersion {
    /// `v2.11.3`, `2.11.3`, `v2.12.0-rc1`, `v2.11-head`; `None` for anything else.
    pub(crate) fn parse(text: &str) -> Option<RancherVersion> {
        let trimmed = text.trim();
        let bare = trimmed.strip_prefix('v').unwrap_or(trimmed);
        let core = bare.split(['-', '+']).next().unwrap_or_default();
        let mut parts = core.split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        let patch = match parts.next() {
            Some(p) => p.parse().ok()?,
            None => 0,
        };
        if parts.next().is_some() {
            return None;
        }
        Some(RancherVersion {
            major,
            minor,
            patch,
            text: trimmed.to_string(),
        })
    }

    pub(crate) fn at_least(&self, major: u64, minor: u64, patch: u64) -> bool {
        (self.major, self.minor, self.patch) >= (major, minor, patch)
    }

    pub(crate) fn scheme(&self) -> RecordScheme {
        if !self.at_least(2, 11, 0) {
            RecordScheme::ConfigMap
        } else if !self.at_least(2, 14, 0) {
            RecordScheme::SnapshotFiles
        } else {
            RecordScheme::SnapshotFilesNamed
        }
    }

    /// Imported clusters get records only from 2.15 on.
    pub(crate) fn records_imported_clusters(&self) -> bool {
        self.at_least(2, 15, 0)
    }

    /// Local snapshots need a CAPI Machine (2.11–2.14); 2.15 uses ownerReferences.
    pub(crate) fn needs_machine_for_local(&self) -> bool {
        self.at_least(2, 11, 0) && !self.at_least(2, 15, 0)
    }

    /// Names Rancher cannot turn into an object are fixed from 2.14 (rancher/rancher#52529).
    pub(crate) fn maps_every_name(&self) -> bool {
        self.at_least(2, 14, 0)
    }

    /// The known loop of this version, when it has one (2.11.0–2.11.1: rancher/rancher#49860,
    /// #49875; 2.11.2–2.11.3: #50848).
    pub(crate) fn known_loop(&self) -> Option<&'static str> {
        if self.at_least(2, 11, 0) && !self.at_least(2, 11, 2) {
            Some(
                "the loop of Rancher 2.11.0–2.11.1 on \"already exists\" after an upgrade, when \
                 an unannotated record holds the name the controller wants (rancher/rancher#49860; \
                 fixed in v2.11.2)",
            )
        } else if self.at_least(2, 11, 2) && !self.at_least(2, 11, 4) {
            Some(
                "the loop of Rancher 2.11.2–2.11.3 on `resourceVersion 0x0`, which stops it \
                 updating records (rancher/rancher#50848; fixed in v2.11.4)",
            )
        } else {
            None
        }
    }

    /// ≤ 2.10 compares node names case-sensitively before v2.9.8 / v2.10.4
    /// (rancher/rancher#49230): a record whose node differs only in case keeps size 0.
    pub(crate) fn node_case_sensitive(&self) -> bool {
        match (self.major, self.minor) {
            (2, 9) => !self.at_least(2, 9, 8),
            (2, 10) => !self.at_least(2, 10, 4),
            _ => !self.at_least(2, 9, 0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_shapes_rancher_reports() {
        let v = RancherVersion::parse("v2.11.3").unwrap();
        assert_eq!((v.major, v.minor, v.patch), (2, 11, 3));
        assert_eq!(RancherVersion::parse("2.14.0-rc2").unwrap().minor, 14);
        assert_eq!(RancherVersion::parse("v2.12-head").unwrap().patch, 0);
        assert!(RancherVersion::parse("dev").is_none());
        assert!(RancherVersion::parse("v2.1.2.3").is_none());
    }

    #[test]
    fn version_gates_follow_the_spec() {
        let v = |t| RancherVersion::parse(t).unwrap();
        assert_eq!(v("v2.10.9").scheme(), RecordScheme::ConfigMap);
        assert_eq!(v("v2.11.0").scheme(), RecordScheme::SnapshotFiles);
        assert_eq!(v("v2.14.1").scheme(), RecordScheme::SnapshotFilesNamed);
        assert!(
            v("v2.11.1")
                .known_loop()
                .unwrap()
                .contains("already exists")
        );
        assert!(v("v2.11.3").known_loop().unwrap().contains("0x0"));
        assert!(v("v2.11.4").known_loop().is_none());
        assert!(v("v2.14.0").needs_machine_for_local());
        assert!(!v("v2.15.0").needs_machine_for_local());
        assert!(v("v2.10.3").node_case_sensitive());
        assert!(!v("v2.10.4").node_case_sensitive());
        assert!(v("v2.9.7").node_case_sensitive());
        assert!(v("v2.15.0").records_imported_clusters());
        assert!(!v("v2.14.9").records_imported_clusters());
    }
}
