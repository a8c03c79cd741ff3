//! `leases follow`'s report (`kind: RepairResult`): the plan, the writes and the verified
//! takeover.

use serde::Serialize;

use super::follow_plan::FollowOutcome;
use super::lock_objects::{Verification, WrittenCopy};
use crate::diagnose::leases::LeaseAnalysis;
use crate::report::API_VERSION;

/// What `leases follow` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum RepairOutcome {
    /// Nothing to do.
    Aligned,
    /// The plan was shown; nothing written (no `--fix`).
    Planned,
    /// The user said no; nothing written.
    Declined,
    /// Written, not waited for (`--no-wait`).
    Written,
    /// Written, and the target renewed the lock itself.
    Verified,
    /// Written, but the takeover was not seen.
    NotVerified,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RepairResult {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub outcome: RepairOutcome,
    pub plan: FollowOutcome,
    pub written: Vec<WrittenCopy>,
    pub verification: Option<Verification>,
    /// The `leases` verdict read after the repair.
    pub after: Option<LeaseAnalysis>,
}

impl RepairResult {
    pub(crate) fn new(outcome: RepairOutcome, plan: FollowOutcome) -> RepairResult {
        RepairResult {
            api_version: API_VERSION,
            kind: "RepairResult",
            outcome,
            plan,
            written: Vec::new(),
            verification: None,
            after: None,
        }
    }
}
