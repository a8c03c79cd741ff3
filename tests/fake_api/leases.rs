//! Lease CRUD, conflicts, MicroTime parsing (samples 017–048).

use crate::wire::{Replay, sample};
use serde_json::{Value, json};

/// `kube-system/k3s` as stored at resourceVersion 213 (body of sample 082).
pub(crate) fn k3s_lease() -> Value {
    sample("082").json()
}

fn seeded() -> Replay {
    let r = Replay::new();
    r.seed(213, k3s_lease());
    r
}

#[test]
fn put_with_stale_resource_version_is_a_conflict_017() {
    seeded().exact("017");
}

#[test]
fn merge_patch_resource_version_is_a_precondition_019() {
    seeded().exact("019");
}

#[test]
fn json_patch_failed_test_is_422_with_empty_details_021() {
    let r = seeded();
    r.exact("021");
    assert_eq!(
        r.api.get("Lease", Some("kube-system"), "k3s").unwrap(),
        k3s_lease()
    );
}

#[test]
fn patch_with_application_json_is_415_023() {
    seeded().exact("023");
}

#[test]
fn delete_answers_a_success_status_029() {
    let r = Replay::new();
    r.seed(
        215,
        json!({"kind": "Lease", "apiVersion": "coordination.k8s.io/v1",
               "metadata": {"name": "example-apply", "namespace": "kube-system",
                            "uid": "7c7e0838-7f4c-453b-ac03-d4a847f77b36"},
               "spec": {"leaseDurationSeconds": 45}}),
    );
    r.exact("029");
    assert!(
        r.api
            .get("Lease", Some("kube-system"), "example-apply")
            .is_none()
    );
    assert_eq!(r.api.resource_version(), 216, "a delete is a write");
}

#[test]
fn lease_put_without_resource_version_is_422_031() {
    seeded().exact("031");
}

#[test]
fn put_with_a_different_name_is_400_032() {
    seeded().exact("032");
}

#[test]
fn microtime_without_six_digits_is_400_on_create_033() {
    let r = Replay::new();
    r.exact("033");
    assert!(r.api.list("Lease").is_empty());
}

#[test]
fn microtime_errors_on_patch_embed_the_patched_object_037() {
    let r = seeded();
    // Byte-identical, including the patched document quoted twice in Go's key order.
    r.exact("037");
    assert_eq!(r.api.resource_version(), 213);
}

#[test]
fn microtime_with_offset_is_normalised_to_utc_040() {
    let r = Replay::new();
    r.at_rv(216);
    let got = r.similar("040");
    assert_eq!(
        got.json()["spec"]["renewTime"],
        "2026-11-29T15:00:06.123456Z"
    );
}

#[test]
fn missing_lease_is_a_not_found_status_041() {
    Replay::new().exact("041");
}

#[test]
fn lease_put_to_a_missing_name_creates_it_046() {
    let r = Replay::new();
    r.at_rv(218);
    r.similar("046");
    assert!(
        r.api
            .get("Lease", Some("kube-system"), "k3s-missing")
            .is_some()
    );
}

#[test]
fn create_in_a_missing_namespace_is_404_047() {
    Replay::new().exact("047");
}

#[test]
fn create_of_an_existing_lease_is_already_exists_048() {
    seeded().exact("048");
}

#[test]
fn get_after_seed_is_byte_identical_in_struct_order_082() {
    seeded().exact("082");
}
