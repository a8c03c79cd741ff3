//! The fake's test-facing API: seeding, request log, kubeconfig, discovery, HTTP framing.

use crate::client::{Req, send};
use crate::support::fake_api::{FakeApi, Role};
use serde_json::{Value, json};

fn lease(name: &str, holder: &str) -> serde_json::Value {
    json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
           "metadata": {"name": name, "namespace": "kube-system"},
           "spec": {"holderIdentity": holder, "leaseDurationSeconds": 45,
                    "renewTime": "2026-11-29T16:03:11.683773Z"}})
}

#[test]
fn put_get_list_remove() {
    let api = FakeApi::start();
    let first = api.put(lease("k3s", "server-1"));
    assert_eq!(first["metadata"]["resourceVersion"], "1001");
    assert!(first["metadata"]["uid"].as_str().unwrap().len() == 36);
    let again = api.put(lease("k3s", "server-2"));
    assert_eq!(again["metadata"]["resourceVersion"], "1002");
    api.put(lease("k3s-etcd", "server-1"));
    api.put(json!({"kind": "Node", "metadata": {"name": "server-1", "labels": {"a": "b"}}}));
    assert_eq!(
        api.get("Lease", Some("kube-system"), "k3s").unwrap()["spec"]["holderIdentity"],
        "server-2"
    );
    let names: Vec<_> = api
        .list("Lease")
        .iter()
        .map(|l| l["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["k3s", "k3s-etcd"]);
    assert_eq!(api.list("Node")[0]["apiVersion"], "v1");
    assert!(api.remove("Lease", Some("kube-system"), "k3s").is_some());
    assert!(api.get("Lease", Some("kube-system"), "k3s").is_none());
    assert_eq!(api.resource_version(), 1005);
}

#[test]
fn request_log_records_everything_in_order() {
    let api = FakeApi::start();
    api.put(lease("k3s", "server-1"));
    let target = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/k3s";
    send(
        api.addr(),
        &Req::new("GET", target)
            .token("bad")
            .header("User-Agent", "k3sdoctor/0.1.0"),
    );
    send(
        api.addr(),
        &Req::new("GET", &format!("{target}?pretty=true")).token(FakeApi::token(Role::ReadOnly)),
    );
    let log = api.requests();
    assert_eq!(log.len(), 2);
    assert_eq!(log[0].user_agent.as_deref(), Some("k3sdoctor/0.1.0"));
    assert_eq!(log[0].authorization.as_deref(), Some("Bearer bad"));
    assert_eq!(log[0].status, 401);
    assert_eq!(
        (log[1].path.as_str(), log[1].query.as_str(), log[1].status),
        (target, "pretty=true", 200)
    );
    api.clear_requests();
    assert!(api.requests().is_empty());
}

#[test]
fn kubeconfigs() {
    let api = FakeApi::start();
    let dir = tempfile::tempdir().unwrap();
    let path = api.write_kubeconfig(dir.path(), Role::ReadOnly);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(&format!("server: \"{}\"", api.url())));
    assert!(text.contains("token: \"viewer-token\""));
    assert!(text.contains("current-context: fake"));
    let other = FakeApi::write_kubeconfig_for(dir.path(), "https://127.0.0.1:1", "nope");
    assert_ne!(other, path);
    assert!(
        std::fs::read_to_string(other)
            .unwrap()
            .contains("server: \"https://127.0.0.1:1\"")
    );
}

#[test]
fn version_and_discovery() {
    let api = FakeApi::start();
    api.set_server_version("v1.28.9+rke2r1");
    let admin = FakeApi::token(Role::Admin);
    let version = send(api.addr(), &Req::new("GET", "/version").token(admin));
    assert!(version.text().starts_with(
        "{\n  \"major\": \"1\",\n  \"minor\": \"28\",\n  \"gitVersion\": \"v1.28.9+rke2r1\""
    ));
    assert!(
        version.text().ends_with('}'),
        "indented, no trailing newline"
    );
    let leases = send(
        api.addr(),
        &Req::new("GET", "/apis/coordination.k8s.io/v1").token(admin),
    );
    assert_eq!(leases.json()["resources"][0]["name"], "leases");
    assert!(leases.text().ends_with("}\n"));
    let crd = send(
        api.addr(),
        &Req::new("GET", "/apis/k3s.cattle.io/v1").token(admin),
    )
    .json();
    assert_eq!(crd["resources"][0]["kind"], "ETCDSnapshotFile");
    let core = send(api.addr(), &Req::new("GET", "/api/v1").token(admin)).json();
    assert_eq!(core["resources"][0]["name"], "configmaps");
    assert_eq!(
        send(api.addr(), &Req::new("GET", "/api").token(admin)).json()["versions"],
        json!(["v1"])
    );
    let unknown = send(
        api.addr(),
        &Req::new("GET", "/apis/apps/v1/deployments").token(admin),
    );
    assert_eq!(
        (unknown.status, unknown.text().as_str()),
        (404, "404 page not found\n")
    );
}

#[test]
fn small_bodies_have_a_length_large_ones_are_chunked() {
    let api = FakeApi::start();
    api.put(lease("k3s", "server-1"));
    let admin = FakeApi::token(Role::Admin);
    let one = send(
        api.addr(),
        &Req::new(
            "GET",
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/k3s",
        )
        .token(admin),
    );
    assert!(!one.chunked && one.header("Content-Length").is_some());
    assert_eq!(one.header("Cache-Control"), Some("no-cache, private"));
    assert!(one.text().ends_with("}\n"));
    for i in 0..10 {
        api.put(lease(&format!("lease-{i}"), "server-1"));
    }
    let many = send(
        api.addr(),
        &Req::new("GET", "/apis/coordination.k8s.io/v1/leases").token(admin),
    );
    assert!(many.chunked && many.body.len() > 2048);
}

#[test]
fn no_op_update_keeps_the_resource_version() {
    let api = FakeApi::start();
    let stored = api.put(lease("k3s", "server-1"));
    let target = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/k3s";
    let same = send(
        api.addr(),
        &Req::new("PUT", target)
            .token(FakeApi::token(Role::Admin))
            .json_body("application/json", stored.to_string()),
    );
    assert_eq!(same.status, 200);
    assert_eq!(
        same.json()["metadata"]["resourceVersion"],
        stored["metadata"]["resourceVersion"]
    );
    assert_eq!(api.resource_version(), 1001);
}

#[test]
fn writes_are_published_as_events() {
    let api = FakeApi::start();
    let mut events = api.events();
    api.put(lease("k3s", "server-1"));
    let target = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/k3s";
    let req = Req::new("PATCH", target)
        .token(FakeApi::token(Role::Admin))
        .json_body(
            "application/merge-patch+json",
            r#"{"spec":{"holderIdentity":"server-2"}}"#,
        );
    assert_eq!(send(api.addr(), &req).status, 200);
    assert_eq!(
        send(
            api.addr(),
            &Req::new("DELETE", target).token(FakeApi::token(Role::Admin))
        )
        .status,
        200
    );
    let types: Vec<_> = (0..3)
        .map(|_| events.try_recv().unwrap())
        .map(|e| (e.event_type, e.resource_version))
        .collect();
    assert_eq!(
        types,
        [("ADDED", 1001), ("MODIFIED", 1002), ("DELETED", 1003)]
    );
}

/// The event lines of a watch that ends after a second (`timeoutSeconds=1`).
fn watch_lines(api: &FakeApi, query: &str) -> Vec<Value> {
    let got = send(
        api.addr(),
        &Req::new(
            "GET",
            &format!("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases?watch=true&timeoutSeconds=1{query}"),
        )
        .token(FakeApi::token(Role::Admin)),
    );
    assert_eq!(got.status, 200);
    got.text()
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON event per line"))
        .collect()
}

fn events(lines: &[Value]) -> Vec<(String, String)> {
    lines
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap_or_default().to_string(),
                e["object"]["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect()
}

fn lease_object(name: &str, holder: &str) -> Value {
    json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
           "metadata": {"name": name, "namespace": "kube-system"},
           "spec": {"holderIdentity": holder}})
}

