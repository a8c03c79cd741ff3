//! `leases follow`: moving a lock's holder to the server that should hold it. Pure planning and
//! judging (`follow_plan` with its target, `follow_target`, and its impact, `follow_impact`;
//! `lock_edit`, `split_after_move`, `follow_rejudge`, `takeover_judge`, `election_timing`), what a move
//! works on and produces (`lock_objects`), and its Event (`follow_event`). The writes and the
//! watch that verifies them are I/O, in `commands/` (`lock_writes`, `takeover_watch`).

pub mod election_timing;
pub mod follow_event;
mod follow_impact;
pub mod follow_plan;
pub mod follow_rejudge;
mod follow_request;
mod follow_target;
pub mod lock_edit;
pub mod lock_objects;
pub mod repair_result;
mod split_after_move;
pub mod takeover_judge;
