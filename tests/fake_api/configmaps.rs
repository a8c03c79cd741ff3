//! ConfigMaps: unconditional PUT, 404 on PUT, the 1 MiB data limit, the 3 MiB body limit,
//! key validation (samples 042, 053, 054, 072, 077, 078).

use crate::client::{Req, send};
use crate::support::fake_api::{FakeApi, Role};
use crate::wire::{Replay, sample};
use serde_json::json;

fn post_configmap(r: &Replay, body: Vec<u8>) -> crate::client::Response {
    let req = Req::new("POST", "/api/v1/namespaces/kube-system/configmaps")
        .token(FakeApi::token(Role::Admin))
        .json_body("application/json", body);
    send(r.api.addr(), &req)
}

fn configmap_with(name: &str, data: serde_json::Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"apiVersion": "v1", "kind": "ConfigMap",
                               "metadata": {"name": name, "namespace": "kube-system"}, "data": data}))
    .unwrap()
}

#[test]
fn missing_configmap_is_a_core_group_not_found_042() {
    Replay::new().exact("042");
}

#[test]
fn configmap_put_without_resource_version_is_unconditional_053() {
    let r = Replay::new();
    // The state after sample 051 (data: extra + the snapshot entry).
    let mut before = sample("053").json();
    before["data"] = json!({"extra": "x", "local-on-demand-server-1-1700000000": "{\"name\":\"on-demand-server-1-1700000000\"}"});
    before["metadata"]["managedFields"][0]["fieldsV1"] =
        json!({"f:data": {".": {}, "f:extra": {}, "f:local-on-demand-server-1-1700000000": {}}});
    r.seed(221, before);
    // Same body, managedFields included (times aside), resourceVersion 222.
    r.similar("053");
}

#[test]
fn configmap_put_to_a_missing_name_is_404_054() {
    Replay::new().exact("054");
}

#[test]
fn data_over_one_mebibyte_is_invalid_072() {
    let r = Replay::new();
    let got = post_configmap(
        &r,
        configmap_with("size-over", json!({"big": "a".repeat(1048577)})),
    );
    let want = sample("072");
    assert_eq!(got.status, 422);
    assert_eq!(got.text(), String::from_utf8_lossy(&want.body));
    // The limit itself is allowed (sample 071), and keys do not count.
    let ok = post_configmap(
        &r,
        configmap_with("size-limit", json!({"big": "a".repeat(1048576)})),
    );
    assert_eq!(ok.status, 201);
    assert!(ok.chunked, "bodies over 2048 bytes are chunked");
}

#[test]
fn data_plus_binary_data_share_the_limit() {
    let r = Replay::new();
    let bin = base64_of(&[7u8; 577]);
    let body = serde_json::to_vec(&json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "size-over", "namespace": "kube-system"},
        "data": {"a": "a".repeat(1048000)}, "binaryData": {"bin": bin}}))
    .unwrap();
    let got = post_configmap(&r, body);
    assert_eq!(got.status, 422);
    assert_eq!(got.json()["details"]["causes"][0]["field"], "[]");
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[test]
fn request_body_over_three_mebibytes_is_413_077() {
    let r = Replay::new();
    let got = post_configmap(
        &r,
        configmap_with("big", json!({"big": "a".repeat(3145828)})),
    );
    let want = sample("077");
    assert_eq!(got.status, 413);
    assert_eq!(got.text(), String::from_utf8_lossy(&want.body));
    assert_eq!(got.header("Connection"), Some("close"));
}

#[test]
fn invalid_data_key_is_422_naming_the_regex_078() {
    Replay::new().exact("078");
}

#[test]
fn patch_over_the_limit_is_invalid_too() {
    let r = Replay::new();
    assert_eq!(
        post_configmap(
            &r,
            configmap_with("size-limit", json!({"big": "a".repeat(1048576)}))
        )
        .status,
        201
    );
    let req = Req::new(
        "PATCH",
        "/api/v1/namespaces/kube-system/configmaps/size-limit",
    )
    .token(FakeApi::token(Role::Admin))
    .json_body(
        "application/merge-patch+json",
        r#"{"data":{"one-more":"x"}}"#,
    );
    let got = send(r.api.addr(), &req);
    assert_eq!(got.status, 422);
    assert_eq!(
        got.json()["message"],
        "ConfigMap \"size-limit\" is invalid: []: Too long: must have at most 1048576 bytes"
    );
}