#[test]
fn watch_replays_the_net_changes_since_a_resource_version() {
    let api = FakeApi::start();
    api.put(lease_object("kept", "a"));
    api.put(lease_object("changed", "a"));
    api.put(lease_object("gone", "a"));
    let rv = api.resource_version();
    api.put(lease_object("changed", "b"));
    api.put(lease_object("changed", "c"));
    api.put(lease_object("new", "a"));
    api.remove("Lease", Some("kube-system"), "gone");

    let from_rv = watch_lines(&api, &format!("&resourceVersion={rv}"));
    let s = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        events(&from_rv),
        [
            s("MODIFIED", "changed"),
            s("ADDED", "new"),
            s("DELETED", "gone")
        ]
    );
    assert_eq!(from_rv[0]["object"]["spec"]["holderIdentity"], "c");
    assert_eq!(from_rv[0]["object"]["kind"], "Lease");

    // No resourceVersion: the current objects as ADDED.
    let all = watch_lines(&api, "");
    assert_eq!(
        events(&all),
        [s("ADDED", "changed"), s("ADDED", "kept"), s("ADDED", "new")]
    );
}

#[test]
fn watch_from_a_compacted_resource_version_is_an_error_event_410() {
    let api = FakeApi::start();
    api.put(lease_object("a", "x"));
    let old = api.resource_version();
    api.put(lease_object("a", "y"));
    api.compact();
    let lines = watch_lines(&api, &format!("&resourceVersion={}", old - 1));
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["type"], "ERROR");
    assert_eq!(lines[0]["object"]["kind"], "Status");
    assert_eq!(lines[0]["object"]["code"], 410);
    assert_eq!(lines[0]["object"]["reason"], "Expired");
}

