//! `leases follow`: moving a lock's holder to the server that should hold it. Pure planning and
//! judging (`follow_plan` with its target, `follow_target`, and its impact, `follow_impact`;
//! `lock_edit`, `split_after_move`, `follow_rejudge`, `takeover_judge`, `election_timing`), what a move
//! works on and produces (`lock_objects`), and its Event (`follow_event`). The writes and the
//! watch that verifies them are I/O, in `commands/` (`lock_writes`, `takeover_watch`).

pub(crate) mod election_timing;
pub(crate) mod follow_event;
mod follow_impact;
pub(crate) mod follow_plan;
pub(crate) mod follow_rejudge;
mod follow_request;
mod follow_target;
pub(crate) mod lock_edit;
pub(crate) mod lock_objects;
pub(crate) mod repair_result;
mod split_after_move;
pub(crate) mod takeover_judge;
