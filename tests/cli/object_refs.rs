//! Findings address their objects as the API does (`objectRef`, `objectRefs`), complete
//! where the human text shows a few.

use serde_json::Value;

use crate::support::harness::{k3sdoctor, repo_path};
use crate::support::objects::read_dump_objects;

const DUMP: &str = "tests/fixtures/split-cluster";

fn on_dump(args: &[&str]) -> crate::support::harness::Output {
    let dump = repo_path(DUMP).display().to_string();
    k3sdoctor([&["--from-file", dump.as_str()][..], args].concat()).run()
}

fn all_findings(report: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    for f in report["findings"].as_array().unwrap() {
        out.push(f.clone());
        if let Some(children) = f["children"].as_array() {
            out.extend(children.iter().cloned());
        }
    }
    out
}

/// Whether the dump holds the object a reference names.
fn in_dump(objects: &[Value], reference: &Value) -> bool {
    objects.iter().any(|o| {
        o["apiVersion"] == reference["apiVersion"]
            && o["kind"] == reference["kind"]
            && o["metadata"]["name"] == reference["name"]
            && (o["metadata"]["namespace"] == reference["namespace"]
                || (reference.get("namespace").is_none()
                    && o["metadata"].get("namespace").is_none()))
    })
}

#[test]
fn every_reference_names_an_object_in_the_cluster_and_lists_are_complete() {
    let objects = read_dump_objects(&repo_path(DUMP));
    let report: Value = on_dump(&["check", "-o", "json"]).json();
    let findings = all_findings(&report);
    for f in &findings {
        if let Some(r) = f.get("objectRef") {
            assert!(in_dump(&objects, r), "{r} is not in the dump");
            let namespace = r["namespace"]
                .as_str()
                .map(|n| format!("{n}/"))
                .unwrap_or_default();
            assert_eq!(
                f["object"].as_str().unwrap(),
                format!(
                    "{} {namespace}{}",
                    r["kind"].as_str().unwrap(),
                    r["name"].as_str().unwrap()
                )
            );
        }
        for r in f["objectRefs"].as_array().into_iter().flatten() {
            assert!(in_dump(&objects, r), "{r} is not in the dump");
        }
    }
    let split = findings
        .iter()
        .find(|f| f["code"] == "lease-split")
        .unwrap();
    assert_eq!(split["objectRef"]["kind"], "Lease");

    // objectRefs has all fifteen, the list's missing rows, and so has the message here; the
    // table shows five and says where the rest are.
    let missing = findings
        .iter()
        .find(|f| f["code"] == "snapshot-missing-from-configmap")
        .unwrap();
    let message = missing["message"].as_str().unwrap();
    assert!(!message.contains("more"), "{message}");
    let mut referenced: Vec<&str> = missing["objectRefs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    referenced.sort();
    let list: Value = on_dump(&["snapshots", "list", "-o", "json"]).json();
    let mut listed: Vec<&str> = list["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["state"] == "missing")
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    listed.sort();
    assert_eq!(referenced.len(), 15);
    assert_eq!(referenced, listed);
    assert!(referenced.iter().all(|name| message.contains(name)));
    let table = on_dump(&["check"]);
    table.stdout_has(
        "local-etcd-snapshot-prod-k3s-1-1717156800-7ae823 (and 10 more; -o json lists all)",
    );
    assert!(!table.stdout.contains(referenced[14]), "{}", table.stdout);
}

#[test]
fn yaml_carries_the_same_references() {
    let json: Value = on_dump(&["leases", "-o", "json"]).json();
    let yaml: Value = serde_yaml_ng::from_str(&on_dump(&["leases", "-o", "yaml"]).stdout).unwrap();
    assert_eq!(json["findings"], yaml["findings"]);
    assert!(json["findings"][0]["objectRef"].is_object());
}

/// Lists of ConfigMap keys (no API objects) are complete in JSON as well: the orphaned
/// entries' message names every key the diff lists.
#[test]
fn key_lists_are_complete_in_json_and_cut_in_the_table() {
    let report: Value = on_dump(&["check", "-o", "json"]).json();
    let orphaned = all_findings(&report)
        .into_iter()
        .find(|f| f["code"] == "snapshot-orphaned-in-configmap")
        .unwrap();
    let message = orphaned["message"].as_str().unwrap().to_string();
    let diff: Value = on_dump(&["snapshots", "diff", "-o", "json"]).json();
    let keys: Vec<&str> = diff["orphaned"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys.len(), 6);
    assert!(keys.iter().all(|k| message.contains(k)), "{message}");
    on_dump(&["check"]).stdout_has("(and 1 more; -o json lists all)");
}
