//! `serve --heal`'s pure part: the state machine (`heal_policy`) and gates (`heal_gates`), the
//! guardrails kept on the heal Lease (`guardrail_record`; commands/serve_heal reads and writes
//! it, and runs the election among replicas) and the heal's metrics.

pub(crate) mod guardrail_record;
pub(crate) mod heal_gates;
pub(crate) mod heal_metrics;
pub(crate) mod heal_policy;
