//! What every write to the cluster shares (the apply halves of `leases follow`, `snapshots
//! backfill|restore`, `serve --heal` and their Events): the field manager it writes as, how
//! a preconditioned write fails, and what a write whose answer was lost did.

pub(crate) mod landed;

use crate::input::ReadError;

/// `fieldManager` of every write, so `managedFields` show what k3sdoctor changed.
pub(crate) const FIELD_MANAGER: &str = "k3sdoctor";

/// Why a write did not go through.
#[derive(Debug)]
pub(crate) enum WriteError {
    /// 409: the object changed since it was read.
    Conflict,
    /// Refused before anything was stored: a 4xx answer, or a request never sent.
    Other(ReadError),
    /// No answer proves it was refused (a 5xx, a reset, a timeout, an unreadable 2xx): the
    /// API server may have stored it, so only reading the object again tells.
    Unanswered(ReadError),
}

impl WriteError {
    /// `action` names the write (`update lease kube-system/k3s`). A dry run stores nothing,
    /// so however it fails it is refused.
    pub(crate) fn from_kube(
        err: &kube::Error,
        action: &str,
        server: &str,
        dry_run: bool,
    ) -> WriteError {
        match err {
            kube::Error::Api(status) if status.code == 409 => WriteError::Conflict,
            kube::Error::Api(status) if (400..500).contains(&status.code) => {
                WriteError::Other(ReadError::from_kube(err, action, server))
            }
            _ if dry_run => WriteError::Other(ReadError::from_kube(err, action, server)),
            _ => WriteError::Unanswered(ReadError::from_kube(err, action, server)),
        }
    }
}
