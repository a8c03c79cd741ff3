//! `serve --heal`: the pure state machine (`heal_policy`) and gates (`heal_gates`), the guardrails
//! kept on the heal Lease (`guardrail_record`, read and written by `guardrail_keeper`), the
//! election among replicas (`heal_leader`) and the heal's metrics.

pub(crate) mod guardrail_keeper;
pub(crate) mod guardrail_record;
pub(crate) mod heal_gates;
pub(crate) mod heal_leader;
pub(crate) mod heal_metrics;
pub(crate) mod heal_policy;
