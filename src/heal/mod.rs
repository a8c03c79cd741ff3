//! `serve --heal`: the pure state machine (`heal_policy`) and gates (`heal_gates`), the guardrails
//! kept on the heal Lease (`guardrail_record`, read and written by `guardrail_keeper`), the
//! election among replicas (`heal_leader`) and the heal's metrics.

pub mod guardrail_keeper;
pub mod guardrail_record;
pub mod heal_gates;
pub mod heal_leader;
pub mod heal_metrics;
pub mod heal_policy;
