//! Which cluster this is: the kube-system Namespace's UID, which backups record and a
//! restore checks.

/// This cluster's identity, or why it is not known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ClusterIdentity {
    Known(String),
    /// Not readable (e.g. a role without `get namespaces`): restores then need `--force`.
    Unknown(String),
}

impl ClusterIdentity {
    pub(crate) fn id(&self) -> Option<&str> {
        match self {
            ClusterIdentity::Known(id) => Some(id),
            ClusterIdentity::Unknown(_) => None,
        }
    }
}
