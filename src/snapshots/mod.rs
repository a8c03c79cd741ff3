//! Repairs of the snapshot ConfigMap: `snapshots backfill` (plan, apply) and `snapshots restore`
//! (plan, and the foreign entries of a backup), and the backup file both save first.

pub(crate) mod backfill_plan;
pub(crate) mod backup_file;
pub(crate) mod repair_results;
pub(crate) mod restore_foreign;
pub(crate) mod restore_plan;
