//! Tokens, 401/403 and SelfSubjectAccessReview (samples 056–066).

use crate::client::{Req, send};
use crate::leases::k3s_lease;
use crate::support::fake_api::{FakeApi, Role};
use crate::wire::Replay;
use serde_json::json;

fn seeded() -> Replay {
    let r = Replay::new();
    r.seed(213, k3s_lease());
    r
}

#[test]
fn viewer_put_is_forbidden_with_verb_update_056() {
    let r = seeded();
    let got = r.exact("056");
    assert_eq!(got.header("X-Content-Type-Options"), Some("nosniff"));
}

#[test]
fn viewer_patch_is_forbidden_with_verb_patch_057() {
    seeded().exact("057");
}

#[test]
fn viewer_create_is_forbidden_without_a_name_058() {
    seeded().exact("058");
}

#[test]
fn unknown_token_is_401_without_flow_headers_063() {
    let got = Replay::new().exact("063");
    assert!(got.header("X-Kubernetes-Pf-Flowschema-Uid").is_none());
    assert!(got.header("Audit-Id").is_some());
}

#[test]
fn no_credentials_is_403_for_system_anonymous_064() {
    Replay::new().exact("064");
}

#[test]
fn ssar_admin_allowed_without_reason_065() {
    Replay::new().similar("065");
}

#[test]
fn ssar_viewer_update_denied_066() {
    Replay::new().similar("066");
}

fn ssar(r: &Replay, role: Role, attributes: serde_json::Value) -> serde_json::Value {
    let body = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                      "spec": {"resourceAttributes": attributes}});
    let req = Req::new(
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
    )
    .token(FakeApi::token(role))
    .json_body("application/json", body.to_string());
    let got = send(r.api.addr(), &req);
    assert_eq!(got.status, 201);
    got.json()["status"].clone()
}

#[test]
fn ssar_reasons_follow_rbac() {
    let r = Replay::new();
    let get = json!({"namespace": "kube-system", "verb": "get", "group": "coordination.k8s.io", "resource": "leases", "name": "k3s"});
    assert_eq!(
        ssar(&r, Role::ReadOnly, get.clone()),
        json!({"allowed": true, "reason": "RBAC: allowed by ClusterRoleBinding \"viewer-read-only\" of ClusterRole \"read-only\" to User \"viewer\""})
    );
    assert_eq!(ssar(&r, Role::Nobody, get), json!({"allowed": false}));
    let patch =
        json!({"namespace": "kube-system", "verb": "patch", "group": "", "resource": "configmaps"});
    assert_eq!(ssar(&r, Role::Admin, patch), json!({"allowed": true}));
}

#[test]
fn nobody_may_read_discovery_and_version_but_no_resources() {
    let r = Replay::new();
    let get = |path: &str| {
        send(
            r.api.addr(),
            &Req::new("GET", path).token(FakeApi::token(Role::Nobody)),
        )
    };
    assert_eq!(get("/version").status, 200);
    assert_eq!(get("/apis").status, 200);
    assert_eq!(get("/api/v1").status, 200);
    let nodes = get("/api/v1/nodes");
    assert_eq!(nodes.status, 403);
    assert_eq!(
        nodes.json()["message"],
        "nodes is forbidden: User \"nobody\" cannot list resource \"nodes\" in API group \"\" at the cluster scope"
    );
    let anonymous = send(r.api.addr(), &Req::new("GET", "/apis"));
    assert_eq!(anonymous.status, 403);
    assert_eq!(
        anonymous.json()["message"],
        "forbidden: User \"system:anonymous\" cannot get path \"/apis\""
    );
    assert_eq!(send(r.api.addr(), &Req::new("GET", "/version")).status, 200);
}

#[test]
fn viewer_dry_run_writes_are_still_forbidden() {
    let r = seeded();
    let req = Req::new(
        "DELETE",
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/k3s?dryRun=All",
    )
    .token(FakeApi::token(Role::ReadOnly));
    let got = send(r.api.addr(), &req);
    assert_eq!(got.status, 403);
    assert!(
        got.json()["message"]
            .as_str()
            .unwrap()
            .contains("cannot delete resource \"leases\"")
    );
}
