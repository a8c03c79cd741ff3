//! Users authorised by RBAC ClusterRole/Role YAML (`FakeApi::add_rbac_user`).

use crate::client::{Req, Response, send};
use crate::support::fake_api::{FakeApi, Role};
use serde_json::{Value, json};

const CM: &str = "/api/v1/namespaces/kube-system/configmaps";
const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";

/// A cluster with two ConfigMaps and a Lease in kube-system, a Lease in default and a Node.
fn cluster() -> FakeApi {
    let api = FakeApi::start();
    for name in ["k3s-etcd-snapshots", "other"] {
        api.put(json!({"kind": "ConfigMap",
                       "metadata": {"name": name, "namespace": "kube-system"},
                       "data": {"a": "b"}}));
    }
    for ns in ["kube-system", "default"] {
        api.put(json!({"kind": "Lease",
                       "metadata": {"name": "k3s", "namespace": ns},
                       "spec": {"holderIdentity": "server-1"}}));
    }
    api.put(json!({"kind": "Node", "metadata": {"name": "server-1"}}));
    api
}

fn request(
    api: &FakeApi,
    token: &str,
    method: &str,
    target: &str,
    body: Option<Value>,
) -> Response {
    let mut req = Req::new(method, target).token(token);
    if let Some(body) = body {
        req = req.json_body("application/json", body.to_string());
    }
    send(api.addr(), &req)
}

fn get(api: &FakeApi, token: &str, target: &str) -> Response {
    request(api, token, "GET", target, None)
}

/// The 403's message, asserting the status and the details' name.
fn forbidden(got: &Response, name: &str) -> String {
    assert_eq!(got.status, 403, "{}", got.text());
    let body = got.json();
    assert_eq!(body["reason"], "Forbidden");
    assert_eq!(body["details"]["name"].as_str().unwrap_or(""), name);
    body["message"].as_str().unwrap().to_string()
}

fn ssar(api: &FakeApi, token: &str, attributes: Value) -> Value {
    let body = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                      "spec": {"resourceAttributes": attributes}});
    let got = request(
        api,
        token,
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        Some(body),
    );
    assert_eq!(got.status, 201, "{}", got.text());
    got.json()["status"].clone()
}

/// A multi-document file as it would be applied: the ServiceAccount and binding are ignored, and
/// so is the aggregationRule.
const SNAPSHOT_READER: &str = r#"
apiVersion: v1
kind: ServiceAccount
metadata:
  name: k3sdoctor
  namespace: kube-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: snapshot-reader
aggregationRule:
  clusterRoleSelectors:
    - matchLabels: {example.com/aggregate: "true"}
rules:
  - apiGroups: [""]
    resources: [configmaps]
    resourceNames: [k3s-etcd-snapshots]
    verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: snapshot-reader
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: snapshot-reader}
subjects:
  - {kind: User, name: alice, apiGroup: rbac.authorization.k8s.io}
---
"#;

#[test]
fn resource_names_allow_get_of_that_name_only() {
    let api = cluster();
    api.add_rbac_user("alice-token", "alice", SNAPSHOT_READER);
    let t = "alice-token";
    let ok = get(&api, t, &format!("{CM}/k3s-etcd-snapshots"));
    assert_eq!(ok.status, 200, "{}", ok.text());
    assert_eq!(ok.json()["metadata"]["name"], "k3s-etcd-snapshots");

    assert_eq!(
        forbidden(&get(&api, t, &format!("{CM}/other")), "other"),
        "configmaps \"other\" is forbidden: User \"alice\" cannot get resource \"configmaps\" in API group \"\" in the namespace \"kube-system\""
    );
    assert_eq!(
        forbidden(&get(&api, t, CM), ""),
        "configmaps is forbidden: User \"alice\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"kube-system\""
    );
    assert!(
        forbidden(&get(&api, t, &format!("{CM}?watch=true")), "")
            .contains("cannot watch resource \"configmaps\"")
    );
    let update = request(
        &api,
        t,
        "PUT",
        &format!("{CM}/k3s-etcd-snapshots"),
        Some(json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "k3s-etcd-snapshots", "namespace": "kube-system"}})),
    );
    assert!(
        forbidden(&update, "k3s-etcd-snapshots")
            .contains("User \"alice\" cannot update resource \"configmaps\"")
    );
    let create = request(
        &api,
        t,
        "POST",
        CM,
        Some(json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "k3s-etcd-snapshots", "namespace": "kube-system"}})),
    );
    assert!(forbidden(&create, "").contains("cannot create resource \"configmaps\""));
    // Other resources and the ClusterRole-wide scope: nothing else is granted.
    assert!(forbidden(&get(&api, t, LEASES), "").contains("cannot list resource \"leases\""));
    assert!(
        forbidden(&get(&api, t, "/api/v1/configmaps"), "").ends_with(
            "cannot list resource \"configmaps\" in API group \"\" at the cluster scope"
        )
    );
    // Unknown tokens are still 401, the built-in users unchanged.
    assert_eq!(get(&api, "bob-token", CM).status, 401);
    assert_eq!(get(&api, FakeApi::token(Role::ReadOnly), CM).status, 200);
    assert_eq!(get(&api, FakeApi::token(Role::Nobody), CM).status, 403);
}

