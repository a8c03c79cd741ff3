//! Which objects a version's leader lock lives in.

use serde::Serialize;

/// Which objects a leader lock lives in (wrangler `pkg/leader/leader.go`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum LockStyle {
    /// ≤ 1.23: annotation `control-plane.alpha.kubernetes.io/leader` on a ConfigMap.
    ConfigMap,
    /// 1.24–1.27: client-go MultiLock, ConfigMap first and Lease second, both kept in step.
    ConfigMapAndLease,
    /// ≥ 1.28: a Lease only; a ConfigMap left over from an upgrade is stale and ignored.
    Lease,
}

impl LockStyle {
    pub(crate) fn for_minor(major: u64, minor: u64) -> LockStyle {
        match (major, minor) {
            (1, m) if m <= 23 => LockStyle::ConfigMap,
            (1, m) if m <= 27 => LockStyle::ConfigMapAndLease,
            _ => LockStyle::Lease,
        }
    }

    pub(crate) fn uses_lease(self) -> bool {
        !matches!(self, LockStyle::ConfigMap)
    }

    pub(crate) fn uses_configmap(self) -> bool {
        !matches!(self, LockStyle::Lease)
    }

    pub(crate) fn describe(self) -> &'static str {
        match self {
            LockStyle::ConfigMap => "ConfigMap annotation (1.23 and older)",
            LockStyle::ConfigMapAndLease => "ConfigMap + Lease multilock (1.24-1.27)",
            LockStyle::Lease => "Lease (1.28 and newer)",
        }
    }
}
