//! `deploy/kustomization.yaml` (`k3sdoctor serve` with the README's read-only role and its
//! Service, in `deploy/base/`), the Prometheus Operator component (ServiceMonitor and
//! PrometheusRule) and `deploy/prometheus/` (the alert rules as a plain rules file, with their
//! promtool unit tests).

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use regex::Regex;
use serde_json::{Value, json};

use crate::support::harness::{k3sdoctor, repo_path};
use crate::support::manifests::yaml_documents;
use crate::support::readme::{readme_namespaced_role, readme_role, readme_role_in};

const KUSTOMIZATION: &str = "deploy/kustomization.yaml";
const BASE: &str = "deploy/base/kustomization.yaml";
const OPERATOR_COMPONENT: &str = "deploy/components/prometheus-operator/kustomization.yaml";
const CRONJOB: &str = "deploy/k3sdoctor-cronjob.yaml";
const RULES: &str = "deploy/prometheus/k3sdoctor-rules.yaml";
const PROMETHEUS_RULE: &str = "deploy/components/prometheus-operator/k3sdoctor-prometheusrule.yaml";
const RULE_TESTS: &str = "deploy/prometheus/tests";

/// What the base applies, then what the Prometheus Operator component adds, in their order: one
/// object a file (paths relative to deploy/).
const SERVE_MANIFESTS: [(&str, &str, &str); 17] = [
    ("base/serve-serviceaccount.yaml", "ServiceAccount", "v1"),
    (
        "base/serve-clusterrole.yaml",
        "ClusterRole",
        "rbac.authorization.k8s.io/v1",
    ),
    (
        "base/serve-clusterrolebinding.yaml",
        "ClusterRoleBinding",
        "rbac.authorization.k8s.io/v1",
    ),
    (
        "base/serve-auth-clusterrole.yaml",
        "ClusterRole",
        "rbac.authorization.k8s.io/v1",
    ),
    (
        "base/serve-auth-clusterrolebinding.yaml",
        "ClusterRoleBinding",
        "rbac.authorization.k8s.io/v1",
    ),
    (
        "base/serve-role.yaml",
        "Role",
        "rbac.authorization.k8s.io/v1",
    ),
    (
        "base/serve-rolebinding.yaml",
        "RoleBinding",
        "rbac.authorization.k8s.io/v1",
    ),
    (
        "base/serve-role-kube-system.yaml",
        "Role",
        "rbac.authorization.k8s.io/v1",
    ),
    (
        "base/serve-rolebinding-kube-system.yaml",
        "RoleBinding",
        "rbac.authorization.k8s.io/v1",
    ),
    (
        "base/serve-role-kube-node-lease.yaml",
        "Role",
        "rbac.authorization.k8s.io/v1",
    ),
    (
        "base/serve-rolebinding-kube-node-lease.yaml",
        "RoleBinding",
        "rbac.authorization.k8s.io/v1",
    ),
    ("base/serve-deployment.yaml", "Deployment", "apps/v1"),
    ("base/serve-service.yaml", "Service", "v1"),
    (
        "components/prometheus-operator/serve-servicemonitor.yaml",
        "ServiceMonitor",
        "monitoring.coreos.com/v1",
    ),
    (
        "components/prometheus-operator/k3sdoctor-prometheusrule.yaml",
        "PrometheusRule",
        "monitoring.coreos.com/v1",
    ),
    (
        "components/prometheus-operator/metrics-reader-clusterrole.yaml",
        "ClusterRole",
        "rbac.authorization.k8s.io/v1",
    ),
    (
        "components/prometheus-operator/metrics-reader-clusterrolebinding.yaml",
        "ClusterRoleBinding",
        "rbac.authorization.k8s.io/v1",
    ),
];

/// How many of SERVE_MANIFESTS the base holds (the rest need the Prometheus Operator).
const IN_BASE: usize = 13;