#[test]
fn resource_names_match_a_list_narrowed_to_that_name_like_kubernetes() {
    // RequestInfo takes the name of a list/watch from an exact `metadata.name` field selector,
    // so the apiserver authorises it by resourceNames (kubernetes.io/docs RBAC "Referring to
    // resources").
    let api = cluster();
    api.add_rbac_user("alice-token", "alice", SNAPSHOT_READER);
    let selected = |name: &str| format!("{CM}?fieldSelector=metadata.name%3D{name}");
    assert!(
        forbidden(
            &get(&api, "alice-token", &selected("k3s-etcd-snapshots")),
            "k3s-etcd-snapshots"
        )
        .contains("cannot list resource \"configmaps\"")
    );
    api.add_rbac_user(
        "carol-token",
        "carol",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: list-one}\n\
         rules: [{apiGroups: [''], resources: [configmaps], resourceNames: [k3s-etcd-snapshots], verbs: [list]}]\n",
    );
    let one = get(&api, "carol-token", &selected("k3s-etcd-snapshots"));
    assert_eq!(one.status, 200, "{}", one.text());
    assert_eq!(one.json()["items"].as_array().unwrap().len(), 1);
    forbidden(&get(&api, "carol-token", &selected("other")), "other");
    forbidden(&get(&api, "carol-token", CM), "");
}

const LEASE_ROLE: &str = r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: lease-editor
  namespace: kube-system
rules:
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    verbs: [get, list, update]
  - apiGroups: [""]
    resources: [nodes]
    verbs: ["*"]
"#;

#[test]
fn a_role_grants_only_in_its_own_namespace() {
    let api = cluster();
    api.add_rbac_user("dave-token", "dave", LEASE_ROLE);
    let t = "dave-token";
    assert_eq!(get(&api, t, &format!("{LEASES}/k3s")).status, 200);
    assert_eq!(get(&api, t, LEASES).status, 200);
    assert_eq!(
        forbidden(
            &get(
                &api,
                t,
                "/apis/coordination.k8s.io/v1/namespaces/default/leases/k3s"
            ),
            "k3s"
        ),
        "leases.coordination.k8s.io \"k3s\" is forbidden: User \"dave\" cannot get resource \"leases\" in API group \"coordination.k8s.io\" in the namespace \"default\""
    );
    assert_eq!(
        forbidden(&get(&api, t, "/apis/coordination.k8s.io/v1/leases"), ""),
        "leases.coordination.k8s.io is forbidden: User \"dave\" cannot list resource \"leases\" in API group \"coordination.k8s.io\" at the cluster scope"
    );
    // The Role's nodes rule can never apply: Nodes are cluster-scoped.
    assert_eq!(
        forbidden(&get(&api, t, "/api/v1/nodes"), ""),
        "nodes is forbidden: User \"dave\" cannot list resource \"nodes\" in API group \"\" at the cluster scope"
    );
    forbidden(&get(&api, t, "/api/v1/nodes/server-1"), "server-1");
    // Not listed verbs are denied even in kube-system.
    let delete = request(&api, t, "DELETE", &format!("{LEASES}/k3s"), None);
    assert!(forbidden(&delete, "k3s").contains("cannot delete resource \"leases\""));
    let delete_all = request(&api, t, "DELETE", LEASES, None);
    assert!(forbidden(&delete_all, "").contains("cannot deletecollection resource \"leases\""));
}

