//! Upgrades: system-upgrade-controller's Plans that left a node half-upgraded
//! (`upgrade-plan-stuck`) and kubelets and apiservers outside the version-skew policy
//! (`version-skew`).

mod job_deadline;
mod next_step;
pub(crate) mod plan_stuck;
pub(crate) mod version_skew;
