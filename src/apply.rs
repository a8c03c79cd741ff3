//! What every write to the cluster shares (the apply halves of `leases follow`, `snapshots
//! backfill|restore`, `serve --heal` and their Events): the field manager it writes as, and how
//! a preconditioned write fails.

use crate::input::ReadError;

/// `fieldManager` of every write, so `managedFields` show what k3sdoctor changed.
pub const FIELD_MANAGER: &str = "k3sdoctor";

/// Why a write did not go through.
#[derive(Debug)]
pub enum WriteError {
    /// 409: the object changed since it was read.
    Conflict,
    Other(ReadError),
}
