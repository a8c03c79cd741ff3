//! k3s / RKE2 product versions as kubelets report them, and what each version implies:
//! which leader-lock objects it writes and whether a `<prog>` / `<prog>-etcd` split hurts it.

use std::cmp::Ordering;
use std::fmt;

use serde::Serialize;

use crate::distro::Distro;

mod affected_lines;
pub(crate) mod apiserver_addresses;
mod cert_monitor;
mod etcd_voter;
mod first_releases;
mod lock_style;
mod node_password_cleanup;
pub(crate) mod shapes;

pub(crate) use affected_lines::SplitImpact;
pub(crate) use cert_monitor::CERT_MONITOR;
pub(crate) use lock_style::LockStyle;
pub(crate) use node_password_cleanup::NODE_PASSWORD_CLEANUP;

/// A version from `status.nodeInfo.kubeletVersion`, e.g. `v1.29.4+k3s1`, `v1.31.2-rc2+k3s1`,
/// `v1.29.5+k3s-da2625d1` (an untagged commit build) or `v1.29.6+rke2r1`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProductVersion {
    raw: String,
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    /// `rc2` in `v1.31.2-rc2+k3s1`; empty for a release.
    pub pre: String,
    pub build: Build,
}

/// The build metadata after `+`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Build {
    /// `k3s1`, `k3s2`: a tagged k3s release.
    K3sRelease(u32),
    /// `k3s-da2625d1`: built from an untagged commit; the Kubernetes patch is the branch's, not a release's.
    K3sCommit(String),
    /// `rke2r1`: a tagged RKE2 release.
    Rke2Release(u32),
    /// Anything else (a kubelet that is not k3s or RKE2).
    Other(String),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{input:?} is not a Kubernetes version (expected e.g. v1.29.4+k3s1): {reason}")]
pub(crate) struct VersionError {
    input: String,
    reason: String,
}

impl ProductVersion {
    pub(crate) fn parse(input: &str) -> Result<ProductVersion, VersionError> {
        let err = |reason: &str| VersionError {
            input: input.to_string(),
            reason: reason.to_string(),
        };
        let trimmed = input.trim();
        let bare = trimmed.strip_prefix('v').unwrap_or(trimmed);
        let parsed = semver::Version::parse(bare).map_err(|e| err(&e.to_string()))?;
        let build_text = parsed.build.as_str();
        let build = if let Some(n) = build_text
            .strip_prefix("rke2r")
            .and_then(|n| n.parse().ok())
        {
            Build::Rke2Release(n)
        } else if let Some(commit) = build_text.strip_prefix("k3s-") {
            Build::K3sCommit(commit.to_string())
        } else if let Some(n) = build_text.strip_prefix("k3s").and_then(|n| n.parse().ok()) {
            Build::K3sRelease(n)
        } else {
            Build::Other(build_text.to_string())
        };
        Ok(ProductVersion {
            raw: trimmed.to_string(),
            major: parsed.major,
            minor: parsed.minor,
            patch: parsed.patch,
            pre: parsed.pre.as_str().to_string(),
            build,
        })
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.raw
    }

    pub(crate) fn distro(&self) -> Option<Distro> {
        match self.build {
            Build::K3sRelease(_) | Build::K3sCommit(_) => Some(Distro::K3s),
            Build::Rke2Release(_) => Some(Distro::Rke2),
            Build::Other(_) => None,
        }
    }

    /// Which objects this version's wrangler writes for a leader lock (wrangler `pkg/leader/leader.go`).
    pub(crate) fn lock_style(&self) -> LockStyle {
        LockStyle::for_minor(self.major, self.minor)
    }

    /// Whether this version runs the `<prog>-etcd` election when etcd is embedded. It came
    /// with k3s-io/k3s#6922 (Feb 2023, first in v1.26.2) and was backported to release-1.25,
    /// -1.24 and -1.23 (#6941, #6942, #6943, merged 2023-02-10; validated on branch builds
    /// `v1.24.10+k3s-74ed4bef` and `v1.23.16+k3s-52e7a47e`, so first released in the March 2023
    /// releases v1.25.7, v1.24.11 and v1.23.17). Lines before 1.23 never got it.
    pub(crate) fn has_etcd_lock(&self) -> Option<bool> {
        if self.major != 1 {
            return None;
        }
        match self.minor {
            m if m >= 27 => Some(true),
            26 => self.includes_patch(2),
            25 => self.includes_patch(7),
            24 => self.includes_patch(11),
            23 => self.includes_patch(17),
            _ => Some(false),
        }
    }

