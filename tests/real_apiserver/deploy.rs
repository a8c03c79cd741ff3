//! The manifests under `deploy/` are what a real kube-apiserver accepts: every object the
//! kustomizations build (the base, the Prometheus Operator overlay, the NetworkPolicy component),
//! the CronJob manifest's and the repair role, created with a server-side dry run
//! (`dryRun=All`: admission and validation run, nothing is stored). The Prometheus Operator's
//! kinds are left out: the test bed has no such CRDs (their structure is checked in
//! `tests/cli/deploy_serve.rs`).
//!
//! And every workload passes Pod Security `restricted`: PodSecurity admission (on by default
//! since 1.23) only warns about a Deployment or CronJob but enforces on Pods, so each workload's
//! pod template is dry-run as a Pod in a namespace labelled
//! `pod-security.kubernetes.io/enforce=restricted`, where a violation is refused (403).

use serde_json::{Value, json};

use crate::support::envtest::EnvTest;
use crate::support::envtest::admin::AdminApi;
use crate::support::kustomize;
use crate::support::manifests::yaml_documents;

fn collection(object: &Value) -> Option<String> {
    let namespace = object["metadata"]["namespace"]
        .as_str()
        .unwrap_or("default");
    let path = match object["kind"].as_str()? {
        "ServiceAccount" => format!("/api/v1/namespaces/{namespace}/serviceaccounts"),
        "Service" => format!("/api/v1/namespaces/{namespace}/services"),
        "Pod" => format!("/api/v1/namespaces/{namespace}/pods"),
        "Deployment" => format!("/apis/apps/v1/namespaces/{namespace}/deployments"),
        "CronJob" => format!("/apis/batch/v1/namespaces/{namespace}/cronjobs"),
        "NetworkPolicy" => {
            format!("/apis/networking.k8s.io/v1/namespaces/{namespace}/networkpolicies")
        }
        "ClusterRole" => "/apis/rbac.authorization.k8s.io/v1/clusterroles".into(),
        "ClusterRoleBinding" => "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings".into(),
        "Role" => format!("/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles"),
        "RoleBinding" => {
            format!("/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/rolebindings")
        }
        _ => return None,
    };
    Some(path)
}

fn dry_run(admin: &AdminApi, object: &Value) -> Result<Value, (u16, String)> {
    let path = collection(object).expect("a known kind");
    admin.request(
        "POST",
        &format!("{path}?dryRun=All&fieldValidation=Strict"),
        "application/json",
        Some(object),
    )
}

/// Every object a user applies from deploy/, with the file or directory it comes from.
fn deploy_objects() -> Vec<(String, Value)> {
    let mut objects = Vec::new();
    for dir in [
        "deploy/overlays/prometheus-operator",
        "deploy/components/network-policy",
    ] {
        objects.extend(
            kustomize::build(dir)
                .into_iter()
                .map(|o| (dir.to_string(), o)),
        );
    }
    for file in ["deploy/k3sdoctor-cronjob.yaml", "deploy/repair-role.yaml"] {
        objects.extend(
            yaml_documents(file)
                .into_iter()
                .map(|o| (file.to_string(), o)),
        );
    }
    objects
}

#[test]
fn real_deploy_manifests_are_accepted_by_the_api_server() {
    let Some(env) = EnvTest::shared() else {
        return;
    };
    let admin = env.admin();
    let mut checked = Vec::new();
    for (source, object) in deploy_objects() {
        let kind = object["kind"].as_str().unwrap_or_default().to_string();
        if collection(&object).is_none() {
            assert!(
                object["apiVersion"]
                    .as_str()
                    .is_some_and(|v| v.starts_with("monitoring.coreos.com/")),
                "{source}: no collection known for {kind}"
            );
            continue;
        }
        if let Err((code, message)) = dry_run(admin, &object) {
            panic!("{source}: the API server refused {kind} ({code}): {message}");
        }
        checked.push(kind);
    }
    for kind in [
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "Deployment",
        "Service",
        "CronJob",
        "NetworkPolicy",
    ] {
        assert!(
            checked.iter().any(|k| k == kind),
            "{kind} was not checked: {checked:?}"
        );
    }
}

/// The Pod a workload's controller would create, in `namespace`.
fn pod_of(workload: &Value, namespace: &str) -> Value {
    let template = match workload["kind"].as_str() {
        Some("Deployment") => &workload["spec"]["template"],
        Some("CronJob") => &workload["spec"]["jobTemplate"]["spec"]["template"],
        other => panic!("not a workload: {other:?}"),
    };
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": workload["metadata"]["name"],
            "namespace": namespace,
            "labels": template["metadata"]["labels"],
        },
        "spec": template["spec"],
    })
}

