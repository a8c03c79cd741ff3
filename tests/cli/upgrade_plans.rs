//! `upgrade-plans` and `version-skew` through the binary: system-upgrade-controller's Plans,
//! Jobs and ConfigMap in `system-upgrade` as SUC v0.16 leaves them after a server's upgrade Job
//! failed (the Job deleted after its TTL, the Plan saying JobFailed, the server left cordoned)
//! and an agent's Job failing in prepare behind it; read live (Plans across namespaces, Jobs by
//! label and the ConfigMap by name in the Plans' namespace), from a dump, and from what
//! `k3sdoctor dump` writes. Without the Plan CRD the check says SUC is not installed.

use serde_json::{Value, json};

use crate::report::{CheckReport, Finding};
use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::k3sdoctor;
use crate::support::objects::{NOW, agent, lease, server_at, write_dump};

const V: &str = "v1.32.9+k3s1";
const NS: &str = "system-upgrade";

/// s1 cordoned 40 minutes before NOW by the server plan (the taint's timeAdded).
fn cordoned_server() -> Value {
    let mut s1 = server_at("s1", V, "10.0.0.1");
    s1["spec"] = json!({"unschedulable": true, "taints": [{"key": "node.kubernetes.io/unschedulable",
        "effect": "NoSchedule", "timeAdded": "2024-05-31T11:30:40Z"}]});
    s1
}

fn plan(name: &str, server: bool, applying: &str, complete: Value) -> Value {
    let operator = if server { "In" } else { "DoesNotExist" };
    let mut spec = json!({"concurrency": 1, "cordon": server, "version": "v1.33.5+k3s1",
        "serviceAccountName": "system-upgrade",
        "nodeSelector": {"matchExpressions": [{"key": "node-role.kubernetes.io/control-plane",
                                               "operator": operator, "values": ["true"]}]},
        "upgrade": {"image": "rancher/k3s-upgrade"}});
    if !server {
        spec["nodeSelector"]["matchExpressions"][0]
            .as_object_mut()
            .unwrap()
            .remove("values");
        spec["prepare"] =
            json!({"image": "rancher/k3s-upgrade", "args": ["prepare", "server-plan"]});
    }
    json!({
        "apiVersion": "upgrade.cattle.io/v1", "kind": "Plan",
        "metadata": {"name": name, "namespace": NS, "creationTimestamp": "2024-05-31T11:00:00Z"},
        "spec": spec,
        "status": {"latestVersion": "v1.33.5-k3s1", "latestHash": "6f1c0a", "applying": [applying],
                   "conditions": [
                       {"type": "LatestResolved", "status": "True", "reason": "Version",
                        "lastUpdateTime": "2024-05-31T11:00:00Z"},
                       complete]}
    })
}

fn cluster() -> Vec<Value> {
    let server_failed = json!({"type": "Complete", "status": "False", "reason": "JobFailed",
        "message": "Job system-upgrade/apply-server-plan-on-s1-with-6f1c0a failed on Node s1: DeadlineExceeded: Job was active longer than specified deadline",
        "lastUpdateTime": "2024-05-31T11:45:40Z", "lastTransitionTime": "2024-05-31T11:45:40Z"});
    let agent_syncing = json!({"type": "Complete", "status": "False", "reason": "SyncJob",
        "lastTransitionTime": "2024-05-31T11:31:00Z"});
    vec![
        cordoned_server(),
        agent("a1", V),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
        plan("server-plan", true, "s1", server_failed),
        plan("agent-plan", false, "a1", agent_syncing),
        // The agent's Job failed in prepare, waiting for the server plan (Kubernetes 1.31+:
        // FailureTarget first).
        json!({"apiVersion": "batch/v1", "kind": "Job",
               "metadata": {"name": "apply-agent-plan-on-a1-with-6f1c0a", "namespace": NS,
                            "labels": {"upgrade.cattle.io/plan": "agent-plan", "upgrade.cattle.io/node": "a1",
                                       "upgrade.cattle.io/controller": "system-upgrade-controller"}},
               "spec": {"activeDeadlineSeconds": 900, "backoffLimit": 99},
               "status": {"startTime": "2024-05-31T11:31:00Z", "conditions": [
                   {"type": "FailureTarget", "status": "True", "reason": "DeadlineExceeded",
                    "message": "Job was active longer than specified deadline"}]}}),
        // Not SUC's: not asked for (the label selector), not judged.
        json!({"apiVersion": "batch/v1", "kind": "Job",
               "metadata": {"name": "backup", "namespace": NS},
               "status": {"startTime": "2024-05-30T00:00:00Z", "conditions": [
                   {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}]}}),
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "default-controller-env", "namespace": NS},
               "data": {"SYSTEM_UPGRADE_JOB_ACTIVE_DEADLINE_SECONDS": "900",
                        "SYSTEM_UPGRADE_JOB_BACKOFF_LIMIT": "99"}}),
    ]
}

