//! `check`: one report for people, scripts and monitoring.

use serde_json::{Value, json};

use crate::report::CheckReport;
use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::{k3sdoctor, repo_path};
use crate::support::objects::{
    NOW, NodeSpec, agent, extra_metadata, lease, node, server, snapshot_configmap, snapshot_cr,
    write_dump,
};

const AFFECTED: &str = "v1.29.4+k3s1";
const FIXED: &str = "v1.29.6+k3s1";
const T0: i64 = 1_717_142_400;

fn cluster(version: &str, core: &str, etcd: &str) -> Vec<Value> {
    vec![
        server("s1", version),
        server("s2", version),
        server("s3", version),
        agent("w1", version),
        lease("k3s", core, 1),
        lease("k3s-etcd", etcd, 1),
    ]
}

fn check(fake: &FakeApi, extra: &[&str]) -> (i32, CheckReport) {
    let mut run = k3sdoctor(["check", "-o", "json", "--now", NOW]).cluster(fake, Role::ReadOnly);
    for a in extra {
        run = run.arg(a);
    }
    let out = run.run();
    (out.code, out.json())
}

#[test]
fn a_healthy_cluster_prints_its_summary_and_exits_0() {
    let fake = FakeApi::with_objects(cluster(AFFECTED, "s1", "s1"));
    let (code, report) = check(&fake, &[]);
    assert_eq!(code, 0);
    assert_eq!(
        (report.api_version.as_str(), report.kind.as_str()),
        ("k3sdoctor.io/v1", "CheckReport")
    );
    // Healthy, on a version where the split can come back: one warning names the upgrade.
    assert_eq!(report.codes(), ["warning/version-affected"]);
    assert!(report.checks.iter().all(|c| c.ran), "{:?}", report.checks);
    assert_eq!(
        report.version_advice[0].upgrade_to.as_deref(),
        Some("v1.29.6+k3s1")
    );
    assert_eq!(report.snapshots.as_ref().unwrap().snapshot_files, 0);
    k3sdoctor(["check", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(0)
        .stdout_has("K3s cluster: 3 servers (3 etcd members), 1 agent")
        .stdout_has("version-affected")
        .stdout_has("upgrade to v1.29.6+k3s1 or later");
    k3sdoctor(["check", "--fail-on", "warning", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(1);
}

#[test]
fn a_split_with_missing_snapshots_is_one_primary_finding() {
    let mut objects = cluster(AFFECTED, "s1", "s2");
    objects.extend([
        snapshot_cr("s2", T0, true),
        snapshot_cr("s3", T0 + 60, true),
        extra_metadata("k3s"),
        snapshot_configmap("k3s", &[]),
    ]);
    let fake = FakeApi::with_objects(objects);
    let (code, report) = check(&fake, &[]);
    assert_eq!(code, 1);
    assert_eq!(report.codes(), ["error/lease-split"]);
    let children = report.child_codes(0);
    assert_eq!(
        children,
        [
            "snapshot-missing-from-configmap",
            "snapshot-controller-idle"
        ]
    );
    assert_eq!(report.summary.errors, 3);
    assert_eq!(report.snapshots.as_ref().unwrap().missing, 2);
    k3sdoctor(["check", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(1)
        .stdout_has("├─ ERROR   snapshot-missing-from-configmap")
        .stdout_has("└─ ERROR   snapshot-controller-idle");
}

#[test]
fn membership_findings() {
    let mut removing = server("s3", AFFECTED);
    removing["metadata"]["annotations"]["etcd.k3s.cattle.io/remove"] = json!("true");
    // When removal was asked: long ago, so it is stuck rather than in progress.
    removing["metadata"]["managedFields"] = json!([{
        "manager": "kubectl-annotate", "operation": "Update", "apiVersion": "v1",
        "time": "2024-05-31T11:00:00Z", "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:annotations": {"f:etcd.k3s.cattle.io/remove": {}}}}
    }]);
    let mut unsynced = server("s4", AFFECTED);
    unsynced["metadata"]["finalizers"] = json!(["wrangler.cattle.io/node"]);
    let mut terminating = server("s5", AFFECTED);
    terminating["metadata"]["deletionTimestamp"] = json!("2024-05-31T11:00:00Z");
    let mut learner = server("s6", AFFECTED);
    learner["status"]["conditions"] = json!([{"type": "Ready", "status": "True"}, {"type": "EtcdIsVoter", "status": "False", "reason": "MemberIsLearner"}]);
    let down = node(&NodeSpec {
        name: "s7",
        hostname: "s7",
        version: AFFECTED,
        prog: "k3s",
        server: true,
        ready: false,
    });
    let down2 = node(&NodeSpec {
        name: "s8",
        hostname: "s8",
        version: AFFECTED,
        prog: "k3s",
        server: true,
        ready: false,
    });
    let down3 = node(&NodeSpec {
        name: "s9",
        hostname: "s9",
        version: AFFECTED,
        prog: "k3s",
        server: true,
        ready: false,
    });
    let fake = FakeApi::with_objects(vec![
        server("s1", AFFECTED),
        server("s2", AFFECTED),
        removing,
        unsynced,
        terminating,
        learner,
        down,
        down2,
        down3,
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
    ]);
    let (code, report) = check(&fake, &[]);
    assert_eq!(code, 1);
    let codes = report.codes();
    for expected in [
        "error/member-removal-stuck",
        "error/member-terminating-stuck",
        "warning/member-finalizer-missing",
        "warning/member-not-voter",
        "error/etcd-quorum-at-risk",
    ] {
        assert!(
            codes.contains(&expected.to_string()),
            "{expected} not in {codes:?}"
        );
    }
}

#[test]
fn fail_on_sets_the_exit_code() {
    // A split on a fixed version is harmless, as it says: info, which no --fail-on fails on.
    let harmless = FakeApi::with_objects(cluster(FIXED, "s1", "s2"));
    assert_eq!(check(&harmless, &[]).1.codes(), ["info/lease-split"]);
    assert_eq!(check(&harmless, &["--fail-on", "warning"]).0, 0);
    // Servers on two versions: a warning.
    let mut mixed = cluster(FIXED, "s1", "s1");
    mixed[2] = server("s3", "v1.29.5+k3s1");
    let fake = FakeApi::with_objects(mixed);
    assert!(
        check(&fake, &[])
            .1
            .codes()
            .contains(&"warning/mixed-versions".to_string()),
        "{:?}",
        check(&fake, &[]).1.codes()
    );
    assert_eq!(check(&fake, &["--fail-on", "error"]).0, 0);
    assert_eq!(check(&fake, &["--fail-on", "warning"]).0, 1);
    assert_eq!(check(&fake, &["--fail-on", "never"]).0, 0);
    let broken = FakeApi::with_objects(cluster(AFFECTED, "s1", "s2"));
    assert_eq!(check(&broken, &["--fail-on", "never"]).0, 0);
    assert_eq!(check(&broken, &["--fail-on", "error"]).0, 1);
}

#[test]
fn a_dump_without_snapshot_files_is_reported_not_healthy() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("dump.yaml");
    write_dump(&dump, &cluster(AFFECTED, "s1", "s1"));
    let out = k3sdoctor(["check", "-o", "json", "--from-file"])
        .arg(dump.display().to_string())
        .run();
    let report: CheckReport = out.json();
    let snapshots = report
        .checks
        .iter()
        .find(|c| c.name == "snapshots")
        .unwrap();
    assert!(
        !snapshots.ran && snapshots.note == "not in dump",
        "{:?}",
        report.checks
    );
    assert!(
        report
            .codes()
            .contains(&"warning/dump-incomplete".to_string())
    );
    assert_eq!(report.now.source, "newest-in-dump");
    k3sdoctor(["check", "--fail-on", "warning", "--from-file"])
        .arg(dump.display().to_string())
        .run()
        .code(1)
        .stdout_has("not checked: snapshots (not in dump)");
}

#[test]
fn the_bundled_dump() {
    let dump = repo_path("tests/fixtures/split-cluster")
        .display()
        .to_string();
    let out = k3sdoctor(["--from-file", &dump, "check", "-o", "json"]).run();
    out.code(1);
    let report: CheckReport = out.json();
    // Everything in the dump follows from the split: one finding with its consequences.
    assert_eq!(report.codes(), ["error/lease-split"]);
    let children = report.child_codes(0);
    assert_eq!(
        children,
        [
            "snapshot-missing-from-configmap",
            "snapshot-controller-idle",
            "snapshot-orphaned-in-configmap",
            // The CRs deleted meanwhile wait on the idle controller's finalizer.
            "snapshot-deletion-stuck"
        ]
    );
}

#[test]
fn as_a_kubectl_plugin_help_and_messages_use_the_plugin_name() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = dir.path().join("kubectl-k3s_doctor");
    // A link, not a copy: a copy's write descriptor, inherited by a process another test forks
    // at that moment, makes the exec fail with ETXTBSY ("Text file busy").
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_k3sdoctor"), &plugin).unwrap();
    let help = std::process::Command::new(&plugin)
        .args(["check", "--help"])
        .env_clear()
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.contains("Usage: kubectl k3s-doctor check"), "{text}");
    assert!(
        text.contains("kubectl k3s-doctor check -o json --fail-on warning"),
        "{text}"
    );
    let error = std::process::Command::new(&plugin)
        .args(["leases", "--kubeconfig", "/nope"])
        .env_clear()
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&error.stderr).starts_with("kubectl k3s-doctor: error: "));
    let dump = repo_path("tests/fixtures/split-cluster");
    let leases = std::process::Command::new(&plugin)
        .arg("--from-file")
        .arg(dump)
        .arg("leases")
        .env_clear()
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&leases.stderr)
            .contains("fix: kubectl k3s-doctor leases follow --fix")
    );
}

