//! Admission webhooks in the path of the control plane's own writes (spec
//! upgrades-admission.md §3): which writes a webhook's rules and selectors match, whether its
//! backend can answer, and the findings `check` gives about it.

pub(crate) mod control_plane_writes;
pub(crate) mod rule_match;
pub(crate) mod webhooks;
