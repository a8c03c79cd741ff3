//! Fault injection.

use crate::client::{Req, send, try_send};
use crate::support::fake_api::{FakeApi, Fault, FaultAction, Role};
use serde_json::json;
use std::time::Duration;

const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";

fn get(api: &FakeApi, target: &str) -> crate::client::Response {
    send(
        api.addr(),
        &Req::new("GET", target).token(FakeApi::token(Role::Admin)),
    )
}

#[test]
fn status_faults_have_real_shapes_and_can_be_limited() {
    let api = FakeApi::start();
    api.inject(Fault::status("GET", "/leases", 503).times(1));
    let first = get(&api, LEASES);
    assert_eq!(first.status, 503);
    assert_eq!(first.json()["reason"], "ServiceUnavailable");
    assert_eq!(get(&api, LEASES).status, 200, "times(1) used up");
    api.inject(Fault::status("PUT", "/leases/k3s", 409));
    let body = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                      "metadata": {"name": "k3s", "namespace": "kube-system", "resourceVersion": "1"}, "spec": {}});
    let req = Req::new("PUT", &format!("{LEASES}/k3s"))
        .token(FakeApi::token(Role::Admin))
        .json_body("application/json", body.to_string());
    let conflict = send(api.addr(), &req).json();
    assert_eq!(conflict["reason"], "Conflict");
    assert_eq!(
        conflict["details"],
        json!({"name": "k3s", "group": "coordination.k8s.io", "kind": "leases"})
    );
    let statuses: Vec<u16> = api.requests().iter().map(|r| r.status).collect();
    assert_eq!(statuses, [503, 200, 409]);
}

#[test]
fn raw_faults_send_exact_bytes() {
    let api = FakeApi::start();
    api.inject(Fault::new(
        Some("GET"),
        "/version",
        FaultAction::Raw {
            status: 200,
            content_type: "text/html".into(),
            body: b"<html>login</html>".to_vec(),
        },
    ));
    api.inject(Fault::raw(
        "*",
        "/leases",
        200,
        "application/json",
        r#"{"kind":"LeaseList","items":[{"#,
    ));
    let html = get(&api, "/version");
    assert_eq!(
        (html.header("Content-Type"), html.text().as_str()),
        (Some("text/html"), "<html>login</html>")
    );
    assert_eq!(
        get(&api, LEASES).text(),
        r#"{"kind":"LeaseList","items":[{"#
    );
}

#[test]
fn dropped_connections_get_no_response() {
    let api = FakeApi::start();
    api.inject(Fault::drop_connection("GET", "/api/v1/nodes").times(1));
    let dropped = try_send(
        api.addr(),
        &Req::new("GET", "/api/v1/nodes").token(FakeApi::token(Role::Admin)),
    );
    assert!(dropped.is_err(), "{dropped:?}");
    assert_eq!(get(&api, "/api/v1/nodes").status, 200);
    let log = api.requests();
    assert_eq!((log[0].status, log[1].status), (0, 200));
}

#[test]
fn delays_then_answers_normally() {
    let api = FakeApi::start();
    api.inject(Fault::delay("*", "", Duration::from_millis(20)));
    assert_eq!(get(&api, LEASES).status, 200);
    api.clear_faults();
    assert_eq!(get(&api, LEASES).status, 200);
}
