//! Every structured output validates against the committed schema of its kind, in JSON and
//! in YAML. (Every other test that reads `-o json` validates it too, in `Output::json`.)

use serde_json::Value;

use crate::support::harness::{assert_matches_schema, k3sdoctor, repo_path};

#[test]
fn every_kind_on_the_bundled_dump_matches_its_schema_in_json_and_yaml() {
    let dump = repo_path("tests/fixtures/split-cluster");
    let mut kinds = Vec::new();
    for args in [
        &["leases"][..],
        &["snapshots", "list"],
        &["snapshots", "diff"],
        &["snapshots", "backfill", "--prune"],
        &["leases", "follow"],
        &["check"],
    ] {
        for format in ["json", "yaml"] {
            let out = k3sdoctor(
                ["--from-file", dump.to_str().unwrap(), "-o", format]
                    .into_iter()
                    .chain(args.iter().copied()),
            )
            .run();
            let doc: Value = if format == "json" {
                serde_json::from_str(&out.stdout).unwrap()
            } else {
                serde_yaml_ng::from_str(&out.stdout).unwrap()
            };
            assert_matches_schema(&doc, &format!("{args:?} -o {format}"));
            kinds.push(doc["kind"].as_str().unwrap().to_string());
        }
    }
    kinds.dedup();
    assert_eq!(
        kinds,
        [
            "LeaseReport",
            "SnapshotList",
            "SnapshotDiff",
            "BackfillResult",
            "RepairResult",
            "CheckReport"
        ]
    );
}

/// The validation can fail: a report missing a required field, or with a field of the wrong
/// type, is rejected.
#[test]
#[should_panic(expected = "does not match schema/LeaseReport.json")]
fn a_report_that_breaks_its_schema_is_caught() {
    let dump = repo_path("tests/fixtures/split-cluster");
    let out = k3sdoctor([
        "--from-file",
        dump.to_str().unwrap(),
        "leases",
        "-o",
        "json",
    ])
    .run();
    let mut doc: Value = serde_json::from_str(&out.stdout).unwrap();
    doc["locks"][0]["renewedSecondsAgo"] = Value::from("one second");
    assert_matches_schema(&doc, "a tampered LeaseReport");
}
