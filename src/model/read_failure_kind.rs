//! The kinds of read failure a fleet report counts, told apart where the failure arises.

/// Why a cluster could not be read, in the words a fleet report uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ReadFailureKind {
    /// Nothing answered: refused, timed out, reset, or the host does not resolve.
    Unreachable,
    Tls,
    /// 401: the credentials were rejected.
    Unauthorized,
    /// 403: the credentials lack a permission.
    Forbidden,
    /// Anything else: a bad kubeconfig, a failing API server, an unexpected answer.
    #[default]
    Other,
}

/// A read that failed, as a fleet report shows it: the one line, its kind, and the request
/// that was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReadFailure {
    pub message: String,
    pub kind: ReadFailureKind,
    /// What was being done (`list nodes`), when a request failed.
    pub action: Option<String>,
}
