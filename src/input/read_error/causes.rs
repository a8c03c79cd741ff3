//! What a read's failure was caused by, beyond the HTTP status: an answer too large, a
//! credential plugin that gave nothing, a server whose list pages never end. The transport
//! and the readers raise these; [`super::transport_cause`] tells them apart.

use std::time::Duration;

use super::ReadError;
use crate::input::limits::{MOST_ITEMS, MOST_PAGES};

/// An answer past [`MOST_BODY_BYTES`](crate::input::limits::MOST_BODY_BYTES).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the answer is larger than {} MiB, more than any answer k3sdoctor reads", .limit / (1024 * 1024))]
pub(crate) struct BodyTooLarge {
    pub limit: u64,
}

/// A cluster behind Rancher that gave no answer within `--cluster-timeout` (Rancher takes
/// 20–40 s to say that its agent is disconnected).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("no answer within {}", crate::age::short(jiff::SignedDuration::try_from(*.limit).unwrap_or_default()))]
pub(crate) struct ClusterSilent {
    pub limit: Duration,
}

/// Why a list was given up on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.describe())]
pub(crate) enum PagingLie {
    TooManyItems,
    TooManyPages,
    RepeatedContinue,
}

impl PagingLie {
    /// The one-line error for the list `action` at `server`.
    pub(crate) fn refusal(&self, action: &str, server: &str) -> ReadError {
        ReadError::new(format!(
            "cannot {action} at {server}: {}; check what answers at that address (a proxy or a \
             broken API server), and retry when it answers a real list",
            self.describe()
        ))
    }

    /// The reason, after "cannot <action> at <server>: ".
    pub(crate) fn describe(&self) -> String {
        match self {
            PagingLie::TooManyItems => format!(
                "the list holds more than {MOST_ITEMS} items, more than k3sdoctor reads in one list"
            ),
            PagingLie::TooManyPages => format!(
                "the list did not end after {MOST_PAGES} pages (the server keeps sending a continue token)"
            ),
            PagingLie::RepeatedContinue => {
                "the server sent the same continue token twice, so its pages would never end".into()
            }
        }
    }
}

/// Why a plugin gave no credential, in words that are safe to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginFailure {
    /// It could not be started (not installed, not executable).
    NotStarted { name: String, why: String },
    /// It did not finish within the request timeout (it waits for a login, or hangs).
    TimedOut { name: String, limit: Duration },
    /// It exited unsuccessfully; `stderr` is its first non-empty stderr line, redacted.
    Failed {
        name: String,
        status: String,
        stderr: Option<String>,
    },
    /// It exited 0 but printed no ExecCredential with a token or a client certificate.
    NoCredential { name: String, why: String },
}

impl PluginFailure {
    pub fn message(&self) -> String {
        match self {
            PluginFailure::NotStarted { name, why } => format!(
                "cannot run the credential plugin {name} ({why}); install it, or fix the command in the \
                 kubeconfig's users[].user.exec"
            ),
            PluginFailure::TimedOut { name, limit } => format!(
                "the credential plugin {name} did not answer within {}; run it by hand to see what it waits \
                 for (e.g. a login), then retry, or raise --request-timeout",
                crate::age::short(jiff::SignedDuration::try_from(*limit).unwrap_or_default())
            ),
            PluginFailure::Failed {
                name,
                status,
                stderr,
            } => {
                let said = stderr
                    .as_deref()
                    .map(|line| format!(": {line}"))
                    .unwrap_or_else(|| " and printed nothing on stderr".to_string());
                format!(
                    "the credential plugin {name} failed ({status}){said}; run it by hand to see why (a login \
                     may have expired)"
                )
            }
            PluginFailure::NoCredential { name, why } => format!(
                "the credential plugin {name} {why}; run it by hand and check that it prints an ExecCredential \
                 with status.token or a client certificate"
            ),
        }
    }
}

impl std::fmt::Display for PluginFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

/// Refreshing a token happens inside a request: the failure travels as the request's error.
impl std::error::Error for PluginFailure {}

impl From<PluginFailure> for ReadError {
    fn from(failure: PluginFailure) -> ReadError {
        ReadError::new(failure.message())
    }
}
