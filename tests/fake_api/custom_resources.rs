//! ETCDSnapshotFile (custom resource) behaviour and the CRD-not-installed 404s
//! (samples 004, 007, 043, 044, 099, 103, 105, 107, 108).

use crate::client::{Req, send};
use crate::support::fake_api::{FakeApi, Role};
use crate::wire::{Replay, sample};
use serde_json::json;

#[test]
fn without_the_crd_the_group_answers_text_404_004() {
    let r = Replay::new();
    r.api.set_crd_installed(false);
    let got = r.exact("004");
    assert_eq!(got.header("X-Content-Type-Options"), Some("nosniff"));
    for path in [
        "/apis/k3s.cattle.io/v1",
        "/apis/k3s.cattle.io/v1/etcdsnapshotfiles/x",
    ] {
        let got = send(
            r.api.addr(),
            &Req::new("GET", path).token(FakeApi::token(Role::Admin)),
        );
        assert_eq!(
            (got.status, got.text().as_str()),
            (404, "404 page not found\n"),
            "{path}"
        );
    }
    let groups = send(
        r.api.addr(),
        &Req::new("GET", "/apis").token(FakeApi::token(Role::Admin)),
    )
    .json();
    assert!(!groups.to_string().contains("k3s.cattle.io"));
}

#[test]
fn unknown_resource_in_a_served_group_is_a_json_404_007() {
    Replay::new().exact("007");
}

#[test]
fn missing_objects_name_resource_and_group_043_044() {
    let r = Replay::new();
    r.exact("043");
    r.exact("044");
}

#[test]
fn float_size_is_invalid_with_three_causes_099() {
    Replay::new().exact("099");
}

#[test]
fn delete_without_finalizers_answers_a_status_103() {
    let r = Replay::new();
    r.seed(
        253,
        json!({"apiVersion": "k3s.cattle.io/v1", "kind": "ETCDSnapshotFile",
               "metadata": {"name": "local-pruned", "uid": "69e51667-a356-4e58-9b54-387f2954380e"},
               "spec": {"location": "file:///tmp/pruned", "nodeName": "server-2", "snapshotName": "pruned"}}),
    );
    r.exact("103");
    assert!(
        r.api
            .get("ETCDSnapshotFile", None, "local-pruned")
            .is_none()
    );
}

#[test]
fn finalizers_hold_the_object_until_removed_105_107_108() {
    let r = Replay::new();
    let mut created = sample("105").json();
    let meta = created["metadata"].as_object_mut().unwrap();
    meta.remove("deletionTimestamp");
    meta.remove("deletionGracePeriodSeconds");
    meta.insert("generation".into(), json!(1));
    r.seed(256, created);
    let deleting = r.similar("105");
    assert_eq!(deleting.json()["metadata"]["generation"], 2);
    assert!(
        r.api
            .get("ETCDSnapshotFile", None, "local-with-finalizer")
            .is_some()
    );
    r.exact("107");
    r.similar("108");
    assert!(
        r.api
            .get("ETCDSnapshotFile", None, "local-with-finalizer")
            .is_none()
    );
    assert_eq!(
        r.api.resource_version(),
        258,
        "the final removal is a write"
    );
}

#[test]
fn generation_counts_content_changes_only() {
    let r = Replay::new();
    let obj = json!({"apiVersion": "k3s.cattle.io/v1", "kind": "ETCDSnapshotFile", "metadata": {"name": "s"},
                     "spec": {"location": "file:///s", "nodeName": "n", "snapshotName": "s"},
                     "status": {"size": 5328928, "unknown": 1}});
    let admin = FakeApi::token(Role::Admin);
    let created = send(
        r.api.addr(),
        &Req::new("POST", "/apis/k3s.cattle.io/v1/etcdsnapshotfiles")
            .token(admin)
            .json_body("application/json", obj.to_string()),
    );
    assert_eq!(created.status, 201);
    assert_eq!(created.json()["metadata"]["generation"], 1);
    assert_eq!(
        created.json()["status"],
        json!({"size": 5328928}),
        "unknown fields are pruned"
    );
    let patch = |body: &str| {
        let req = Req::new("PATCH", "/apis/k3s.cattle.io/v1/etcdsnapshotfiles/s")
            .token(admin)
            .json_body("application/merge-patch+json", body.to_string());
        send(r.api.addr(), &req).json()
    };
    assert_eq!(
        patch(r#"{"status":{"size":"5Mi"}}"#)["metadata"]["generation"],
        2
    );
    assert_eq!(
        patch(r#"{"metadata":{"labels":{"a":"b"}}}"#)["metadata"]["generation"],
        2
    );
    let status = send(
        r.api.addr(),
        &Req::new("GET", "/apis/k3s.cattle.io/v1/etcdsnapshotfiles/s/status").token(admin),
    );
    assert_eq!(status.status, 404);
    assert_eq!(
        status.json()["message"],
        "etcdsnapshotfiles.k3s.cattle.io \"s\" not found"
    );
}
