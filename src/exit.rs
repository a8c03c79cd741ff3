//! The one place outcomes become process exit codes (the table in docs/exit-codes.md).

/// Every exit code k3sdoctor documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Healthy, no differences, or a repair done and verified.
    Healthy = 0,
    /// Findings at or above `--fail-on` remain.
    Findings = 1,
    /// Usage error or refused request.
    Refused = 2,
    /// Could not read the cluster or the input.
    ReadFailed = 3,
    /// A repair was attempted but not completed or not verified.
    RepairIncomplete = 4,
}

impl Exit {
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The verdict of a report: 1 when findings at or above `--fail-on` remain, else 0.
    pub fn verdict(failing: bool) -> Exit {
        if failing {
            Exit::Findings
        } else {
            Exit::Healthy
        }
    }
}

/// A failure that ends the run, with the exit code it maps to.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Failure {
    #[error(transparent)]
    Read(#[from] crate::input::ReadError),
    #[error("{0}")]
    Refused(String),
    /// A repair was attempted but not completed or not verified.
    #[error("{0}")]
    Incomplete(String),
}

impl Failure {
    pub(crate) fn exit(&self) -> Exit {
        match self {
            Failure::Read(_) => Exit::ReadFailed,
            Failure::Refused(_) => Exit::Refused,
            Failure::Incomplete(_) => Exit::RepairIncomplete,
        }
    }

    /// The cause chain, for `-v`.
    pub(crate) fn detail(&self) -> Option<&str> {
        match self {
            Failure::Read(e) => e.detail.as_deref(),
            Failure::Refused(_) | Failure::Incomplete(_) => None,
        }
    }
}
