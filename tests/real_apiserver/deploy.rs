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