/// The metrics `k3sdoctor serve` exports and their labels (besides the target's own, such as
/// `job` and `instance`); `up` is Prometheus's own.
const METRICS: [(&str, &[&str]); 25] = [
    ("up", &[]),
    ("k3sdoctor_up", &[]),
    ("k3sdoctor_ready", &[]),
    // `cluster` only under serve --rancher-clusters (docs/rancher.md).
    ("k3sdoctor_findings", &["code", "severity", "cluster"]),
    ("k3sdoctor_cluster_up", &["cluster"]),
    ("k3sdoctor_lease_split", &["lock", "affected", "cluster"]),
    ("k3sdoctor_lease_holder_info", &["lock", "holder", "node"]),
    ("k3sdoctor_lease_renew_age_seconds", &["lock"]),
    ("k3sdoctor_snapshot_entries", &["state", "cluster"]),
    ("k3sdoctor_etcd_members", &["state", "cluster"]),
    ("k3sdoctor_datastore_size_bytes", &["server"]),
    ("k3sdoctor_datastore_in_use_bytes", &["server"]),
    ("k3sdoctor_datastore_quota_bytes", &["server"]),
    (
        "k3sdoctor_datastore_latency_p99_seconds",
        &["server", "measure"],
    ),
    ("k3sdoctor_last_evaluation_timestamp_seconds", &[]),
    ("k3sdoctor_evaluation_duration_seconds_bucket", &["le"]),
    ("k3sdoctor_evaluation_duration_seconds_sum", &[]),
    ("k3sdoctor_evaluation_duration_seconds_count", &[]),
    ("k3sdoctor_build_info", &["version"]),
    ("k3sdoctor_watch_synced", &["resource"]),
    ("k3sdoctor_watch_errors_total", &["resource", "reason"]),
    // With --heal dry-run|on.
    ("k3sdoctor_heals_total", &["outcome"]),
    ("k3sdoctor_heal_paused", &[]),
    ("k3sdoctor_heal_blocked", &["reason"]),
    ("k3sdoctor_heal_last_timestamp_seconds", &[]),
];

/// Labels a target adds to every series: Prometheus's own, and the Prometheus Operator's.
const TARGET_LABELS: [&str; 7] = [
    "job",
    "instance",
    "namespace",
    "service",
    "pod",
    "endpoint",
    "container",
];

fn serve_objects() -> Vec<Value> {
    SERVE_MANIFESTS
        .iter()
        .flat_map(|(file, _, _)| yaml_documents(&format!("deploy/{file}")))
        .collect()
}

fn find<'a>(docs: &'a [Value], kind: &str) -> &'a Value {
    docs.iter()
        .find(|d| d["kind"] == kind)
        .unwrap_or_else(|| panic!("the kustomization has no {kind}"))
}

fn str_list(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {value}"))
        .iter()
        .map(|v| v.as_str().unwrap_or_else(|| panic!("not a string: {v}")))
        .collect()
}

/// Every key/value of `selector` is among `labels`.
fn selects(selector: &Value, labels: &Value) -> bool {
    let selector = selector.as_object().expect("a selector map");
    !selector.is_empty() && selector.iter().all(|(k, v)| &labels[k] == v)
}

fn pod_template(docs: &[Value]) -> &Value {
    &find(docs, "Deployment")["spec"]["template"]
}