#[test]
fn cluster_scoped_nodes_need_a_cluster_role_and_subresources_must_be_listed() {
    let api = cluster();
    api.add_rbac_user("erin-token", "erin", LEASE_ROLE);
    forbidden(&get(&api, "erin-token", "/api/v1/nodes"), "");
    // The same user, now also bound to a ClusterRole.
    api.add_rbac_user(
        "erin-token",
        "erin",
        r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: node-reader
rules:
  - apiGroups: [""]
    resources: [nodes]
    verbs: [get, list]
"#,
    );
    let nodes = get(&api, "erin-token", "/api/v1/nodes");
    assert_eq!(nodes.status, 200, "{}", nodes.text());
    assert_eq!(nodes.json()["items"][0]["metadata"]["name"], "server-1");
    assert_eq!(
        get(&api, "erin-token", "/api/v1/nodes/server-1").status,
        200
    );
    assert_eq!(
        get(&api, "erin-token", &format!("{LEASES}/k3s")).status,
        200,
        "the Role still applies"
    );
    // `nodes` does not cover `nodes/status` (authorization runs before routing).
    assert_eq!(
        forbidden(
            &get(&api, "erin-token", "/api/v1/nodes/server-1/status"),
            "server-1"
        ),
        "nodes \"server-1\" is forbidden: User \"erin\" cannot get resource \"nodes/status\" in API group \"\" at the cluster scope"
    );
    let status = |token: &str| {
        ssar(
            &api,
            token,
            json!({"verb": "get", "group": "", "resource": "nodes", "subresource": "status", "name": "server-1"}),
        )["allowed"]
            .clone()
    };
    assert_eq!(status("erin-token"), false);
    api.add_rbac_user(
        "frank-token",
        "frank",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: statuses}\n\
         rules: [{apiGroups: ['*'], resources: ['*/status'], verbs: [get]}]\n",
    );
    assert_eq!(status("frank-token"), true);
    forbidden(
        &get(&api, "frank-token", "/api/v1/nodes/server-1"),
        "server-1",
    );
}

#[test]
fn ssar_answers_match_the_requests() {
    let api = cluster();
    api.add_rbac_user("alice-token", "alice", SNAPSHOT_READER);
    api.add_rbac_user("alice-token", "alice", LEASE_ROLE);
    let cases = [
        (
            "get",
            "",
            "configmaps",
            "kube-system",
            "k3s-etcd-snapshots",
            format!("{CM}/k3s-etcd-snapshots"),
        ),
        (
            "get",
            "",
            "configmaps",
            "kube-system",
            "other",
            format!("{CM}/other"),
        ),
        ("list", "", "configmaps", "kube-system", "", CM.to_string()),
        (
            "get",
            "",
            "configmaps",
            "default",
            "k3s-etcd-snapshots",
            "/api/v1/namespaces/default/configmaps/k3s-etcd-snapshots".to_string(),
        ),
        (
            "get",
            "coordination.k8s.io",
            "leases",
            "kube-system",
            "k3s",
            format!("{LEASES}/k3s"),
        ),
        (
            "list",
            "coordination.k8s.io",
            "leases",
            "kube-system",
            "",
            LEASES.to_string(),
        ),
        (
            "get",
            "coordination.k8s.io",
            "leases",
            "default",
            "k3s",
            "/apis/coordination.k8s.io/v1/namespaces/default/leases/k3s".to_string(),
        ),
        (
            "list",
            "coordination.k8s.io",
            "leases",
            "",
            "",
            "/apis/coordination.k8s.io/v1/leases".to_string(),
        ),
        ("list", "", "nodes", "", "", "/api/v1/nodes".to_string()),
        (
            "list",
            "k3s.cattle.io",
            "etcdsnapshotfiles",
            "",
            "",
            "/apis/k3s.cattle.io/v1/etcdsnapshotfiles".to_string(),
        ),
    ];
    for (verb, group, resource, namespace, name, target) in cases {
        let review = ssar(
            &api,
            "alice-token",
            json!({"verb": verb, "group": group, "resource": resource, "namespace": namespace, "name": name}),
        );
        let status = get(&api, "alice-token", &target).status;
        assert_eq!(
            review["allowed"] == true,
            status != 403,
            "{verb} {target}: review {review}, request {status}"
        );
    }
    assert_eq!(
        ssar(
            &api,
            "alice-token",
            json!({"verb": "get", "group": "", "resource": "configmaps", "namespace": "kube-system", "name": "k3s-etcd-snapshots"})
        ),
        json!({"allowed": true, "reason": "RBAC: allowed by ClusterRoleBinding \"alice-snapshot-reader\" of ClusterRole \"snapshot-reader\" to User \"alice\""})
    );
    assert_eq!(
        ssar(
            &api,
            "alice-token",
            json!({"verb": "update", "group": "coordination.k8s.io", "resource": "leases", "namespace": "kube-system", "name": "k3s"})
        ),
        json!({"allowed": true, "reason": "RBAC: allowed by RoleBinding \"alice-lease-editor/kube-system\" of Role \"lease-editor\" to User \"alice\""})
    );
    assert_eq!(
        ssar(
            &api,
            "alice-token",
            json!({"verb": "update", "group": "", "resource": "configmaps", "namespace": "kube-system", "name": "k3s-etcd-snapshots"})
        ),
        json!({"allowed": false})
    );
    // Discovery and /version stay open.
    for path in [
        "/version",
        "/api",
        "/apis",
        "/api/v1",
        "/apis/coordination.k8s.io/v1",
    ] {
        assert_eq!(get(&api, "alice-token", path).status, 200, "{path}");
    }
}

