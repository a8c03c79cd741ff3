//! `leases follow`: moving a lock's holder to the server that should hold it. Pure planning and
//! judging (`follow_plan` with its target, `follow_target`, and its impact, `follow_impact`;
//! `lock_edit`, `split_after_move`, `follow_rejudge`, `takeover_judge`, `election_timing`), the
//! preconditioned writes and their verification (`follow_apply`, `follow_verify`), and its
//! Event (`follow_event`).

pub mod election_timing;
pub mod follow_apply;
pub mod follow_event;
mod follow_impact;
pub mod follow_plan;
pub mod follow_rejudge;
mod follow_request;
mod follow_target;
pub mod follow_verify;
mod lock_edit;
pub mod repair_result;
mod split_after_move;
mod takeover_judge;
