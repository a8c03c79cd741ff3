//! `deploy/` as a user applies it: `kubectl apply -k deploy` (the base, for a plain k3s
//! cluster), the overlay with the Prometheus Operator's objects, the optional components, the
//! Rancher Fleet bundle (`deploy/fleet.yaml`), and the image every workload runs, which must be
//! the one `deploy/image/build.sh` names in its archive.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::support::harness::repo_path;
use crate::support::kustomize;
use crate::support::manifests::yaml_documents;

/// What the image archive is named (deploy/image/build.sh passes the repository to
/// oci_archive.py, the version is the binary's).
fn image_reference() -> String {
    format!("localhost/k3sdoctor:{}", env!("CARGO_PKG_VERSION"))
}

/// The directories `kubectl kustomize` builds directly.
const BUILDABLE: [&str; 2] = ["deploy", "deploy/overlays/prometheus-operator"];
/// The optional components, each added with one line.
const COMPONENTS: [&str; 2] = [
    "deploy/components/prometheus-operator",
    "deploy/components/network-policy",
];

fn kinds(objects: &[Value]) -> BTreeSet<String> {
    objects
        .iter()
        .map(|o| o["kind"].as_str().unwrap().to_string())
        .collect()
}

fn containers(object: &Value) -> Vec<&Value> {
    let spec = match object["kind"].as_str() {
        Some("Deployment") => &object["spec"]["template"]["spec"],
        Some("CronJob") => &object["spec"]["jobTemplate"]["spec"]["template"]["spec"],
        _ => return Vec::new(),
    };
    ["initContainers", "containers"]
        .iter()
        .flat_map(|k| spec[*k].as_array().into_iter().flatten())
        .collect()
}

#[test]
fn the_base_applies_on_a_cluster_without_the_prometheus_operator() {
    let base = kustomize::build("deploy");
    assert_eq!(
        kinds(&base),
        [
            "ClusterRole",
            "ClusterRoleBinding",
            "Deployment",
            "Role",
            "RoleBinding",
            "Service",
            "ServiceAccount"
        ]
        .map(String::from)
        .into(),
    );
    for object in &base {
        let api = object["apiVersion"].as_str().unwrap();
        assert!(!api.starts_with("monitoring.coreos.com/"), "{object}");
    }
    let with_operator = kustomize::build("deploy/overlays/prometheus-operator");
    let added: BTreeSet<String> = kinds(&with_operator)
        .difference(&kinds(&base))
        .cloned()
        .collect();
    assert_eq!(
        added,
        ["PrometheusRule", "ServiceMonitor"]
            .map(String::from)
            .into()
    );
    // And the ClusterRole and binding that let Prometheus's token read /metrics.
    assert_eq!(with_operator.len(), base.len() + 4);
}

/// Every object file under deploy/base and deploy/components is built by some kustomization:
/// a file added to a directory but not to its kustomization would silently not be applied.
#[test]
fn every_manifest_under_base_and_components_is_in_a_kustomization() {
    let mut read: BTreeSet<PathBuf> = BTreeSet::new();
    for dir in BUILDABLE.iter().chain(&COMPONENTS) {
        read.extend(kustomize::files(dir));
    }
    for dir in ["deploy/base"].iter().chain(&COMPONENTS) {
        for entry in std::fs::read_dir(repo_path(dir)).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            if name.ends_with(".yaml") {
                let file = Path::new(dir).join(&name);
                assert!(
                    read.contains(&file),
                    "{} is in no kustomization",
                    file.display()
                );
            }
        }
    }
}

#[test]
fn every_workload_runs_the_image_the_archive_is_named() {
    let mut objects = kustomize::build("deploy/overlays/prometheus-operator");
    objects.extend(yaml_documents("deploy/k3sdoctor-cronjob.yaml"));
    let mut seen = 0;
    for object in &objects {
        for container in containers(object) {
            assert_eq!(container["image"], image_reference(), "{}", object["kind"]);
            // Imported on the nodes, never pulled: a failed import shows as ErrImagePull
            // naming localhost/, not as an image from a registry nobody chose.
            assert_eq!(container["imagePullPolicy"], "IfNotPresent");
            seen += 1;
        }
    }
    assert_eq!(seen, 2, "the Deployment's and the CronJob's containers");
    // The build names the archive the same way.
    let build = std::fs::read_to_string(repo_path("deploy/image/build.sh")).unwrap();
    let (name, _) = image_reference()
        .rsplit_once(':')
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .unwrap();
    assert!(
        build.contains(&format!("--name {name} ")),
        "build.sh does not name {name}"
    );
}

#[test]
fn the_network_policy_admits_only_the_monitoring_namespace_to_the_serve_port() {
    let docs = yaml_documents("deploy/components/network-policy/serve-networkpolicy.yaml");
    assert_eq!(docs.len(), 1);
    let policy = &docs[0];
    assert_eq!(policy["kind"], "NetworkPolicy");
    let base = kustomize::build("deploy");
    let deployment = base.iter().find(|o| o["kind"] == "Deployment").unwrap();
    let pod_labels = &deployment["spec"]["template"]["metadata"]["labels"];
    let selector = policy["spec"]["podSelector"]["matchLabels"]
        .as_object()
        .unwrap();
    assert!(!selector.is_empty() && selector.iter().all(|(k, v)| &pod_labels[k] == v));
    assert_eq!(
        policy["metadata"]["namespace"],
        deployment["metadata"]["namespace"]
    );
    assert_eq!(policy["spec"]["policyTypes"], json!(["Ingress"]));
    let port = &deployment["spec"]["template"]["spec"]["containers"][0]["ports"][0]["name"];
    assert_eq!(
        policy["spec"]["ingress"],
        json!([{
            "from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}],
            "ports": [{"port": port, "protocol": "TCP"}],
        }])
    );
}

