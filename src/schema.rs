//! JSON Schemas (draft 2020-12) of every `kind` k3sdoctor prints, generated from the report
//! types themselves so they cannot drift; committed under `schema/` for consumers.

use schemars::JsonSchema;
use schemars::generate::{Contract, SchemaSettings};
use serde_json::{Value, json};

use crate::follow::repair_result::RepairResult;
use crate::report::{
    API_VERSION, CheckReport, FleetMemberReport, FleetReport, LeaseReport, SnapshotReport,
};
use crate::snapshots::repair_results::{BackfillResult, RestoreResult};

/// Every kind with its schema, in the order the README lists them.
pub fn all() -> Vec<(&'static str, Value)> {
    vec![
        (
            "LeaseReport",
            of::<LeaseReport>(
                "LeaseReport",
                "`k3sdoctor leases`: who holds each leader lock, whether it is fresh, and the findings.",
            ),
        ),
        (
            "SnapshotList",
            of::<SnapshotReport>(
                "SnapshotList",
                "`k3sdoctor snapshots list`: every ETCDSnapshotFile joined with its ConfigMap entry \
                 (`snapshots`), and every entry without an ETCDSnapshotFile (`orphaned`).",
            ),
        ),
        (
            "SnapshotDiff",
            of::<SnapshotReport>(
                "SnapshotDiff",
                "`k3sdoctor snapshots diff`: only the differences. `snapshots` holds the \
                 ETCDSnapshotFiles whose entry is missing, stale or pruned for size (never the \
                 ones that are in order: see SnapshotList), `orphaned` the entries without one.",
            ),
        ),
        (
            "BackfillResult",
            of::<BackfillResult>(
                "BackfillResult",
                "`k3sdoctor snapshots backfill`: the plan, and what was written.",
            ),
        ),
        (
            "RestoreResult",
            of::<RestoreResult>(
                "RestoreResult",
                "`k3sdoctor snapshots restore`: what the backup puts back, and what was written.",
            ),
        ),
        (
            "RepairResult",
            of::<RepairResult>(
                "RepairResult",
                "`k3sdoctor leases follow`: the plan, the writes and the verified takeover.",
            ),
        ),
        (
            "CheckReport",
            of::<CheckReport>(
                "CheckReport",
                "`k3sdoctor check`: every analyser over one read, findings linked to their cause.",
            ),
        ),
        (
            "LeaseChange",
            of::<crate::render::lease_changes::LeaseChangeDocument<'static>>(
                "LeaseChange",
                "`k3sdoctor leases --watch -o json|yaml`: one document per change of a lock, after \
                 the first LeaseReport.",
            ),
        ),
        (
            "FleetReport",
            of::<FleetReport<FleetMemberReport>>(
                "FleetReport",
                "`k3sdoctor check|leases` over several contexts: one entry per cluster, worst first, \
                 each with its outcome and, when it was read, its CheckReport or LeaseReport.",
            ),
        ),
        (
            "Version",
            of::<crate::build_info::BuildInfo>(
                "Version",
                "`k3sdoctor version -o json|yaml`: the version, the git commit and tree state, the \
                 build date, rustc, the target and the enabled features.",
            ),
        ),
    ]
}

fn of<T: JsonSchema>(kind: &str, description: &str) -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    // What k3sdoctor prints, not what it would accept: a field left out when empty is
    // optional.
    settings.contract = Contract::Serialize;
    let mut schema = settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    schema["title"] = json!(kind);
    schema["description"] = json!(format!(
        "{description} Within {API_VERSION} fields are only ever added, never renamed or removed."
    ));
    // One Rust type serves several kinds; the schema pins the one it describes.
    schema["properties"]["apiVersion"] = json!({"const": API_VERSION});
    schema["properties"]["kind"] = json!({"const": kind});
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_pins_its_kind_and_requires_the_envelope() {
        for (kind, schema) in all() {
            assert_eq!(
                schema["$schema"],
                "https://json-schema.org/draft/2020-12/schema"
            );
            assert_eq!(schema["properties"]["kind"]["const"], kind);
            let required = schema["required"].as_array().unwrap();
            assert!(required.contains(&json!("apiVersion")) && required.contains(&json!("kind")));
        }
    }
}