    /// Whether this build contains a change first released in patch `first` of its line.
    /// Releases, release candidates (cut from the branch that becomes the release) and RKE2
    /// releases (which build on k3s of the same patch) are certain. A commit build carries the
    /// branch's Kubernetes patch, which moves to P+1 only at the release commit, so
    /// `v1.29.5+k3s-…` lies anywhere between just before v1.29.5 and just before v1.29.6:
    /// only patches clear of the boundary are certain.
    fn includes_patch(&self, first: u64) -> Option<bool> {
        match self.build {
            Build::K3sCommit(_) if self.patch > first => Some(true),
            Build::K3sCommit(_) if self.patch + 1 < first => Some(false),
            Build::K3sCommit(_) => None,
            _ => Some(self.patch >= first),
        }
    }

    /// Whether the snapshot controller only writes entries for CRs with `spec.metadata`
    /// (k3s-io/k3s#8835, `pkg/etcd/snapshot_controller.go`): from v1.28.4, v1.27.8 and v1.26.11, every build of them
    /// (validated on v1.28.4-rc1+k3s1, v1.27.8-rc1+k3s1 and v1.26.11-rc1+k3s1 in
    /// k3s-io/k3s#8834, #8858, #8859), and in every 1.29+. The 1.25 backport (#8860) was never
    /// validated, so v1.25.16 stays `None` and neither verdict is forced there.
    pub(crate) fn entries_need_metadata(&self) -> Option<bool> {
        if self.major != 1 || !self.has_snapshot_crds() {
            return None;
        }
        match self.minor {
            m if m >= 29 => Some(true),
            28 => self.includes_patch(4),
            27 => self.includes_patch(8),
            26 => self.includes_patch(11),
            25 if self.patch < 16 => Some(false),
            _ => None,
        }
    }

    /// How this version's `encoding/json` escapes `\b` and `\f`: the Go release that built it.
    /// k3s builds with the Go of upstream Kubernetes for each release (`Dockerfile.dapper`):
    /// Go 1.21 up to v1.29.6 (v1.29.4 and v1.29.6 are Go 1.21 builds), Go 1.22 from v1.29.7 and
    /// in all of 1.30; upstream moved release-1.28 and -1.27 to Go 1.22 in the same July 2024
    /// patch releases (v1.28.12, v1.27.16: inferred, not read from k3s's tags), and lines up to
    /// 1.26 ended before Go 1.22. `None` for a commit build next to a boundary or a kubelet that
    /// is not k3s or RKE2.
    pub(crate) fn go_escaping(&self) -> Option<shapes::GoEscaping> {
        use shapes::GoEscaping;
        if self.major != 1 || self.distro().is_none() {
            return None;
        }
        let first_go122 = match self.minor {
            m if m >= 30 => return Some(GoEscaping::Go122),
            29 => 7,
            28 => 12,
            27 => 16,
            _ => return Some(GoEscaping::BeforeGo122),
        };
        self.includes_patch(first_go122).map(|go122| {
            if go122 {
                GoEscaping::Go122
            } else {
                GoEscaping::BeforeGo122
            }
        })
    }

    /// Which `s3Config` shape this version's controller writes: the embedded S3 config from
    /// the "etcd s3 config secret" change (first in v1.29.7; the other lines' July 2024
    /// releases are inferred).
    pub(crate) fn s3_config_shape(&self) -> shapes::S3Shape {
        use shapes::S3Shape;
        let embedded = self.major == 1
            && match self.minor {
                m if m >= 31 => true,
                30 => self.patch >= 3,
                29 => self.patch >= 7,
                28 => self.patch >= 12,
                27 => self.patch >= 16,
                _ => false,
            };
        if embedded {
            S3Shape::Embedded
        } else {
            S3Shape::Legacy
        }
    }

    fn order_key(&self) -> (u64, u64, u64, bool, &str, u32) {
        let release = match self.build {
            Build::K3sRelease(n) | Build::Rke2Release(n) => n,
            _ => 0,
        };
        (
            self.major,
            self.minor,
            self.patch,
            self.pre.is_empty(),
            self.pre.as_str(),
            release,
        )
    }
}

impl Ord for ProductVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        self.order_key()
            .cmp(&other.order_key())
            .then_with(|| self.raw.cmp(&other.raw))
    }
}

impl PartialOrd for ProductVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for ProductVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.raw)
    }
}

impl Serialize for ProductVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.raw)
    }
}

/// Serialised as the kubelet version string it was read from.
impl schemars::JsonSchema for ProductVersion {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ProductVersion".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "A k3s or RKE2 version as the kubelet reports it, e.g. v1.29.4+k3s1"
        })
    }
}

pub(crate) fn release_name(distro: Distro, minor: u64, patch: u64) -> String {
    match distro {
        Distro::K3s => format!("v1.{minor}.{patch}+k3s1"),
        Distro::Rke2 => format!("v1.{minor}.{patch}+rke2r1"),
    }
}

mod snapshot_features;
pub(crate) use snapshot_features::S3RetentionRule;

#[cfg(test)]
mod tests;