/// The NetworkPolicy docs/install.md shows is the component's (without its labels).
#[test]
fn the_documented_network_policy_is_the_components() {
    let doc = std::fs::read_to_string(repo_path("docs/install.md")).unwrap();
    let block = doc
        .split("```yaml\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .find(|b| b.contains("kind: NetworkPolicy"))
        .expect("docs/install.md shows the NetworkPolicy");
    let shown: Value = serde_yaml_ng::from_str(block).unwrap();
    let file = &yaml_documents("deploy/components/network-policy/serve-networkpolicy.yaml")[0];
    assert_eq!(shown["spec"], file["spec"]);
    assert_eq!(shown["metadata"]["name"], file["metadata"]["name"]);
    assert_eq!(
        shown["metadata"]["namespace"],
        file["metadata"]["namespace"]
    );
}

/// deploy/fleet.yaml: a Fleet bundle whose kustomize directories build, the default one being
/// the base, and whose objects land where they say.
#[test]
fn the_fleet_bundle_builds_the_base_and_the_operator_overlay() {
    let docs = yaml_documents("deploy/fleet.yaml");
    assert_eq!(docs.len(), 1);
    let fleet = &docs[0];
    let dir_of = |kustomize: &Value| {
        let dir = kustomize["dir"].as_str().expect("a kustomize dir");
        normalize(&Path::new("deploy").join(dir))
    };
    assert_eq!(dir_of(&fleet["kustomize"]), Path::new("deploy"));
    let namespace = fleet["defaultNamespace"].as_str().unwrap();
    let customizations = fleet["targetCustomizations"].as_array().unwrap();
    assert!(!customizations.is_empty());
    let mut dirs = vec![dir_of(&fleet["kustomize"])];
    for target in customizations {
        assert!(target["name"].is_string(), "{target}");
        let labels = target["clusterSelector"]["matchLabels"]
            .as_object()
            .unwrap();
        assert!(!labels.is_empty(), "{target}: selects every cluster");
        dirs.push(dir_of(&target["kustomize"]));
    }
    assert!(dirs.contains(&PathBuf::from("deploy/overlays/prometheus-operator")));
    for dir in dirs {
        let objects = kustomize::build(dir.to_str().unwrap());
        assert!(!objects.is_empty());
        for object in objects {
            if let Some(ns) = object["metadata"]["namespace"].as_str() {
                assert!(
                    [namespace, "default", "kube-node-lease"].contains(&ns),
                    "{}: {object}",
                    dir.display()
                );
            }
        }
    }
    // It is documented next to the --all-contexts fleet check.
    let fleets = std::fs::read_to_string(repo_path("docs/fleets.md")).unwrap();
    assert!(fleets.contains("deploy/fleet.yaml"), "docs/fleets.md");
}

fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// `kubectl kustomize DIR` (offline: no API server is asked), or `None` without kubectl.
fn kubectl_kustomize(dir: &Path) -> Option<Vec<Value>> {
    let out = Command::new("kubectl")
        .arg("kustomize")
        .arg(dir)
        .env("KUBECONFIG", "/nonexistent")
        .output()
        .ok()?;
    assert!(
        out.status.success(),
        "kubectl kustomize {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    Some(
        serde_yaml_ng::Deserializer::from_str(&text)
            .map(|doc| serde::Deserialize::deserialize(doc).unwrap())
            .collect(),
    )
}

fn sorted(mut objects: Vec<Value>) -> Vec<Value> {
    objects.sort_by_key(|o| {
        format!(
            "{}/{}/{}",
            o["kind"], o["metadata"]["namespace"], o["metadata"]["name"]
        )
    });
    objects
}

/// kubectl's own kustomize (CI runs these; kubectl 1.21+ for components) builds exactly the
/// objects the tests check, for the base, the overlay, and each component added with its one
/// line to an overlay of a user's own.
#[test]
fn kubectl_kustomize_builds_every_directory_as_the_tests_do_when_installed() {
    if Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .output()
        .is_err()
    {
        println!("skipped: kubectl is not installed");
        return;
    }
    for dir in BUILDABLE {
        let built = kubectl_kustomize(&repo_path(dir)).unwrap();
        assert_eq!(sorted(built), sorted(kustomize::build(dir)), "{dir}");
    }
    // A user's overlay elsewhere, with the base and one component: paths relative to it.
    let home = tempfile::tempdir().unwrap();
    let overlay = home.path().join("overlay");
    std::fs::create_dir(&overlay).unwrap();
    let up = "../".repeat(overlay.components().count() - 1);
    let repo = repo_path("");
    let from_overlay = |dir: &str| {
        format!(
            "{up}{}",
            repo.join(dir).strip_prefix("/").unwrap().display()
        )
    };
    for component in COMPONENTS {
        std::fs::write(
            overlay.join("kustomization.yaml"),
            format!(
                "resources: [{}]\ncomponents: [{}]\n",
                from_overlay("deploy/base"),
                from_overlay(component)
            ),
        )
        .unwrap();
        let built = kubectl_kustomize(&overlay).unwrap();
        let mut expected = kustomize::build("deploy/base");
        expected.extend(kustomize::build(component));
        assert_eq!(sorted(built), sorted(expected), "base + {component}");
    }
}
