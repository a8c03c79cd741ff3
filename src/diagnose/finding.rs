//! A finding: one thing wrong (or worth knowing) about the cluster, with what to do about it.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn label(self) -> &'static str {
        match self {
            Severity::Info => "INFO",
            Severity::Warning => "WARNING",
            Severity::Error => "ERROR",
        }
    }
}

/// Stable finding codes (design.md §4): add codes when needed, never rename one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingCode {
    LeaseSplit,
    LeaseExpired,
    LeaseReleased,
    LeaseMissing,
    LeaseHolderUnknown,
    LeaseHolderNotReady,
    LeaseCopiesDisagree,
    LeaseRecordMalformed,
    MixedVersions,
    SnapshotMissingFromConfigmap,
    SnapshotOrphanedInConfigmap,
    SnapshotStaleInConfigmap,
    SnapshotPrunedForSize,
    SnapshotControllerIdle,
    SnapshotNameDigestMismatch,
    ConfigmapLegacyFormat,
    DumpIncomplete,
}

impl FindingCode {
    pub fn as_str(self) -> &'static str {
        match self {
            FindingCode::LeaseSplit => "lease-split",
            FindingCode::LeaseExpired => "lease-expired",
            FindingCode::LeaseReleased => "lease-released",
            FindingCode::LeaseMissing => "lease-missing",
            FindingCode::LeaseHolderUnknown => "lease-holder-unknown",
            FindingCode::LeaseHolderNotReady => "lease-holder-not-ready",
            FindingCode::LeaseCopiesDisagree => "lease-copies-disagree",
            FindingCode::LeaseRecordMalformed => "lease-record-malformed",
            FindingCode::MixedVersions => "mixed-versions",
            FindingCode::SnapshotMissingFromConfigmap => "snapshot-missing-from-configmap",
            FindingCode::SnapshotOrphanedInConfigmap => "snapshot-orphaned-in-configmap",
            FindingCode::SnapshotStaleInConfigmap => "snapshot-stale-in-configmap",
            FindingCode::SnapshotPrunedForSize => "snapshot-pruned-for-size",
            FindingCode::SnapshotControllerIdle => "snapshot-controller-idle",
            FindingCode::SnapshotNameDigestMismatch => "snapshot-name-digest-mismatch",
            FindingCode::ConfigmapLegacyFormat => "configmap-legacy-format",
            FindingCode::DumpIncomplete => "dump-incomplete",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub severity: Severity,
    pub code: FindingCode,
    /// The object the finding is about, e.g. `Lease kube-system/k3s` or `Node server-1`.
    pub object: String,
    pub message: String,
    /// The next command or action; empty when there is nothing to do.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub remediation: String,
}

impl Finding {
    pub fn new(
        severity: Severity,
        code: FindingCode,
        object: impl Into<String>,
        message: impl Into<String>,
    ) -> Finding {
        Finding {
            severity,
            code,
            object: object.into(),
            message: message.into(),
            remediation: String::new(),
        }
    }

    pub fn fix(mut self, remediation: impl Into<String>) -> Finding {
        self.remediation = remediation.into();
        self
    }
}

/// Most severe first; stable otherwise, so related findings stay together.
pub fn rank(findings: &mut [Finding]) {
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
}

/// The threshold of `--fail-on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    Error,
    Warning,
    Never,
}

impl FailOn {
    pub fn is_failure(self, findings: &[Finding]) -> bool {
        let threshold = match self {
            FailOn::Error => Severity::Error,
            FailOn::Warning => Severity::Warning,
            FailOn::Never => return false,
        };
        findings.iter().any(|f| f.severity >= threshold)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_serialise_as_their_stable_names() {
        for code in [
            FindingCode::LeaseSplit,
            FindingCode::LeaseCopiesDisagree,
            FindingCode::DumpIncomplete,
        ] {
            assert_eq!(serde_json::to_value(code).unwrap(), code.as_str());
        }
    }

    #[test]
    fn fail_on_thresholds() {
        let warn = [Finding::new(
            Severity::Warning,
            FindingCode::MixedVersions,
            "x",
            "y",
        )];
        assert!(!FailOn::Error.is_failure(&warn));
        assert!(FailOn::Warning.is_failure(&warn));
        assert!(!FailOn::Never.is_failure(&warn));
        assert!(!FailOn::Warning.is_failure(&[]));
    }
}