fn stuck(report: &CheckReport) -> Vec<&Finding> {
    let mut all: Vec<&Finding> = report
        .findings
        .iter()
        .flat_map(|f| std::iter::once(&f.finding).chain(&f.children))
        .filter(|f| f.code == "upgrade-plan-stuck")
        .collect();
    all.sort_by(|a, b| a.object.cmp(&b.object));
    all
}

fn run_of<'a>(report: &'a CheckReport, name: &str) -> (bool, &'a str) {
    let run = report.checks.iter().find(|c| c.name == name).unwrap();
    (run.ran, run.note.as_str())
}

/// The server plan's finding and the agent's, as every source must give them.
fn assert_the_two_stuck_plans(report: &CheckReport) {
    let found = stuck(report);
    assert_eq!(found.len(), 2, "{:?}", report.codes());
    let (agent, server) = (found[0], found[1]);
    assert_eq!(server.object, "Plan system-upgrade/server-plan");
    assert_eq!(server.severity, "error");
    for part in [
        "the upgrade of server s1 to v1.33.5-k3s1 has not finished",
        "the Plan's Complete condition says JobFailed (Job system-upgrade/apply-server-plan-on-s1-with-6f1c0a failed on Node s1",
        "Job deadline 900 s (SYSTEM_UPGRADE_JOB_ACTIVE_DEADLINE_SECONDS in system-upgrade/default-controller-env)",
        "s1 is left cordoned since 2024-05-31T11:30:40Z (40m ago)",
    ] {
        assert!(server.message.contains(part), "{part}\n{}", server.message);
    }
    assert!(
        server
            .remediation
            .contains("kubectl -n system-upgrade edit plan server-plan")
            && server.remediation.contains("kubectl uncordon s1"),
        "{}",
        server.remediation
    );
    assert_eq!(agent.object, "Plan system-upgrade/agent-plan");
    assert_eq!(agent.severity, "warning");
    assert!(
        agent.message.contains(
            "Job system-upgrade/apply-agent-plan-on-a1-with-6f1c0a failed: DeadlineExceeded"
        ) && agent
            .message
            .contains("server Plan system-upgrade/server-plan is still applying on s1"),
        "{}",
        agent.message
    );
    assert_eq!(agent.caused_by.as_deref(), Some("upgrade-plan-stuck"));
    assert!(
        agent
            .remediation
            .starts_with("kubectl -n system-upgrade logs job/apply-agent-plan-on-a1-with-6f1c0a;"),
        "{}",
        agent.remediation
    );
    assert_eq!(run_of(report, "upgrade-plans"), (true, ""));
}