fn container(docs: &[Value]) -> &Value {
    let containers = pod_template(docs)["spec"]["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 1, "{containers:?}");
    &containers[0]
}

/// A memory quantity in MiB (`32Mi`, `1Gi`).
fn mebibytes(quantity: &Value) -> u64 {
    let q = quantity.as_str().unwrap_or_else(|| panic!("{quantity}"));
    if let Some(n) = q.strip_suffix("Mi") {
        n.parse().unwrap()
    } else if let Some(n) = q.strip_suffix("Gi") {
        n.parse::<u64>().unwrap() * 1024
    } else {
        panic!("write memory in Mi or Gi: {q}")
    }
}

/// The one document of a kustomization file, checked to be of `kind`.
fn kustomization(file: &str, kind: &str) -> Value {
    let docs = yaml_documents(file);
    assert_eq!(docs.len(), 1, "{file}");
    let api_version = match kind {
        "Component" => "kustomize.config.k8s.io/v1alpha1",
        _ => "kustomize.config.k8s.io/v1beta1",
    };
    assert_eq!(docs[0]["apiVersion"], api_version, "{file}");
    assert_eq!(docs[0]["kind"], kind, "{file}");
    docs[0].clone()
}

#[test]
fn the_kustomization_lists_exactly_the_serve_manifests() {
    // `kubectl apply -k deploy` applies the base, and only the base: it must apply on a cluster
    // without the Prometheus Operator's CRDs.
    let top = kustomization(KUSTOMIZATION, "Kustomization");
    assert_eq!(str_list(&top["resources"]), ["base"]);
    assert!(top["components"].is_null(), "{top}");

    let in_dir = |dir: &str| -> Vec<String> {
        SERVE_MANIFESTS
            .iter()
            .filter_map(|(file, _, _)| file.strip_prefix(dir).map(str::to_string))
            .collect()
    };
    let base = kustomization(BASE, "Kustomization");
    assert_eq!(str_list(&base["resources"]), in_dir("base/"));
    assert_eq!(in_dir("base/").len(), IN_BASE);
    let operator = kustomization(OPERATOR_COMPONENT, "Component");
    assert_eq!(
        str_list(&operator["resources"]),
        in_dir("components/prometheus-operator/")
    );
    for (file, _, _) in SERVE_MANIFESTS {
        assert!(repo_path(&format!("deploy/{file}")).is_file(), "{file}");
    }
    // The CronJob stays a manifest of its own, applied with `kubectl apply -f`.
    assert!(!str_list(&base["resources"]).contains(&"k3sdoctor-cronjob.yaml"));
    // The overlay ready to apply is the base plus that one component line.
    let overlay = kustomization(
        "deploy/overlays/prometheus-operator/kustomization.yaml",
        "Kustomization",
    );
    assert_eq!(str_list(&overlay["resources"]), ["../../base"]);
    assert_eq!(
        str_list(&overlay["components"]),
        ["../../components/prometheus-operator"]
    );
}

#[test]
fn each_serve_manifest_holds_one_object_of_its_kind_in_kube_system() {
    for (file, kind, api_version) in SERVE_MANIFESTS {
        let docs = yaml_documents(&format!("deploy/{file}"));
        assert_eq!(docs.len(), 1, "{file}");
        let doc = &docs[0];
        assert_eq!(doc["kind"], kind, "{file}");
        assert_eq!(doc["apiVersion"], api_version, "{file}");
        assert!(doc["metadata"]["name"].is_string(), "{file}");
        let cluster_scoped = kind.starts_with("Cluster");
        // The kubernetes Service's Endpoints live in default; so do the Role and its binding.
        // The Leases' and HelmCharts' Role and binding (the `-kube-system` files) are in
        // kube-system, the heartbeats' (`-kube-node-lease`) in kube-node-lease.
        let namespace = match kind {
            "Role" | "RoleBinding" if file.ends_with("-kube-node-lease.yaml") => "kube-node-lease",
            "Role" | "RoleBinding" if !file.ends_with("-kube-system.yaml") => "default",
            _ => "kube-system",
        };
        assert_eq!(
            doc["metadata"]["namespace"].as_str(),
            (!cluster_scoped).then_some(namespace),
            "{file}"
        );
    }
}

#[test]
fn the_role_is_the_readmes_and_the_binding_grants_it_to_the_serve_account() {
    let docs = serve_objects();
    let readme: Value = serde_yaml_ng::from_str(&readme_role("k3sdoctor-read-only")).unwrap();
    assert_eq!(
        find(&docs, "ClusterRole"),
        &readme,
        "the serve role differs from the README's"
    );

    let account = find(&docs, "ServiceAccount");
    let binding = find(&docs, "ClusterRoleBinding");
    assert_eq!(
        binding["roleRef"],
        json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "k3sdoctor-read-only"})
    );
    assert_eq!(
        binding["subjects"],
        json!([{
            "kind": "ServiceAccount",
            "name": account["metadata"]["name"],
            "namespace": account["metadata"]["namespace"],
        }])
    );
    let readme_role_in_default: Value =
        serde_yaml_ng::from_str(&readme_namespaced_role("k3sdoctor-read-only")).unwrap();
    assert_eq!(
        find(&docs, "Role"),
        &readme_role_in_default,
        "the serve Role in default differs from the README's"
    );
    let role_binding = find(&docs, "RoleBinding");
    assert_eq!(
        role_binding["roleRef"],
        json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "k3sdoctor-read-only"})
    );
    assert_eq!(role_binding["subjects"], binding["subjects"]);
    let in_kube_system = |kind: &str| {
        docs.iter()
            .find(|d| d["kind"] == kind && d["metadata"]["namespace"] == "kube-system")
            .unwrap_or_else(|| panic!("serve has no {kind} in kube-system"))
    };
    let readme_role_in_kube_system: Value =
        serde_yaml_ng::from_str(&readme_role_in("k3sdoctor-read-only", "kube-system")).unwrap();
    assert_eq!(
        in_kube_system("Role"),
        &readme_role_in_kube_system,
        "the serve Role in kube-system differs from the README's"
    );
    assert_eq!(
        in_kube_system("RoleBinding")["roleRef"],
        role_binding["roleRef"]
    );
    assert_eq!(
        in_kube_system("RoleBinding")["subjects"],
        binding["subjects"]
    );
    let pod = &pod_template(&docs)["spec"];
    assert_eq!(pod["serviceAccountName"], account["metadata"]["name"]);
    // The in-cluster config needs the account's token.
    assert_eq!(pod["automountServiceAccountToken"], true);
}

