//! The servers' node-args over the fake API server and a dump: the servers' flags as
//! `<prog>.io/node-args` carries them reach `check` live (read-only role) and offline.

use serde_json::{Value, json};

use crate::report::CheckReport;
use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::k3sdoctor;
use crate::support::objects::{NOW, agent, lease, server, write_dump};

const V: &str = "v1.34.6+k3s1";
const SECRET: &str = "FwoGZXIvYXdzEXAMPLEsessiontoken";

fn with_args(mut node: Value, args: &str, stamp: &str) -> Value {
    node["metadata"]["annotations"]["k3s.io/node-args"] = json!(args);
    node["metadata"]["annotations"]["etcd.k3s.cattle.io/local-snapshots-timestamp"] = json!(stamp);
    node
}

/// NOW is 2024-05-31T12:10:40Z: s1 and s2 stamped a minute before, s3 an hour before.
fn cluster(s1_args: &str) -> Vec<Value> {
    vec![
        with_args(server("s1", V), s1_args, "2024-05-31T12:09:40Z"),
        with_args(
            server("s2", V),
            r#"["server","--etcd-snapshot-retention","9"]"#,
            "2024-05-31T12:09:40Z",
        ),
        with_args(
            server("s3", V),
            r#"["server","--etcd-snapshot-retention","9"]"#,
            "2024-05-31T11:10:40Z",
        ),
        agent("w1", V),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
    ]
}

fn codes(report: &CheckReport) -> Vec<String> {
    report.codes()
}

#[test]
fn node_args_findings_come_live_with_the_read_only_role() {
    let leaky = format!(
        r#"["server","--etcd-snapshot-retention","12","--etcd-s3-session-token","{SECRET}"]"#
    );
    let fake = FakeApi::with_objects(cluster(&leaky));
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    // The exposed secret is an error: exit 1 by default.
    out.code(1);
    assert!(!out.stdout.contains(SECRET), "the secret was printed");
    let report: CheckReport = out.json();
    let found = codes(&report);
    assert!(
        found.contains(&"error/node-args-secret-exposed".to_string()),
        "{found:?}"
    );
    assert!(
        found.contains(&"warning/etcd-config-drift".to_string()),
        "{found:?}"
    );
    assert!(
        found.contains(&"warning/snapshot-reconcile-stalled".to_string()),
        "{found:?}"
    );
    for name in ["etcd-config", "snapshot-schedule"] {
        let run = report.checks.iter().find(|c| c.name == name).expect(name);
        assert!(run.ran, "{name}: {:?}", report.checks);
    }
    // The table names the setting, not its value.
    let table = k3sdoctor(["check", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    assert!(
        table.stdout.contains("--etcd-s3-session-token"),
        "{}",
        table.stdout
    );
    assert!(!table.stdout.contains(SECRET) && !table.stderr.contains(SECRET));
}

#[test]
fn agreeing_redacted_flags_and_fresh_stamps_give_nothing() {
    let mut objects = cluster(r#"["server","--etcd-snapshot-retention","9","--token","********"]"#);
    // s3 stamped a minute ago as well.
    objects[2] = with_args(
        server("s3", V),
        r#"["server","--etcd-snapshot-retention","9"]"#,
        "2024-05-31T12:09:40Z",
    );
    let fake = FakeApi::with_objects(objects);
    let out = k3sdoctor(["check", "-o", "json", "--now", NOW, "--fail-on", "warning"])
        .cluster(&fake, Role::ReadOnly)
        .run();
    let report: CheckReport = out.json();
    let ours: Vec<String> = codes(&report)
        .into_iter()
        .filter(|c| {
            [
                "node-args-secret-exposed",
                "etcd-config-drift",
                "snapshot-reconcile-stalled",
                "snapshot-s3",
            ]
            .iter()
            .any(|code| c.contains(code))
        })
        .collect();
    assert!(ours.is_empty(), "{ours:?}");
    out.code(0);
}

#[test]
fn a_dump_without_snapshot_files_still_checks_the_flags() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("dump.yaml");
    let leaky = format!(r#"["server","-t={SECRET}"]"#);
    write_dump(&dump, &cluster(&leaky));
    let out = k3sdoctor(["check", "-o", "json", "--from-file"])
        .arg(dump.display().to_string())
        .run();
    let report: CheckReport = out.json();
    assert!(codes(&report).contains(&"error/node-args-secret-exposed".to_string()));
    assert!(!out.stdout.contains(SECRET));
    let schedule = report
        .checks
        .iter()
        .find(|c| c.name == "snapshot-schedule")
        .unwrap();
    assert!(
        !schedule.ran && schedule.note.contains("not read"),
        "{:?}",
        report.checks
    );
}

/// A fleet: the leaky cluster's entry carries the finding, the clean one's does not, and the
/// fleet report never holds the secret.
#[test]
fn a_fleet_names_the_cluster_that_leaks() {
    use crate::support::fleet::{FleetContext, write_fleet_kubeconfig};
    let leaky = FakeApi::with_objects(cluster(&format!(
        r#"["server","--etcd-s3-session-token","{SECRET}"]"#
    )));
    let mut clean_objects = cluster(r#"["server","--etcd-snapshot-retention","9"]"#);
    clean_objects[2] = with_args(
        server("s3", V),
        r#"["server","--etcd-snapshot-retention","9"]"#,
        "2024-05-31T12:09:40Z",
    );
    let clean = FakeApi::with_objects(clean_objects);
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = write_fleet_kubeconfig(
        dir.path(),
        "fleet.yaml",
        &[
            FleetContext {
                name: "leaky",
                server: &leaky.url(),
                token: Role::ReadOnly.token(),
                ca_pem: None,
            },
            FleetContext {
                name: "clean",
                server: &clean.url(),
                token: Role::ReadOnly.token(),
                ca_pem: None,
            },
        ],
    );
    let out = k3sdoctor(["check", "--all-contexts", "-o", "json", "--now", NOW])
        .kubeconfig(&kubeconfig)
        .run();
    assert!(!out.stdout.contains(SECRET) && !out.stderr.contains(SECRET));
    let report: Value = serde_json::from_str(&out.stdout).expect("a FleetReport");
    let codes_of = |context: &str| -> Vec<String> {
        let entry = report["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["context"] == context)
            .unwrap_or_else(|| panic!("no entry {context}: {report}"));
        entry["report"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["code"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(
        codes_of("leaky").contains(&"node-args-secret-exposed".to_string()),
        "{report}"
    );
    assert!(
        !codes_of("clean")
            .iter()
            .any(|c| c == "node-args-secret-exposed" || c == "etcd-config-drift")
    );
    out.code(1);
}