#[test]
fn a_failed_server_upgrade_and_the_agent_behind_it_are_read_live_with_three_requests() {
    let fake = FakeApi::with_objects(cluster());
    fake.set_suc_crd_installed(true);
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW, "-v"])
        .cluster(&fake, Role::ReadOnly)
        .run();
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("list plans.upgrade.cattle.io: 2 items"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("list jobs.batch in system-upgrade labelled upgrade.cattle.io/plan: 1 items"),
        "{}",
        out.stderr
    );
    let report: CheckReport = out.json();
    assert_the_two_stuck_plans(&report);
    let mut reads: Vec<String> = fake
        .requests()
        .into_iter()
        .map(|r| r.path)
        .filter(|p| p.contains("upgrade.cattle.io") || p.contains(NS))
        .collect();
    reads.sort();
    assert_eq!(
        reads,
        [
            "/api/v1/namespaces/system-upgrade/configmaps/default-controller-env",
            "/apis/batch/v1/namespaces/system-upgrade/jobs",
            "/apis/upgrade.cattle.io/v1/plans",
        ]
    );
}

#[test]
fn without_the_plan_crd_suc_is_not_installed_which_is_no_fault() {
    let fake = FakeApi::with_objects(vec![
        server_at("s1", V, "10.0.0.1"),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
    ]);
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    let report: CheckReport = out.json();
    assert!(stuck(&report).is_empty());
    let (ran, note) = run_of(&report, "upgrade-plans");
    assert!(ran);
    assert!(
        note.contains("system-upgrade-controller is not installed"),
        "{note}"
    );
    assert_eq!(run_of(&report, "version-skew"), (true, ""));
}

#[test]
fn a_dump_gives_the_same_findings_and_says_what_it_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dump.yaml");
    write_dump(&path, &cluster());
    let report = check_file(&path);
    assert_the_two_stuck_plans(&report);
    // Without SUC's Jobs and ConfigMap: the Plans and Nodes alone, with a note.
    let plans_only: Vec<Value> = cluster()
        .into_iter()
        .filter(|o| o["kind"] != "Job" && o["kind"] != "ConfigMap")
        .collect();
    write_dump(&path, &plans_only);
    let report = check_file(&path);
    let (ran, note) = run_of(&report, "upgrade-plans");
    assert!(ran && note.contains("SUC's Jobs not in dump"), "{note}");
    let server = stuck(&report)
        .into_iter()
        .find(|f| f.object.ends_with("server-plan"))
        .unwrap();
    assert!(
        server.message.contains("default-controller-env not read"),
        "{}",
        server.message
    );
    // Without Plans: not checked, with the command that adds them.
    write_dump(&path, &[cordoned_server()]);
    let report = check_file(&path);
    assert_eq!(
        run_of(&report, "upgrade-plans"),
        (false, "not in dump (add `kubectl get plans -A -o yaml`)")
    );
}

#[test]
fn k3sdoctor_dump_holds_the_plans_their_jobs_and_the_configmap() {
    let fake = FakeApi::with_objects(cluster());
    fake.set_suc_crd_installed(true);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dump");
    k3sdoctor(["dump", path.to_str().unwrap()])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(0);
    let report = check_file(&path);
    assert_the_two_stuck_plans(&report);
}

#[test]
fn servers_two_minors_apart_are_a_version_skew_error_not_mixed_versions() {
    let fake = FakeApi::with_objects(vec![
        server_at("s1", "v1.31.9+k3s1", "10.0.0.1"),
        server_at("s2", "v1.33.5+k3s1", "10.0.0.2"),
        agent("a1", "v1.33.5+k3s1"),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
    ]);
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    let report: CheckReport = out.json();
    let skew: Vec<(&str, &str)> = report
        .findings
        .iter()
        .map(|f| &f.finding)
        .filter(|f| f.code == "version-skew" || f.code == "mixed-versions")
        .map(|f| (f.code.as_str(), f.object.as_str()))
        .collect();
    assert_eq!(
        skew,
        [("version-skew", "cluster"), ("version-skew", "Node a1")],
        "{:?}",
        report.codes()
    );
}