/// Applying both the CronJob manifest and the kustomization must not make one overwrite the
/// other: an object of the same kind, name and namespace in both is the same object (only the
/// read-only role is shared), and serve's binding is its own.
#[test]
fn the_serve_objects_share_only_the_identical_role_with_the_cronjob_manifest() {
    let key = |d: &Value| {
        (
            d["kind"].as_str().unwrap().to_string(),
            d["metadata"]["name"].as_str().unwrap().to_string(),
            d["metadata"]["namespace"]
                .as_str()
                .unwrap_or("")
                .to_string(),
        )
    };
    let cronjob: BTreeMap<_, _> = yaml_documents(CRONJOB)
        .into_iter()
        .map(|d| (key(&d), d))
        .collect();
    let mut shared = Vec::new();
    for doc in serve_objects() {
        if let Some(theirs) = cronjob.get(&key(&doc)) {
            assert_eq!(theirs, &doc, "{:?} differs between the two", key(&doc));
            shared.push(key(&doc).0);
        }
    }
    assert_eq!(shared, ["ClusterRole", "Role", "Role"]);
}

#[test]
fn the_deployment_runs_one_non_root_read_only_serve_with_small_resources() {
    let docs = serve_objects();
    let deployment = find(&docs, "Deployment");
    assert_eq!(deployment["spec"]["replicas"], 1);
    assert_eq!(deployment["spec"]["strategy"]["type"], "Recreate");
    let template = pod_template(&docs);
    assert!(selects(
        &deployment["spec"]["selector"]["matchLabels"],
        &template["metadata"]["labels"]
    ));

    let pod = &template["spec"];
    let c = container(&docs);
    let cronjob = yaml_documents(CRONJOB);
    let cronjob_pod = &find(&cronjob, "CronJob")["spec"]["jobTemplate"]["spec"]["template"];
    assert_eq!(c["image"], cronjob_pod["spec"]["containers"][0]["image"]);
    assert_eq!(
        str_list(&c["args"]),
        ["serve", "--listen", "0.0.0.0:9810", "--log-format", "json"]
    );
    assert_eq!(
        c["ports"],
        json!([{"name": "metrics", "containerPort": 9810, "protocol": "TCP"}])
    );

    // The request covers the measured peak with 5,000 ETCDSnapshotFiles (34 MiB), the limit
    // the peak with 50,000 (165 MiB, docs/performance.md), and neither is lavish.
    let resources = &c["resources"];
    assert!(resources["requests"]["cpu"].is_string(), "{resources}");
    let (request, limit) = (
        mebibytes(&resources["requests"]["memory"]),
        mebibytes(&resources["limits"]["memory"]),
    );
    assert!((34..=64).contains(&request), "{resources}");
    assert!(
        request <= limit && (192..=512).contains(&limit),
        "{resources}"
    );

    let security = &c["securityContext"];
    assert_eq!(security["runAsNonRoot"], true);
    // The image's own user (deploy/image/oci_archive.py).
    assert_eq!(security["runAsUser"], 65532);
    assert_eq!(security["allowPrivilegeEscalation"], false);
    assert_eq!(security["readOnlyRootFilesystem"], true);
    assert_eq!(security["capabilities"], json!({"drop": ["ALL"]}));
    assert_eq!(
        security["seccompProfile"],
        json!({"type": "RuntimeDefault"})
    );
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    // It writes nothing to disk; its one volume is the optional, read-only config ConfigMap,
    // mounted where the default config path ($XDG_CONFIG_HOME/k3sdoctor) points.
    assert_eq!(
        pod["volumes"],
        json!([{"name": "config", "configMap": {"name": "k3sdoctor-config", "optional": true}}])
    );
    assert_eq!(
        c["volumeMounts"],
        json!([{"name": "config", "mountPath": "/etc/k3sdoctor", "readOnly": true}])
    );
    assert_eq!(
        c["env"],
        json!([{"name": "XDG_CONFIG_HOME", "value": "/etc"}])
    );

    for (probe, path) in [("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")] {
        assert_eq!(
            c[probe]["httpGet"],
            json!({"path": path, "port": "metrics"}),
            "{probe}"
        );
    }
}

#[test]
fn the_service_selects_the_pods_and_exposes_the_metrics_port() {
    let docs = serve_objects();
    let service = find(&docs, "Service");
    assert_eq!(
        service["metadata"]["namespace"],
        find(&docs, "Deployment")["metadata"]["namespace"]
    );
    assert!(selects(
        &service["spec"]["selector"],
        &pod_template(&docs)["metadata"]["labels"]
    ));
    assert_eq!(
        service["spec"]["ports"],
        json!([{"name": "metrics", "port": 9810, "targetPort": "metrics", "protocol": "TCP"}])
    );
    // A pod whose watches have not synced is still scraped, so the metrics say why.
    assert_eq!(service["spec"]["publishNotReadyAddresses"], true);
}

