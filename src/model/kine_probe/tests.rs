use serde_json::json;

use super::*;

fn job(rv: &str, created: &str, managed: &[&str]) -> Value {
    json!({"metadata": {
        "name": "helm-install-traefik", "namespace": "kube-system",
        "resourceVersion": rv, "creationTimestamp": created,
        "managedFields": managed.iter().map(|t| json!({"manager": "k3s", "time": t})).collect::<Vec<_>>(),
    }})
}

#[test]
fn a_revision_is_dated_by_its_newest_write() {
    let written = WrittenRevision::of_json(
        "Job",
        &job(
            "812",
            "2026-01-01T00:00:00Z",
            &["2026-01-01T00:00:05Z", "2026-01-01T00:03:00Z"],
        ),
    )
    .expect("dated");
    assert_eq!(written.revision, 812);
    assert_eq!(written.at.to_string(), "2026-01-01T00:03:00Z");
    assert_eq!(written.object, "Job kube-system/helm-install-traefik");
}

#[test]
fn without_managed_fields_or_a_numeric_revision_nothing_is_dated() {
    let mut bare = job("812", "2026-01-01T00:00:00Z", &[]);
    bare["metadata"]
        .as_object_mut()
        .expect("metadata")
        .remove("managedFields");
    assert_eq!(WrittenRevision::of_json("Job", &bare), None);
    assert_eq!(
        WrittenRevision::of_json("Job", &job("abc", "2026-01-01T00:00:00Z", &[])),
        None
    );
    let mut undated = job("9", "2026-01-01T00:00:00Z", &["2026-01-01T00:01:00Z"]);
    undated["metadata"]["managedFields"][0]["time"] = json!(null);
    assert_eq!(WrittenRevision::of_json("Job", &undated), None);
}

#[test]
fn the_oldest_is_the_smallest_revision() {
    let objects = [
        job("900", "2026-01-01T00:00:00Z", &["2026-01-01T01:00:00Z"]),
        job("40", "2026-01-01T00:00:00Z", &["2026-01-01T00:00:01Z"]),
        job("x", "2026-01-01T00:00:00Z", &[]),
    ];
    assert_eq!(
        WrittenRevision::oldest(objects.iter().map(|o| ("Job", o))).map(|w| w.revision),
        Some(40)
    );
}