#[test]
fn a_removed_etcd_member_counts_neither_for_quorum_nor_for_follow() {
    // k3s removed s4's member (removed-node-name set, node-name and node-address gone); its Node
    // stays behind, NotReady, with the etcd role label.
    let mut removed = node(&NodeSpec {
        name: "s4",
        hostname: "s4",
        version: AFFECTED,
        prog: "k3s",
        server: true,
        ready: false,
    });
    let annotations = removed["metadata"]["annotations"].as_object_mut().unwrap();
    annotations.remove("etcd.k3s.cattle.io/node-name");
    annotations.remove("etcd.k3s.cattle.io/node-address");
    annotations.insert("etcd.k3s.cattle.io/remove".into(), json!("true"));
    annotations.insert(
        "etcd.k3s.cattle.io/removed-node-name".into(),
        json!("s4-5f2c1a9e"),
    );
    let mut objects = cluster(AFFECTED, "s1", "s2");
    objects.push(removed);
    let fake = FakeApi::with_objects(objects);
    let (_, report) = check(&fake, &[]);
    assert!(
        !report
            .codes()
            .iter()
            .any(|c| c.ends_with("/etcd-quorum-at-risk")),
        "{:?}",
        report.codes()
    );
    assert_eq!(report.cluster.etcd_members, 3);
    // Three members, all Ready: one server may restart.
    k3sdoctor(["leases", "follow", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .stdout_has("etcd quorum holds (3 etcd members, 3 Ready, 2 Ready during the restart");
}

#[test]
fn a_remediation_command_comes_as_an_argv_too() {
    let dump = repo_path("tests/fixtures/split-cluster");
    let report: Value = k3sdoctor(["--from-file", dump.to_str().unwrap(), "check", "-o", "json"])
        .run()
        .json();
    let split = &report["findings"][0];
    assert_eq!(split["code"], "lease-split");
    assert_eq!(
        split["remediationCommand"],
        json!(["k3sdoctor", "leases", "follow", "--fix"])
    );
    // Advice is not a command: no argv.
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|f| std::iter::once(f).chain(f["children"].as_array().into_iter().flatten()))
            .filter(|f| !f["remediation"]
                .as_str()
                .unwrap_or("")
                .starts_with("k3sdoctor "))
            .all(|f| f.get("remediationCommand").is_none())
    );
}