#[test]
fn the_service_monitor_scrapes_the_services_metrics_port_as_job_k3sdoctor() {
    let docs = serve_objects();
    let (monitor, service) = (find(&docs, "ServiceMonitor"), find(&docs, "Service"));
    let labels = &service["metadata"]["labels"];
    assert!(selects(&monitor["spec"]["selector"]["matchLabels"], labels));
    assert_eq!(
        str_list(&monitor["spec"]["namespaceSelector"]["matchNames"]),
        [service["metadata"]["namespace"].as_str().unwrap()]
    );
    assert_eq!(
        monitor["spec"]["endpoints"],
        json!([{"port": "metrics", "path": "/metrics", "interval": "30s", "scrapeTimeout": "10s",
                 "bearerTokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token"}])
    );
    // The token's account may get /metrics, and nothing else.
    let reader: Value =
        yaml_documents("deploy/components/prometheus-operator/metrics-reader-clusterrole.yaml")
            .remove(0);
    assert_eq!(
        reader["rules"],
        json!([{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}])
    );
    let binding: Value = yaml_documents(
        "deploy/components/prometheus-operator/metrics-reader-clusterrolebinding.yaml",
    )
    .remove(0);
    assert_eq!(binding["roleRef"]["name"], reader["metadata"]["name"]);
    // The alert rules expect the job `k3sdoctor`.
    let job_label = monitor["spec"]["jobLabel"].as_str().unwrap();
    assert_eq!(labels[job_label], "k3sdoctor");
}

fn rule_groups() -> Value {
    let docs = yaml_documents(RULES);
    assert_eq!(docs.len(), 1);
    let groups = docs[0]["groups"].clone();
    assert!(groups.as_array().is_some_and(|g| !g.is_empty()), "{RULES}");
    groups
}

fn alerts() -> Vec<Value> {
    rule_groups()
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["rules"].as_array().unwrap().clone())
        .collect()
}

#[test]
fn the_prometheus_rule_carries_the_plain_rules_files_groups() {
    let docs = yaml_documents(PROMETHEUS_RULE);
    assert_eq!(docs.len(), 1);
    assert_eq!(docs[0]["spec"]["groups"], rule_groups());
    assert_eq!(
        docs[0]["spec"].as_object().unwrap().len(),
        1,
        "spec holds only the groups"
    );
}

/// The codes of the finding table (docs/findings.md).
fn finding_codes() -> BTreeSet<String> {
    let section = std::fs::read_to_string(repo_path("docs/findings.md")).unwrap();
    let row = Regex::new(r"(?m)^\| `([a-z0-9-]+)` \|").unwrap();
    let codes: BTreeSet<String> = row
        .captures_iter(&section)
        .map(|c| c[1].to_string())
        .collect();
    assert!(codes.contains("lease-split"), "{codes:?}");
    codes
}

/// The values a label of a metric can take, where they are a closed set.
fn label_values(metric: &str, label: &str) -> Option<Vec<String>> {
    let fixed = |values: &[&str]| Some(values.iter().map(|v| v.to_string()).collect());
    match (metric, label) {
        ("k3sdoctor_findings", "code") => Some(finding_codes().into_iter().collect()),
        ("k3sdoctor_findings", "severity") => fixed(&["error", "warning", "info"]),
        ("k3sdoctor_lease_split", "lock") => fixed(&["k3s", "rke2"]),
        ("k3sdoctor_lease_split", "affected") => fixed(&["true", "false", "unknown"]),
        ("k3sdoctor_snapshot_entries", "state") => {
            fixed(&["missing", "orphaned", "stale", "pruned_for_size", "pending"])
        }
        ("k3sdoctor_etcd_members", "state") => fixed(&["ready", "not_ready"]),
        ("k3sdoctor_datastore_latency_p99_seconds", "measure") => {
            fixed(&["object_request", "wal_fsync", "backend_commit"])
        }
        ("k3sdoctor_watch_errors_total", "reason") => {
            fixed(&["forbidden", "unauthorized", "not_found", "other"])
        }
        ("k3sdoctor_heals_total", "outcome") => fixed(&["moved", "would_move", "failed"]),
        ("up", "job") => fixed(&["k3sdoctor"]),
        _ => None,
    }
}

/// The metric names and label matchers of a PromQL expression: `(metric, [(label, op, value)])`.
type Selector = (String, Vec<(String, String, String)>);