#[test]
fn dry_run_writes_are_authorised_like_real_writes() {
    let api = cluster();
    api.add_rbac_user("alice-token", "alice", SNAPSHOT_READER);
    api.add_rbac_user("dave-token", "dave", LEASE_ROLE);
    let lease = |holder: &str| {
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
               "metadata": {"name": "k3s", "namespace": "kube-system"},
               "spec": {"holderIdentity": holder}})
    };
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "k3s-etcd-snapshots", "namespace": "kube-system"}});
    let denied = [
        (
            "alice-token",
            "PUT",
            format!("{CM}/k3s-etcd-snapshots?dryRun=All"),
            Some(cm.clone()),
            "update",
        ),
        (
            "alice-token",
            "POST",
            format!("{CM}?dryRun=All"),
            Some(cm.clone()),
            "create",
        ),
        (
            "alice-token",
            "DELETE",
            format!("{CM}/k3s-etcd-snapshots?dryRun=All"),
            None,
            "delete",
        ),
        (
            "dave-token",
            "POST",
            format!("{LEASES}?dryRun=All"),
            Some(lease("x")),
            "create",
        ),
        (
            "dave-token",
            "DELETE",
            format!("{LEASES}/k3s?dryRun=All"),
            None,
            "delete",
        ),
        (
            "dave-token",
            "PUT",
            "/apis/coordination.k8s.io/v1/namespaces/default/leases/k3s?dryRun=All".to_string(),
            Some(
                json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "k3s", "namespace": "default"}, "spec": {}}),
            ),
            "update",
        ),
    ];
    for (token, method, target, body, verb) in denied {
        let got = request(&api, token, method, &target, body);
        assert_eq!(got.status, 403, "{method} {target}: {}", got.text());
        assert!(
            got.json()["message"]
                .as_str()
                .unwrap()
                .contains(&format!("cannot {verb} resource")),
            "{method} {target}: {}",
            got.text()
        );
    }
    // dave may update leases in kube-system: the dry run succeeds and changes nothing.
    let before = api.resource_version();
    let mut update = lease("server-2");
    update["metadata"]["resourceVersion"] =
        api.get("Lease", Some("kube-system"), "k3s").unwrap()["metadata"]["resourceVersion"]
            .clone();
    let got = request(
        &api,
        "dave-token",
        "PUT",
        &format!("{LEASES}/k3s?dryRun=All"),
        Some(update),
    );
    assert_eq!(got.status, 200, "{}", got.text());
    assert_eq!(got.json()["spec"]["holderIdentity"], "server-2");
    assert_eq!(api.resource_version(), before);
    let stored = api.get("Lease", Some("kube-system"), "k3s").unwrap();
    assert_eq!(stored["spec"]["holderIdentity"], "server-1");
}

#[test]
fn wildcards_match_every_group_resource_and_verb() {
    let api = cluster();
    api.add_rbac_user(
        "root-token",
        "root",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: all}\n\
         rules: [{apiGroups: ['*'], resources: ['*'], verbs: ['*']}]\n",
    );
    for target in [
        "/api/v1/nodes",
        CM,
        LEASES,
        "/apis/k3s.cattle.io/v1/etcdsnapshotfiles",
    ] {
        assert_eq!(get(&api, "root-token", target).status, 200, "{target}");
    }
    let delete = request(&api, "root-token", "DELETE", &format!("{CM}/other"), None);
    assert_eq!(delete.status, 200, "{}", delete.text());
    assert!(api.get("ConfigMap", Some("kube-system"), "other").is_none());
}

#[test]
fn a_role_without_namespace_applies_to_default() {
    let api = cluster();
    api.add_rbac_user(
        "gina-token",
        "gina",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: leases}\n\
         rules: [{apiGroups: [coordination.k8s.io], resources: [leases], verbs: [get]}]\n",
    );
    let default = "/apis/coordination.k8s.io/v1/namespaces/default/leases/k3s";
    assert_eq!(get(&api, "gina-token", default).status, 200);
    forbidden(&get(&api, "gina-token", &format!("{LEASES}/k3s")), "k3s");
}

#[test]
#[should_panic(expected = "resource rules must supply at least one api group")]
fn a_rule_the_apiserver_would_reject_panics() {
    FakeApi::start().add_rbac_user(
        "x-token",
        "x",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: bad}\n\
         rules: [{resources: [leases], verbs: [get]}]\n",
    );
}

#[test]
#[should_panic(expected = "namespaced rules cannot apply to non-resource URLs")]
fn a_role_with_non_resource_urls_panics() {
    FakeApi::start().add_rbac_user(
        "x-token",
        "x",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: bad, namespace: default}\n\
         rules: [{nonResourceURLs: [/healthz], verbs: [get]}]\n",
    );
}
