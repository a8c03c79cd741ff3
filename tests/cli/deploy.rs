//! `deploy/k3sdoctor-cronjob.yaml`: a complete manifest (ServiceAccount, the README's
//! read-only ClusterRole, its binding, the CronJob) whose command the binary accepts.

use serde_json::{Value, json};

use crate::support::harness::{k3sdoctor, repo_path};
use crate::support::manifests::yaml_documents;
use crate::support::readme::{readme_namespaced_role, readme_role, readme_role_in};

const MANIFEST: &str = "deploy/k3sdoctor-cronjob.yaml";

fn documents() -> Vec<Value> {
    yaml_documents(MANIFEST)
}

fn find<'a>(docs: &'a [Value], kind: &str) -> &'a Value {
    docs.iter()
        .find(|d| d["kind"] == kind)
        .unwrap_or_else(|| panic!("{MANIFEST} has no {kind}"))
}

#[test]
fn the_manifest_binds_a_service_account_to_the_read_only_role_and_runs_check() {
    let docs = documents();
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "ServiceAccount",
            "ClusterRole",
            "Role",
            "RoleBinding",
            "Role",
            "RoleBinding",
            "ClusterRoleBinding",
            "CronJob"
        ]
    );
    for doc in &docs {
        assert!(doc["apiVersion"].is_string(), "{doc}");
        assert!(doc["metadata"]["name"].is_string(), "{doc}");
    }

    let account = find(&docs, "ServiceAccount");
    assert_eq!(account["apiVersion"], "v1");
    let (name, namespace) = (
        &account["metadata"]["name"],
        &account["metadata"]["namespace"],
    );

    let readme: Value = serde_yaml_ng::from_str(&readme_role("k3sdoctor-read-only")).unwrap();
    assert_eq!(
        find(&docs, "ClusterRole"),
        &readme,
        "the manifest's role differs from the README's"
    );

    let readme_role_in_default: Value =
        serde_yaml_ng::from_str(&readme_namespaced_role("k3sdoctor-read-only")).unwrap();
    assert_eq!(
        find(&docs, "Role"),
        &readme_role_in_default,
        "the manifest's Role in default differs from the README's"
    );
    let role_binding = find(&docs, "RoleBinding");
    assert_eq!(role_binding["metadata"]["namespace"], "default");
    assert_eq!(
        role_binding["roleRef"],
        json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "k3sdoctor-read-only"})
    );
    assert_eq!(
        role_binding["subjects"],
        json!([{"kind": "ServiceAccount", "name": name, "namespace": namespace}])
    );

    // The Role in kube-system (packaged-charts) and its binding, to the same account.
    let in_kube_system = |kind: &str| {
        docs.iter()
            .find(|d| d["kind"] == kind && d["metadata"]["namespace"] == "kube-system")
            .unwrap_or_else(|| panic!("{MANIFEST} has no {kind} in kube-system"))
    };
    let readme_role_in_kube_system: Value =
        serde_yaml_ng::from_str(&readme_role_in("k3sdoctor-read-only", "kube-system")).unwrap();
    assert_eq!(
        in_kube_system("Role"),
        &readme_role_in_kube_system,
        "the manifest's Role in kube-system differs from the README's"
    );
    assert_eq!(
        in_kube_system("RoleBinding")["roleRef"],
        role_binding["roleRef"]
    );
    assert_eq!(
        in_kube_system("RoleBinding")["subjects"],
        role_binding["subjects"]
    );

    let binding = find(&docs, "ClusterRoleBinding");
    assert_eq!(binding["apiVersion"], "rbac.authorization.k8s.io/v1");
    assert_eq!(
        binding["roleRef"],
        json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "k3sdoctor-read-only"})
    );
    assert_eq!(
        binding["subjects"],
        json!([{"kind": "ServiceAccount", "name": name, "namespace": namespace}])
    );

    let cron = find(&docs, "CronJob");
    assert_eq!(cron["apiVersion"], "batch/v1");
    assert_eq!(&cron["metadata"]["namespace"], namespace);
    assert_eq!(
        cron["spec"]["schedule"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .count(),
        5
    );
    let pod = &cron["spec"]["jobTemplate"]["spec"]["template"]["spec"];
    assert_eq!(&pod["serviceAccountName"], name);
    assert!(["Never", "OnFailure"].contains(&pod["restartPolicy"].as_str().unwrap()));
    let containers = pod["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 1);
    assert!(
        containers[0]["image"]
            .as_str()
            .is_some_and(|i| !i.is_empty())
    );
}

#[test]
fn the_cronjobs_command_prints_only_json_on_stdout() {
    let docs = documents();
    let container =
        &find(&docs, "CronJob")["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0];
    let args: Vec<&str> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let dump = repo_path("tests/fixtures/split-cluster");
    let out = k3sdoctor(
        ["--from-file", dump.to_str().unwrap()]
            .into_iter()
            .chain(args),
    )
    .run();
    out.code(1);
    let report: Value = out.json();
    assert_eq!(report["kind"], "CheckReport");
    assert!(out.stderr.is_empty(), "{}", out.stderr);
}

/// kubectl decodes every object (offline: `apply --dry-run=client` needs an API server for
/// its discovery, which a test machine does not have).
#[test]
fn kubectl_reads_every_object_when_installed() {
    let Ok(out) = std::process::Command::new("kubectl")
        .args(["label", "--local", "--dry-run=client", "-o", "name", "-f"])
        .arg(repo_path(MANIFEST))
        .arg("checked=true")
        .env("KUBECONFIG", "/nonexistent")
        .output()
    else {
        println!("skipped: kubectl is not installed");
        return;
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let names: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        names,
        [
            "serviceaccount/k3sdoctor",
            "clusterrole.rbac.authorization.k8s.io/k3sdoctor-read-only",
            "role.rbac.authorization.k8s.io/k3sdoctor-read-only",
            "rolebinding.rbac.authorization.k8s.io/k3sdoctor-cronjob",
            "role.rbac.authorization.k8s.io/k3sdoctor-read-only",
            "rolebinding.rbac.authorization.k8s.io/k3sdoctor-cronjob",
            "clusterrolebinding.rbac.authorization.k8s.io/k3sdoctor-cronjob",
            "cronjob.batch/k3sdoctor"
        ]
    );
}

/// On an affected release, version-affected stays until the upgrade: the CronJob ignores it
/// (still listed, marked), so a healthy cluster does not fail every run.
#[test]
fn the_cronjob_ignores_version_affected_on_a_healthy_affected_cluster() {
    use crate::support::fake_api::{FakeApi, Role};
    use crate::support::objects::{NOW, lease, server};
    let docs = documents();
    let container =
        &find(&docs, "CronJob")["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0];
    let args: Vec<&str> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let affected = "v1.29.4+k3s1";
    let fake = FakeApi::with_objects(vec![
        server("s1", affected),
        server("s2", affected),
        server("s3", affected),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
    ]);
    let out = k3sdoctor(args.iter().copied().chain(["--now", NOW]))
        .cluster(&fake, Role::ReadOnly)
        .run();
    out.code(0);
    let report: Value = out.json();
    assert_eq!(report["findings"][0]["code"], "version-affected");
    assert_eq!(report["findings"][0]["ignored"], true);
    assert_eq!(report["summary"]["warnings"], 0);
}

/// The bindings the docs tell a person to create (`kubectl create [cluster]rolebinding NAME`,
/// with `-n NS`), from the README, docs/, `rbac`'s output and its help: `(namespace, name)`,
/// `""` for a ClusterRoleBinding.
fn bindings_for_people() -> Vec<(String, String)> {
    let mut texts: Vec<String> = [
        "README.md",
        "docs/rbac.md",
        "docs/install.md",
        "docs/rancher.md",
    ]
    .iter()
    .map(|f| std::fs::read_to_string(repo_path(f)).unwrap())
    .collect();
    for role in [
        "read-only",
        "repair",
        "serve",
        "heal",
        "rancher",
        "secrets-metadata",
    ] {
        texts.push(k3sdoctor(["rbac", role]).run().code(0).stdout.clone());
    }
    texts.push(k3sdoctor(["rbac", "--help"]).run().code(0).stdout.clone());
    let mut out = Vec::new();
    for text in &texts {
        // The help continues a command on the next line after a backslash.
        let joined = text.replace("\\\n", " ");
        for line in joined.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            let Some(at) = words.iter().position(|w| *w == "create") else {
                continue;
            };
            // A binding of the manifests' own ServiceAccount may share its name.
            if !words.iter().any(|w| *w == "--user" || *w == "--group") {
                continue;
            }
            let ns = words
                .iter()
                .position(|w| *w == "-n")
                .map_or(String::new(), |i| words[i + 1].to_string());
            match words.get(at + 1..at + 3) {
                Some(["clusterrolebinding", name]) => out.push((String::new(), name.to_string())),
                Some(["rolebinding", name]) => out.push((ns, name.to_string())),
                _ => {}
            }
        }
    }
    out
}

/// Applying a manifest after binding a person as the docs say must not rewrite that person's
/// binding (apply replaces its subjects), nor may deleting the manifest delete it: every
/// binding deploy/ ships has a name no doc gives a person's.
#[test]
fn no_manifest_binding_shares_a_name_with_a_persons_binding() {
    let people = bindings_for_people();
    assert!(
        people.contains(&(String::new(), "k3sdoctor-read-only".to_string()))
            && people.contains(&(
                "kube-system".to_string(),
                "k3sdoctor-secrets-metadata".to_string()
            )),
        "{people:?}"
    );
    let mut shipped = Vec::new();
    for file in [
        MANIFEST,
        "deploy/secrets-metadata-role.yaml",
        "deploy/repair-role.yaml",
        "deploy/rancher/rancher-read-only.yaml",
        "deploy/heal/heal-rolebinding.yaml",
    ] {
        shipped.extend(yaml_documents(file));
    }
    for dir in ["deploy/base", "deploy/overlays/prometheus-operator"] {
        shipped.extend(crate::support::kustomize::build(dir));
    }
    let mut checked = 0;
    for object in shipped.iter().filter(|o| {
        o["kind"]
            .as_str()
            .is_some_and(|k| k.ends_with("RoleBinding"))
    }) {
        let ns = if object["kind"] == "ClusterRoleBinding" {
            String::new()
        } else {
            object["metadata"]["namespace"]
                .as_str()
                .unwrap_or("default")
                .to_string()
        };
        let name = object["metadata"]["name"].as_str().unwrap().to_string();
        assert!(
            !people.contains(&(ns.clone(), name.clone())),
            "the manifests' {ns}/{name} is also the binding the docs give a person"
        );
        checked += 1;
    }
    assert!(checked >= 8, "{checked} bindings checked");
}
