//! LIST paging and selectors (samples 110–115, 118, 119, 122–125).

use crate::client::{Req, send};
use crate::support::fake_api::{FakeApi, Role};
use crate::wire::{Replay, sample};
use serde_json::{Value, json};

/// The five ETCDSnapshotFiles of samples 110–114, stored in their creation order (262–266).
fn snapshot_files() -> Replay {
    let r = Replay::new();
    let mut items: Vec<Value> = ["110", "111", "112"]
        .iter()
        .flat_map(|id| sample(id).json()["items"].as_array().unwrap().clone())
        .collect();
    items.sort_by_key(|i| {
        i["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
    });
    for item in items {
        let rv = item["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        r.seed(rv, item);
    }
    r
}

#[test]
fn custom_resource_pages_110_111_112() {
    let r = snapshot_files();
    r.exact("110");
    r.exact("111");
    r.exact("112");
}

#[test]
fn garbage_continue_token_is_400_113() {
    snapshot_files().exact("113");
}

#[test]
fn resource_version_zero_ignores_limit_114() {
    snapshot_files().exact("114");
}

#[test]
fn compacted_continue_token_is_410_with_a_fresh_token_115() {
    let r = snapshot_files();
    // etcd compacts at a later revision; the token's revision (266) is then gone.
    r.api
        .put(json!({"kind": "Node", "metadata": {"name": "server-1"}}));
    r.api.compact();
    r.exact("115");
}

#[test]
fn pages_are_a_consistent_snapshot() {
    let r = snapshot_files();
    let admin = FakeApi::token(Role::Admin);
    let page1 = send(
        r.api.addr(),
        &Req::new("GET", "/apis/k3s.cattle.io/v1/etcdsnapshotfiles?limit=2").token(admin),
    );
    let token = page1.json()["metadata"]["continue"]
        .as_str()
        .unwrap()
        .to_string();
    // Changes after the first page are not seen by the following pages.
    r.api.remove(
        "ETCDSnapshotFile",
        None,
        "local-etcd-snapshot-server-2-1764435600-d4e5f6",
    );
    let mut extra = sample("112").json()["items"][0].clone();
    extra["metadata"]["name"] = json!("local-etcd-snapshot-server-2-1764435601-aaaaaa");
    r.api.put(extra);
    let target = format!("/apis/k3s.cattle.io/v1/etcdsnapshotfiles?limit=2&continue={token}");
    let page2 = send(r.api.addr(), &Req::new("GET", &target).token(admin)).json();
    assert_eq!(page2, sample("111").json());
    // A fresh list sees the new state.
    let all = send(
        r.api.addr(),
        &Req::new("GET", "/apis/k3s.cattle.io/v1/etcdsnapshotfiles").token(admin),
    )
    .json();
    assert_eq!(all["metadata"]["resourceVersion"], "268");
    assert_eq!(all["items"].as_array().unwrap().len(), 5);
}

/// kube-system ConfigMaps of samples 116–125: k3s-etcd-snapshots, sel-a, sel-b, sel-c (271).
fn selector_configmaps() -> Replay {
    let r = Replay::new();
    let mut snapshots = sample("053").json();
    snapshots["metadata"]["resourceVersion"] = json!("222");
    r.seed(222, snapshots);
    let with_kind = |mut item: Value| {
        item["kind"] = json!("ConfigMap");
        item["apiVersion"] = json!("v1");
        item
    };
    let sel_a = with_kind(sample("123").json()["items"][0].clone());
    let sel_b = with_kind(sample("118").json()["items"][0].clone());
    let mut sel_c = sel_b.clone();
    sel_c["metadata"]["name"] = json!("sel-c");
    sel_c["metadata"]["uid"] = json!("5c0c3a3e-9b6b-4a43-9d8e-0d1f2e3a4b5c");
    sel_c["metadata"]["labels"] = json!({"app": "other", "tier": "c"});
    sel_c["data"] = json!({"k": "sel-c"});
    r.seed(269, sel_a).seed(270, sel_b).seed(271, sel_c);
    r
}

#[test]
fn field_selector_on_name_118_119() {
    let r = selector_configmaps();
    r.exact("118");
    r.exact("119");
}

#[test]
fn invalid_label_selector_is_400_122() {
    selector_configmaps().exact("122");
}

#[test]
fn selector_pages_have_tokens_but_no_remaining_count_123_124_125() {
    let r = selector_configmaps();
    r.exact("123");
    r.exact("124");
    r.exact("125");
}

#[test]
fn label_selector_forms() {
    let r = selector_configmaps();
    let names = |selector: &str| -> Vec<String> {
        let target = format!(
            "/api/v1/namespaces/kube-system/configmaps?labelSelector={}",
            selector.replace(' ', "%20")
        );
        let got = send(
            r.api.addr(),
            &Req::new("GET", &target).token(FakeApi::token(Role::Admin)),
        );
        assert_eq!(got.status, 200, "{selector}: {}", got.text());
        got.json()["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names("app=demo"), ["sel-a", "sel-b"]);
    assert_eq!(names("app==demo,tier!=a"), ["sel-b"]);
    assert_eq!(names("tier in (a,c)"), ["sel-a", "sel-c"]);
    assert_eq!(names("tier notin (a,c)"), ["k3s-etcd-snapshots", "sel-b"]);
    assert_eq!(names("tier"), ["sel-a", "sel-b", "sel-c"]);
    assert_eq!(names("!tier"), ["k3s-etcd-snapshots"]);
    let unsupported = send(
        r.api.addr(),
        &Req::new(
            "GET",
            "/api/v1/namespaces/kube-system/configmaps?fieldSelector=data.k%3Dsel-a",
        )
        .token(FakeApi::token(Role::Admin)),
    );
    assert_eq!(unsupported.status, 400);
    assert_eq!(
        unsupported.json()["message"],
        "\"data.k\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
    );
}

#[test]
fn builtin_lists_omit_item_kind_and_last_page_continue() {
    let r = selector_configmaps();
    let got = send(
        r.api.addr(),
        &Req::new("GET", "/api/v1/configmaps?limit=3").token(FakeApi::token(Role::Admin)),
    )
    .json();
    assert_eq!(got["kind"], "ConfigMapList");
    assert_eq!(got["metadata"]["remainingItemCount"], 1);
    assert!(got["items"][0].get("kind").is_none());
    let token = got["metadata"]["continue"].as_str().unwrap();
    let target = format!("/api/v1/configmaps?limit=3&continue={token}");
    let last = send(
        r.api.addr(),
        &Req::new("GET", &target).token(FakeApi::token(Role::Admin)),
    )
    .json();
    assert_eq!(last["items"].as_array().unwrap().len(), 1);
    assert_eq!(last["metadata"], json!({"resourceVersion": "271"}));
}