/// A server plan's failed Job as the two collectors that hold namespaced custom resources file
/// it: troubleshoot (a bare array per namespace under the CRD's folder, Lists of Jobs and
/// ConfigMaps per namespace) and support-bundle-kit (a List per namespace and group/version).
#[test]
fn troubleshoot_and_support_bundle_kit_bundles_hold_the_plans_jobs_and_configmap() {
    use crate::support::bundles::{self, SBK_TOP, TROUBLESHOOT_TOP, split_cluster};
    let failed = json!({"type": "Complete", "status": "False", "reason": "JobFailed",
        "message": "Job system-upgrade/apply-server-plan-on-prod-k3s-1-with-6f1c0a failed on Node prod-k3s-1: DeadlineExceeded: Job was active longer than specified deadline",
        "lastTransitionTime": "2024-05-31T11:45:40Z"});
    let plan = plan("server-plan", true, "prod-k3s-1", failed);
    let job = json!({"apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "apply-server-plan-on-prod-k3s-1-with-6f1c0a", "namespace": NS,
                     "labels": {"upgrade.cattle.io/plan": "server-plan", "upgrade.cattle.io/node": "prod-k3s-1"}},
        "status": {"startTime": "2024-05-31T11:30:40Z", "conditions": [
            {"type": "Failed", "status": "True", "reason": "DeadlineExceeded",
             "message": "Job was active longer than specified deadline"}]}});
    let env = cluster().pop().unwrap();
    let list = |items: Vec<Value>| json!({"apiVersion": "v1", "kind": "List", "items": items});
    let objects = split_cluster();
    let dir = tempfile::tempdir().unwrap();
    let troubleshoot = bundles::troubleshoot(&objects)
        .json(
            &format!("{TROUBLESHOOT_TOP}/cluster-resources/custom-resources/plans.upgrade.cattle.io/{NS}.json"),
            &json!([plan.clone()]),
        )
        .json(&format!("{TROUBLESHOOT_TOP}/cluster-resources/jobs/{NS}.json"), &list(vec![job.clone()]))
        .json(&format!("{TROUBLESHOOT_TOP}/cluster-resources/configmaps/{NS}.json"), &list(vec![env.clone()]));
    let sbk = bundles::support_bundle_kit(&objects)
        .json(
            &format!("{SBK_TOP}/yamls/namespaced/{NS}/upgrade.cattle.io/v1/plans.yaml"),
            &list(vec![plan]),
        )
        .json(
            &format!("{SBK_TOP}/yamls/namespaced/{NS}/batch/v1/jobs.yaml"),
            &list(vec![job]),
        )
        .json(
            &format!("{SBK_TOP}/yamls/namespaced/{NS}/v1/configmaps.yaml"),
            &list(vec![env]),
        );
    for (name, bytes) in [
        ("troubleshoot.tar.gz", bundles::gzip(&troubleshoot.tar())),
        ("sbk.zip", sbk.zip()),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let out = k3sdoctor([
            "check",
            "-o",
            "json",
            "--fail-on",
            "never",
            "--now",
            NOW,
            "--from-file",
            path.to_str().unwrap(),
        ])
        .run();
        let report: CheckReport = out.json();
        let found = stuck(&report);
        assert_eq!(found.len(), 1, "{name}: {:?}", report.codes());
        assert_eq!(
            (found[0].severity.as_str(), found[0].object.as_str()),
            ("error", "Plan system-upgrade/server-plan")
        );
        for part in [
            "Job system-upgrade/apply-server-plan-on-prod-k3s-1-with-6f1c0a failed: DeadlineExceeded",
            "900 s (SYSTEM_UPGRADE_JOB_ACTIVE_DEADLINE_SECONDS in system-upgrade/default-controller-env)",
        ] {
            assert!(
                found[0].message.contains(part),
                "{name}: {part}\n{}",
                found[0].message
            );
        }
        assert_eq!(run_of(&report, "upgrade-plans"), (true, ""), "{name}");
    }
}

/// `check -o json` of a dump or bundle at `path`, judged at `NOW`.
fn check_file(path: &std::path::Path) -> CheckReport {
    k3sdoctor(["check", "-o", "json", "--now", NOW, "--from-file"])
        .arg(path.to_str().unwrap())
        .run()
        .json()
}