#[test]
fn real_every_workload_passes_pod_security_restricted() {
    let Some(env) = EnvTest::shared() else {
        return;
    };
    let admin = env.admin();
    let namespace = "k3sdoctor-restricted";
    admin.create(
        "/api/v1/namespaces",
        &json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "name": namespace,
                "labels": {
                    "pod-security.kubernetes.io/enforce": "restricted",
                    "pod-security.kubernetes.io/enforce-version": "latest",
                },
            },
        }),
    );

    let workloads: Vec<(String, Value)> = deploy_objects()
        .into_iter()
        .filter(|(_, o)| ["Deployment", "CronJob"].contains(&o["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(workloads.len(), 2, "serve's Deployment and the CronJob");
    for (source, workload) in &workloads {
        let pod = pod_of(workload, namespace);
        // ServiceAccount admission refuses a Pod whose account does not exist; PodSecurity
        // runs before it, so the account is made for real.
        let account = pod["spec"]["serviceAccountName"].as_str().unwrap();
        admin.create(
            &format!("/api/v1/namespaces/{namespace}/serviceaccounts"),
            &json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account}}),
        );
        if let Err((code, message)) = dry_run(admin, &pod) {
            panic!(
                "{source}: Pod Security restricted refused the {} pod ({code}): {message}",
                workload["kind"]
            );
        }
        // The workload object itself is accepted there too.
        let mut moved = workload.clone();
        moved["metadata"]["namespace"] = json!(namespace);
        if let Err((code, message)) = dry_run(admin, &moved) {
            panic!(
                "{source}: {} refused in {namespace} ({code}): {message}",
                workload["kind"]
            );
        }

        // The check can fail: the same pod without the container's securityContext is refused.
        let mut loose = pod.clone();
        loose["spec"]["containers"][0]
            .as_object_mut()
            .unwrap()
            .remove("securityContext");
        match dry_run(admin, &loose) {
            Err((403, message)) => assert!(
                message.contains("violates PodSecurity \"restricted"),
                "{message}"
            ),
            other => panic!("a pod without securityContext was not refused: {other:?}"),
        }
    }
}

/// The README's bindings of its read-only roles to a person, as its "Against your cluster"
/// block creates them: `(collection, name, roleRef kind, role)`.
fn readme_bindings() -> Vec<(String, String, &'static str, String)> {
    let readme = std::fs::read_to_string(crate::support::harness::repo_path("README.md")).unwrap();
    let mut out = Vec::new();
    for line in readme.lines().filter(|l| l.starts_with("kubectl ")) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let after = |flag: &str| {
            words
                .iter()
                .position(|w| *w == flag)
                .map(|i| words[i + 1].to_string())
        };
        let Some(at) = words.iter().position(|w| *w == "create") else {
            continue;
        };
        let name = words[at + 2].to_string();
        match (words[at + 1], after("-n")) {
            ("clusterrolebinding", _) => out.push((
                "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings".to_string(),
                name,
                "ClusterRole",
                after("--clusterrole").unwrap(),
            )),
            ("rolebinding", Some(ns)) => out.push((
                format!("/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings"),
                name,
                "Role",
                after("--role").unwrap(),
            )),
            _ => {}
        }
    }
    out.retain(|(_, _, _, role)| role == "k3sdoctor-read-only");
    assert_eq!(
        out.len(),
        4,
        "the README binds its four read-only roles: {out:?}"
    );
    out
}

/// A person bound as the README says, then `kubectl apply -f deploy/k3sdoctor-cronjob.yaml`
/// (each object created or replaced, as apply leaves it): the manifest's bindings have names of
/// their own, so the person's `check` still reads everything, and the uninstall's delete of the
/// manifest's bindings leaves the person's in place.
#[test]
fn real_the_cronjob_manifest_leaves_the_readme_users_bindings_alone() {
    use crate::common::run_as;
    use crate::support::envtest::User;
    use crate::support::envtest::servers::SimCluster;
    use crate::support::readme::{readme_namespaced_role, readme_role, readme_role_in};

    let Some(env) =
        EnvTest::start("real_the_cronjob_manifest_leaves_the_readme_users_bindings_alone")
    else {
        return;
    };
    let _cluster = SimCluster::start(&env, "k3s", "v1.29.4+k3s1", 1, &[]);
    let admin = env.admin();
    admin.apply_yaml(&readme_role("k3sdoctor-read-only"));
    admin.apply_yaml(&readme_namespaced_role("k3sdoctor-read-only"));
    admin.apply_yaml(&readme_role_in("k3sdoctor-read-only", "kube-system"));
    admin.apply_yaml(&readme_role_in("k3sdoctor-read-only", "kube-node-lease"));
    let bindings = readme_bindings();
    for (collection, name, kind, role) in &bindings {
        let mut binding = json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": if *kind == "Role" { "RoleBinding" } else { "ClusterRoleBinding" },
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                          "name": User::Viewer.name()}]
        });
        if let Some(ns) = collection.split("/namespaces/").nth(1) {
            binding["metadata"]["namespace"] = json!(ns.split('/').next().unwrap());
        }
        admin.put(collection, &binding);
    }
    let before = run_as(&env, User::Viewer, &["check", "-o", "json"]);
    assert!(matches!(before.code, 0 | 1), "{}", before.stderr);

    let manifest: Vec<Value> = yaml_documents("deploy/k3sdoctor-cronjob.yaml")
        .into_iter()
        .filter(|o| {
            o["apiVersion"] == "rbac.authorization.k8s.io/v1" || o["kind"] == "ServiceAccount"
        })
        .collect();
    for object in &manifest {
        admin.put(&collection(object).unwrap(), object);
    }
    let after = run_as(&env, User::Viewer, &["check", "-o", "json"]);
    assert!(
        matches!(after.code, 0 | 1) && !after.stderr.contains("forbidden"),
        "the manifest took the README user's rights away:\n{}",
        after.stderr
    );
    // The uninstall deletes the manifest's bindings: the person's stay.
    for binding in manifest
        .iter()
        .filter(|o| o["kind"].as_str().is_some_and(|k| k.ends_with("Binding")))
    {
        let path = format!(
            "{}/{}",
            collection(binding).unwrap(),
            binding["metadata"]["name"].as_str().unwrap()
        );
        admin
            .request("DELETE", &path, "application/json", None)
            .unwrap_or_else(|e| panic!("DELETE {path}: {e:?}"));
    }
    for (collection, name, _, _) in &bindings {
        let kept = admin.get(&format!("{collection}/{name}"));
        assert!(kept.is_some(), "the uninstall deleted the README's {name}");
    }
}
