//! What a person asks `leases follow` for, and why a plan for it cannot be made.

#[derive(Debug, Clone, Default)]
pub(crate) struct FollowRequest {
    /// `--lease`: the lock to move (default `<prog>`).
    pub lease: Option<String>,
    /// `--to`: a node name or hostname (default: the holder of the other lock).
    pub to: Option<String>,
    /// `--force`: skip the target and quorum checks (never the permission check).
    pub force: bool,
}

/// Why a plan cannot be made; exit 2, nothing written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Refusal(pub String);