#[test]
fn watch_follows_later_writes_and_ends_at_its_timeout() {
    let api = FakeApi::start();
    api.put(lease_object("a", "x"));
    let rv = api.resource_version();
    let addr = api.addr();
    let watching = std::thread::spawn(move || {
        send(
            addr,
            &Req::new(
                "GET",
                &format!("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases?watch=true&timeoutSeconds=2&resourceVersion={rv}&fieldSelector=metadata.name%3Da"),
            )
            .token(FakeApi::token(Role::Admin)),
        )
    });
    // Only a write after the watch started can show up as MODIFIED to "y".
    let started = crate::support::wait::wait_for(std::time::Duration::from_secs(10), || {
        api.requests()
            .iter()
            .any(|r| r.query.contains("watch=true"))
    });
    assert!(started);
    api.put(lease_object("b", "x"));
    api.put(lease_object("a", "y"));
    let got = watching.join().unwrap();
    let lines: Vec<Value> = got
        .text()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let s = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        events(&lines),
        [s("MODIFIED", "a")],
        "b is filtered out by the field selector"
    );
    assert_eq!(lines[0]["object"]["spec"]["holderIdentity"], "y");
}

#[test]
fn json_patch_operations() {
    let api = FakeApi::start();
    api.put(
        json!({"kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "kube-system",
                   "finalizers": ["a"]}, "data": {"x": "1", "y": "2"}}),
    );
    let ops = json!([
        {"op": "add", "path": "/data/z", "value": "3"},
        {"op": "remove", "path": "/data/y"},
        {"op": "move", "from": "/data/x", "path": "/data/w"},
        {"op": "copy", "from": "/data/z", "path": "/data/v"},
        {"op": "replace", "path": "/data/z", "value": "4"},
        {"op": "add", "path": "/metadata/finalizers/-", "value": "b"},
        {"op": "test", "path": "/data/w", "value": "1"}
    ]);
    let req = Req::new("PATCH", "/api/v1/namespaces/kube-system/configmaps/cm")
        .token(FakeApi::token(Role::Admin))
        .json_body("application/json-patch+json", ops.to_string());
    let got = send(api.addr(), &req);
    assert_eq!(got.status, 200, "{}", got.text());
    assert_eq!(got.json()["data"], json!({"v": "3", "w": "1", "z": "4"}));
    assert_eq!(got.json()["metadata"]["finalizers"], json!(["a", "b"]));
}

#[test]
fn dropping_the_handle_stops_the_server() {
    let api = FakeApi::start();
    let addr = api.addr();
    assert_eq!(send(addr, &Req::new("GET", "/version")).status, 200);
    // Returns once the server thread has stopped (an open keep-alive client does not block it).
    let idle = std::net::TcpStream::connect(addr).unwrap();
    drop(api);
    drop(idle);
}
