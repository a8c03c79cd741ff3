//! The manifests under `deploy/` are what a real kube-apiserver accepts: every object the
//! kustomization lists and the CronJob manifest's, created with a server-side dry run
//! (`dryRun=All`: admission and validation run, nothing is stored). The Prometheus Operator's
//! kinds are left out: the test bed has no such CRDs (their structure is checked in
//! `tests/cli/deploy_serve.rs`).

use serde_json::Value;

use crate::support::envtest::EnvTest;
use crate::support::manifests::yaml_documents;

fn collection(object: &Value) -> Option<String> {
    let namespace = object["metadata"]["namespace"]
        .as_str()
        .unwrap_or("default");
    let path = match object["kind"].as_str()? {
        "ServiceAccount" => format!("/api/v1/namespaces/{namespace}/serviceaccounts"),
        "Service" => format!("/api/v1/namespaces/{namespace}/services"),
        "Deployment" => format!("/apis/apps/v1/namespaces/{namespace}/deployments"),
        "CronJob" => format!("/apis/batch/v1/namespaces/{namespace}/cronjobs"),
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

#[test]
fn real_deploy_manifests_are_accepted_by_the_api_server() {
    let Some(env) = EnvTest::start("real_deploy_manifests_are_accepted_by_the_api_server") else {
        return;
    };
    let admin = env.admin();
    let kustomization = &yaml_documents("deploy/kustomization.yaml")[0];
    let mut files: Vec<String> = kustomization["resources"]
        .as_array()
        .expect("the kustomization lists its resources")
        .iter()
        .map(|r| format!("deploy/{}", r.as_str().unwrap()))
        .collect();
    files.push("deploy/k3sdoctor-cronjob.yaml".into());

    let mut checked = Vec::new();
    for file in &files {
        for object in yaml_documents(file) {
            let kind = object["kind"].as_str().unwrap_or_default().to_string();
            let Some(path) = collection(&object) else {
                assert!(
                    object["apiVersion"]
                        .as_str()
                        .is_some_and(|v| v.starts_with("monitoring.coreos.com/")),
                    "{file}: no collection known for {kind}"
                );
                continue;
            };
            let answer = admin.request(
                "POST",
                &format!("{path}?dryRun=All&fieldValidation=Strict"),
                "application/json",
                Some(&object),
            );
            if let Err((code, message)) = answer {
                panic!("{file}: the API server refused {kind} ({code}): {message}");
            }
            checked.push(kind);
        }
    }
    for kind in [
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Deployment",
        "Service",
        "CronJob",
    ] {
        assert!(
            checked.iter().any(|k| k == kind),
            "{kind} was not checked: {checked:?}"
        );
    }
}