fn selectors(expr: &str) -> Vec<Selector> {
    let with_matchers = Regex::new(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}").unwrap();
    let matcher = Regex::new(r#"([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"([^"]*)""#).unwrap();
    let mut found: Vec<Selector> = with_matchers
        .captures_iter(expr)
        .map(|c| {
            let matchers = matcher
                .captures_iter(&c[2])
                .map(|m| (m[1].to_string(), m[2].to_string(), m[3].to_string()))
                .collect();
            (c[1].to_string(), matchers)
        })
        .collect();
    // What is left: bare metric names, functions, keywords, label lists and numbers.
    let rest = with_matchers.replace_all(expr, " ");
    let rest = Regex::new(r"\b(on|ignoring|by|without|group_left|group_right)\s*\([^)]*\)")
        .unwrap()
        .replace_all(&rest, " ");
    let rest = Regex::new(r"\[[^\]]*\]").unwrap().replace_all(&rest, " ");
    let word = Regex::new(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(\s*\()?").unwrap();
    for c in word.captures_iter(&rest) {
        let is_call = c.get(2).is_some();
        if !is_call && !["and", "or", "unless", "bool", "offset"].contains(&&c[1]) {
            found.push((c[1].to_string(), Vec::new()));
        }
    }
    found
}

#[test]
fn the_selector_parser_finds_metrics_labels_and_bare_names() {
    let found = selectors(
        r#"sum by (code) (k3sdoctor_findings{severity="error", code!~"a|b"}) > 0 and on(job) absent(up) or rate(x_total[5m])"#,
    );
    let names: Vec<&str> = found.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(names, ["k3sdoctor_findings", "up", "x_total"]);
    assert_eq!(
        found[0].1,
        [
            ("severity".into(), "=".into(), "error".into()),
            ("code".into(), "!~".into(), "a|b".into())
        ]
    );
}

#[test]
fn the_alert_expressions_use_only_serves_metrics_labels_and_values() {
    let known: BTreeMap<&str, &[&str]> = METRICS.into_iter().collect();
    for alert in alerts() {
        let (name, expr) = (&alert["alert"], alert["expr"].as_str().unwrap());
        let found = selectors(expr);
        assert!(!found.is_empty(), "{name}: no metric in {expr}");
        for (metric, matchers) in found {
            let labels = known
                .get(metric.as_str())
                .unwrap_or_else(|| panic!("{name}: {metric} is not a metric serve exports"));
            for (label, op, value) in matchers {
                assert!(
                    labels.contains(&label.as_str()) || TARGET_LABELS.contains(&label.as_str()),
                    "{name}: {metric} has no label {label}"
                );
                if let Some(allowed) = label_values(&metric, &label) {
                    // An alternation of literal values, for =~ and !~.
                    let values: Vec<&str> = if op.ends_with('~') {
                        value.split('|').collect()
                    } else {
                        vec![value.as_str()]
                    };
                    for v in values {
                        assert!(
                            allowed.iter().any(|a| a == v),
                            "{name}: {metric}{{{label}}} is never {v:?}"
                        );
                    }
                }
            }
        }
    }
}

/// The alerts the issue asks for, by what they watch.
#[test]
fn the_rules_alert_on_split_snapshots_quorum_expiry_and_k3sdoctor_itself() {
    let by_name: BTreeMap<String, Value> = alerts()
        .into_iter()
        .map(|a| (a["alert"].as_str().unwrap().to_string(), a))
        .collect();
    let expect = |name: &str, expr: &str, for_: &str, severity: &str| {
        let alert = by_name
            .get(name)
            .unwrap_or_else(|| panic!("no alert {name}"));
        assert!(
            alert["expr"].as_str().unwrap().contains(expr),
            "{name}: {}",
            alert["expr"]
        );
        assert_eq!(alert["for"], for_, "{name}");
        assert_eq!(alert["labels"]["severity"], severity, "{name}");
    };
    expect(
        "K3sdoctorLeaseSplit",
        r#"k3sdoctor_lease_split{affected="true"}"#,
        "2m",
        "critical",
    );
    expect(
        "K3sdoctorSnapshotsMissingFromConfigMap",
        r#"code="snapshot-missing-from-configmap""#,
        "15m",
        "warning",
    );
    expect(
        "K3sdoctorEtcdQuorumAtRisk",
        r#"code="etcd-quorum-at-risk""#,
        "10m",
        "critical",
    );
    expect(
        "K3sdoctorLeaseExpired",
        r#"code="lease-expired""#,
        "5m",
        "critical",
    );
    expect(
        "K3sdoctorTargetDown",
        r#"up{job="k3sdoctor"} == 0"#,
        "5m",
        "warning",
    );
    expect(
        "K3sdoctorAbsent",
        r#"absent(up{job="k3sdoctor"})"#,
        "15m",
        "warning",
    );
    expect("K3sdoctorCannotRead", "k3sdoctor_up == 0", "10m", "warning");
    expect(
        "K3sdoctorNotReady",
        "k3sdoctor_ready == 0",
        "10m",
        "warning",
    );
}

/// The datastore's alerts: growth toward the quota, 95 % of it, NOSPACE, fragmentation, slow
/// p99s over serve's intervals, kine's compaction; and the catch-all leaves their codes alone.
#[test]
fn the_datastore_group_alerts_on_growth_quota_fragmentation_slowness_and_compaction() {
    let groups = rule_groups();
    let group = groups
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "k3sdoctor-datastore")
        .expect("a k3sdoctor-datastore group");
    let rules: BTreeMap<&str, &Value> = group["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["alert"].as_str().unwrap(), r))
        .collect();
    for (name, expr, severity) in [
        (
            "K3sdoctorDatastoreQuotaIn4h",
            "predict_linear(k3sdoctor_datastore_size_bytes[4h], 4 * 3600) > on(job, instance, server) k3sdoctor_datastore_quota_bytes",
            "warning",
        ),
        (
            "K3sdoctorDatastoreNearQuota",
            "k3sdoctor_datastore_size_bytes / on(job, instance, server) k3sdoctor_datastore_quota_bytes >= 0.95",
            "critical",
        ),
        (
            "K3sdoctorDatastoreOverQuota",
            r#"code="etcd-db-over-quota""#,
            "critical",
        ),
        (
            "K3sdoctorDatastoreFragmented",
            "k3sdoctor_datastore_in_use_bytes > 104857600",
            "warning",
        ),
        (
            "K3sdoctorDatastoreSlow",
            r#"k3sdoctor_datastore_latency_p99_seconds{measure="wal_fsync"} > 0.5"#,
            "warning",
        ),
        (
            "K3sdoctorKineCompactionStalled",
            r#"code="kine-compaction-stalled""#,
            "warning",
        ),
    ] {
        let rule = rules
            .get(name)
            .unwrap_or_else(|| panic!("no {name} in {rules:#?}"));
        assert!(
            rule["expr"].as_str().unwrap().contains(expr),
            "{name}: {rule:#}"
        );
        assert_eq!(rule["labels"]["severity"], severity, "{name}");
    }
    let catch_all = alerts()
        .into_iter()
        .find(|a| a["alert"] == "K3sdoctorErrorFinding")
        .unwrap();
    let expr = catch_all["expr"].as_str().unwrap();
    for code in [
        "etcd-db-near-quota",
        "etcd-db-over-quota",
        "etcd-db-fragmented",
        "kine-compaction-stalled",
        "datastore-slow",
    ] {
        assert!(
            expr.contains(&format!("|{code}")),
            "{code} left to the catch-all: {expr}"
        );
    }
}

#[test]
fn every_alert_has_a_severity_a_summary_and_a_description_naming_the_remedy() {
    for alert in alerts() {
        let name = &alert["alert"];
        assert!(
            ["critical", "warning", "info"]
                .contains(&alert["labels"]["severity"].as_str().unwrap()),
            "{name}"
        );
        assert!(alert["for"].is_string(), "{name} has no `for`");
        let annotations = &alert["annotations"];
        assert!(annotations["summary"].is_string(), "{name}");
        let description = annotations["description"].as_str().unwrap();
        assert!(
            description.contains("`k3sdoctor ") || description.contains("`kubectl "),
            "{name}: the description names no command: {description}"
        );
        assert!(annotations["runbook_url"].is_string(), "{name}");
    }
}

/// GitHub's anchor of a README heading.
fn anchor(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Each runbook is a page of docs/ (or a section of one), relative to the repository:
/// `docs/monitoring.md#monitoring-serve` is the section on `serve`.
#[test]
fn every_runbook_is_a_docs_page_or_section() {
    for alert in alerts() {
        let url = alert["annotations"]["runbook_url"].as_str().unwrap();
        let (path, section) = url.split_once('#').unwrap_or((url, ""));
        assert!(
            path.starts_with("docs/") && path.ends_with(".md"),
            "{}: {url} is not a page of docs/",
            alert["alert"]
        );
        let page = std::fs::read_to_string(repo_path(path))
            .unwrap_or_else(|e| panic!("{}: {url}: {e}", alert["alert"]));
        if section.is_empty() {
            continue;
        }
        let anchors: BTreeSet<String> = page
            .lines()
            .filter_map(|l| {
                l.strip_prefix("# ")
                    .or_else(|| l.strip_prefix("## "))
                    .or_else(|| l.strip_prefix("### "))
            })
            .map(anchor)
            .collect();
        assert!(
            anchors.contains(section),
            "{}: {path} has no section #{section}",
            alert["alert"]
        );
    }
}

/// Which alerts the promtool tests expect to fire, and which they expect to stay quiet.
fn alerts_tested() -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut firing, mut quiet) = (BTreeSet::new(), BTreeSet::new());
    for file in rule_test_files() {
        let rel = format!("{RULE_TESTS}/{file}");
        let doc = &yaml_documents(&rel)[0];
        assert_eq!(
            str_list(&doc["rule_files"]),
            ["../k3sdoctor-rules.yaml"],
            "{rel}"
        );
        for test in doc["tests"].as_array().unwrap() {
            for case in test["alert_rule_test"].as_array().unwrap() {
                let name = case["alertname"].as_str().unwrap().to_string();
                match case["exp_alerts"].as_array() {
                    Some(expected) if !expected.is_empty() => firing.insert(name),
                    _ => quiet.insert(name),
                };
            }
        }
    }
    (firing, quiet)
}

fn rule_test_files() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(repo_path(RULE_TESTS))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|f| f.ends_with(".yaml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{RULE_TESTS} has no tests");
    files
}

#[test]
fn the_promtool_tests_see_every_alert_fire_and_stay_quiet() {
    let names: BTreeSet<String> = alerts()
        .iter()
        .map(|a| a["alert"].as_str().unwrap().to_string())
        .collect();
    let (firing, quiet) = alerts_tested();
    assert_eq!(firing, names, "alerts the promtool tests see firing");
    assert_eq!(quiet, names, "alerts the promtool tests see quiet");
}

/// `promtool check rules` and `promtool test rules`, as CI runs them (CI installs promtool).
#[test]
fn promtool_checks_and_tests_the_rules_when_installed() {
    let tests: Vec<String> = rule_test_files()
        .iter()
        .map(|f| format!("{RULE_TESTS}/{f}"))
        .collect();
    for args in [
        vec!["check".to_string(), "rules".into(), RULES.into()],
        [vec!["test".to_string(), "rules".into()], tests].concat(),
    ] {
        let Ok(out) = Command::new("promtool")
            .args(&args)
            .current_dir(repo_path(""))
            .output()
        else {
            println!("skipped: promtool is not installed (Debian's prometheus package)");
            return;
        };
        assert!(
            out.status.success(),
            "promtool {}:\n{}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The Deployment's command line is one the binary accepts. (`--help` so it does not start
/// serving.)
#[test]
fn the_deployments_args_are_accepted_by_the_binary() {
    let docs = serve_objects();
    let args = str_list(&container(&docs)["args"]);
    k3sdoctor(args.iter().chain(&["--help"])).run().code(0);
}

/// deploy/heal/: an opt-in kustomize Component that adds only `--heal on` (and the downward
/// API's names for the Events) to serve, and binds the docs' heal Role to serve's account.
#[test]
fn the_heal_component_adds_the_flag_and_the_docs_heal_role_to_serve() {
    let kustomization = &yaml_documents("deploy/heal/kustomization.yaml")[0];
    assert_eq!(kustomization["kind"], "Component");
    for file in kustomization["resources"].as_array().unwrap() {
        assert!(
            repo_path(&format!("deploy/heal/{}", file.as_str().unwrap())).exists(),
            "{file}"
        );
    }
    assert_eq!(
        kustomization["patches"][0]["path"], "serve-heal-patch.yaml",
        "{kustomization:#}"
    );
    // The default deploy/ stays read-only: it lists nothing of heal.
    let base = &yaml_documents("deploy/kustomization.yaml")[0];
    assert!(!base.to_string().contains("heal"), "{base:#}");

    let serve = &yaml_documents("deploy/base/serve-deployment.yaml")[0];
    let patch = &yaml_documents("deploy/heal/serve-heal-patch.yaml")[0];
    assert_eq!(patch["metadata"]["name"], serve["metadata"]["name"]);
    let container = |d: &Value| d["spec"]["template"]["spec"]["containers"][0].clone();
    assert_eq!(container(patch)["name"], container(serve)["name"]);
    let mut args = container(serve)["args"].as_array().unwrap().clone();
    args.extend([json!("--heal"), json!("on")]);
    assert_eq!(container(patch)["args"], Value::Array(args));
    let env: Vec<String> = container(patch)["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(env, ["NODE_NAME", "POD_NAME"]);

    assert_eq!(
        yaml_documents("deploy/heal/heal-role.yaml"),
        yaml_documents_of(&readme_namespaced_role("k3sdoctor-heal"))
    );
    let binding = &yaml_documents("deploy/heal/heal-rolebinding.yaml")[0];
    assert_eq!(binding["roleRef"]["name"], "k3sdoctor-heal");
    assert_eq!(binding["roleRef"]["kind"], "Role");
    let account = &yaml_documents("deploy/base/serve-serviceaccount.yaml")[0];
    assert_eq!(binding["subjects"][0]["name"], account["metadata"]["name"]);
    assert_eq!(binding["subjects"][0]["namespace"], "kube-system");
}

fn yaml_documents_of(yaml: &str) -> Vec<Value> {
    use serde::Deserialize;
    serde_yaml_ng::Deserializer::from_str(yaml)
        .map(|doc| Value::deserialize(doc).unwrap())
        .collect()
}
