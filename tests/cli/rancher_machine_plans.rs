//! `rancher-machine-plan-stuck` from `--rancher-from-file`: a Machine whose `PlanApplied` is
//! False, and a plan Secret the agent never applied. The plan holds the node's join token, so
//! every output format, the trace and the notes are searched for any piece of it.

use base64::Engine;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::support::harness::{k3sdoctor, repo_path};
use crate::support::objects::NOW;
use crate::support::report_checks::every_finding;

const TOKEN: &str = "K10-S3CRET-JOIN-TOKEN::server:f00dfeed";
const CONFIG: &str =
    "token: K10-S3CRET-JOIN-TOKEN::server:f00dfeed\nserver: https://10.0.0.1:6443\n";

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn sha(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The plan Rancher writes: the config file (with the token) base64'd inside plan JSON.
fn plan() -> String {
    json!({"files": [{"path": "/etc/rancher/k3s/config.yaml.d/50-rancher.yaml",
                      "content": b64(CONFIG.as_bytes())}],
           "instructions": [{"name": "install", "env": [format!("K3S_TOKEN={TOKEN}")]}]})
    .to_string()
}

fn plan_secret(machine: &str, applied: &str) -> Value {
    let plan = plan();
    json!({
        "apiVersion": "v1", "kind": "Secret", "type": "rke.cattle.io/machine-plan",
        "metadata": {"name": format!("{machine}-machine-plan"), "namespace": "fleet-default",
                     "labels": {"rke.cattle.io/machine-name": machine,
                                "rke.cattle.io/cluster-name": "prod"},
                     "annotations": {"rke.cattle.io/plan-last-updated": "2024-05-31T11:00:00Z"}},
        "data": {"plan": b64(plan.as_bytes()),
                 "applied-checksum": b64(applied.as_bytes()),
                 "failure-threshold": b64(b"1"),
                 "applied-output": b64(TOKEN.as_bytes())}
    })
}

/// A Machine of `prod` whose plan Rancher gave up on, the plan Secrets of two machines (one
/// applied, one not), and a kubeconfig Secret that is not a plan.
fn management_file(dir: &std::path::Path) -> std::path::PathBuf {
    let stuck_machine = json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Machine",
        "metadata": {"name": "prod-pool1-4", "namespace": "fleet-default",
                     "labels": {"cluster.x-k8s.io/cluster-name": "prod"}},
        "spec": {"clusterName": "prod"},
        "status": {"nodeRef": {"kind": "Node", "name": "prod-k3s-4"},
                   "conditions": [{"type": "PlanApplied", "status": "False", "reason": "Error",
                                   "message": "error applying plan -- check rancher-system-agent.service and k3s.service logs on node",
                                   "lastTransitionTime": "2024-05-31T10:00:00Z"}]}
    });
    let kubeconfig = json!({
        "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "metadata": {"name": "prod-kubeconfig", "namespace": "fleet-default"},
        "data": {"value": b64(TOKEN.as_bytes())}
    });
    let list = json!({"apiVersion": "v1", "kind": "List", "items": [
        stuck_machine,
        plan_secret("prod-pool1-1", &sha(plan().as_bytes())),
        plan_secret("prod-pool1-2", &sha(b"the plan before")),
        kubeconfig,
    ]});
    let path = dir.join("management.json");
    std::fs::write(&path, list.to_string()).unwrap();
    path
}

fn check(file: &std::path::Path, extra: &[&str]) -> crate::support::harness::Output {
    let split = repo_path("tests/fixtures/split-cluster");
    let rancher = repo_path("tests/fixtures/rancher/rancher-2.11.yaml");
    let mut args: Vec<String> = vec![
        "--from-file".into(),
        split.display().to_string(),
        "check".into(),
        "--rancher-from-file".into(),
        rancher.display().to_string(),
        "--rancher-from-file".into(),
        file.display().to_string(),
        "--now".into(),
        NOW.into(),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    k3sdoctor(args).run()
}

#[test]
fn a_machine_plan_never_applied_is_stuck_and_no_output_shows_the_plan() {
    let dir = tempfile::tempdir().unwrap();
    let file = management_file(dir.path());
    let report: Value = check(&file, &["-o", "json"]).json();
    let stuck: Vec<Value> = every_finding(&report)
        .into_iter()
        .filter(|f| f["code"] == "rancher-machine-plan-stuck")
        .cloned()
        .collect();
    let objects: Vec<&str> = stuck
        .iter()
        .map(|f| f["object"].as_str().unwrap())
        .collect();
    assert_eq!(
        objects,
        [
            "Machine fleet-default/prod-pool1-4",
            "Machine fleet-default/prod-pool1-2"
        ],
        "{report:#}"
    );
    let unapplied = stuck[1]["message"].as_str().unwrap();
    assert!(
        unapplied.contains(
            "(Node prod-k3s-2) 70m ago (Secret prod-pool1-2-machine-plan) has not been applied"
        ),
        "{unapplied}"
    );

    let plan = plan();
    let secrets = [
        TOKEN.to_string(),
        "S3CRET".to_string(),
        b64(CONFIG.as_bytes()),
        b64(plan.as_bytes()),
        b64(TOKEN.as_bytes()),
        sha(plan.as_bytes()),
    ];
    for extra in [
        &["-o", "json"][..],
        &["-o", "yaml"],
        &[],
        &["-v", "-v"],
        &["-o", "json", "--rancher-cluster", "nothere"],
    ] {
        let out = check(&file, extra);
        for secret in &secrets {
            assert!(
                !out.stdout.contains(secret.as_str()) && !out.stderr.contains(secret.as_str()),
                "{extra:?} shows {secret:?}:\n{}\n{}",
                out.stdout,
                out.stderr
            );
        }
    }
}

#[test]
fn without_plan_secrets_the_summary_says_the_opt_in_read_is_missing() {
    let split = repo_path("tests/fixtures/split-cluster");
    let rancher = repo_path("tests/fixtures/rancher/rancher-2.11.yaml");
    let report: Value = k3sdoctor([
        "--from-file",
        &split.display().to_string(),
        "check",
        "-o",
        "json",
        "--rancher-from-file",
        &rancher.display().to_string(),
    ])
    .run()
    .json();
    assert!(
        report["rancher"]["note"]
            .as_str()
            .unwrap_or_default()
            .contains("machine plans not checked"),
        "{:#}",
        report["rancher"]
    );
}
