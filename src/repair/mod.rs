//! Repairs: pure planning (`*_plan`, `lock_edit`) and the apply/verify steps that
//! talk to the cluster (`*_apply`).

pub mod access_review;
pub mod backfill_apply;
pub mod backfill_plan;
pub mod backup_file;
pub mod election_timing;
pub mod event_apply;
pub mod follow_apply;
pub mod follow_event;
pub mod follow_plan;
pub mod follow_rejudge;
pub mod follow_verify;
pub mod heal_gates;
pub mod lock_edit;
pub mod repair_event;
pub mod restore_foreign;
pub mod restore_plan;
pub mod split_after_move;
pub mod takeover_judge;
