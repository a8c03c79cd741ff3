//! The `events.k8s.io/v1` Event every repair that writes leaves in kube-system: built
//! (`repair_event`) and recorded (`event_apply`).

pub(crate) mod event_apply;
pub(crate) mod repair_event;
