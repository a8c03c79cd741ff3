//! Repairs of the snapshot ConfigMap: `snapshots backfill` (plan, apply) and `snapshots restore`
//! (plan, and the foreign entries of a backup), and the backup file both save first.

pub mod backfill_plan;
pub mod backup_file;
pub mod repair_results;
pub mod restore_foreign;
pub mod restore_plan;
