//! Node passwords and certificates on the real API server: node password Secrets and the serving
//! certificate Secret created as admin with their data, Nodes beside them, and the viewer with
//! every read-only right. Without the opt-in role the two checks are not checked; with the role
//! exactly as `rbac secrets-metadata` prints it, the real metadata-only list (the API server's
//! own PartialObjectMetadataList) gives the findings, and no secret value reaches any output.

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use crate::common::{run_as, viewer_with_every_read_only_right};
use crate::report::CheckReport;
use crate::support::envtest::{EnvTest, User};
use crate::support::harness::k3sdoctor;
use crate::support::objects::server;

const NODES: &str = "/api/v1/nodes";
const SECRETS: &str = "/api/v1/namespaces/kube-system/secrets";
/// What no output may contain (`stringData` is stored as `data`, base64).
const VALUE: &str = "real-node-password-hash-never-printed";
const VALUE_BASE64: &str = "cmVhbC1ub2RlLXBhc3N3b3JkLWhhc2gtbmV2ZXItcHJpbnRlZA==";

fn secret(name: &str, annotations: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "namespace": "kube-system", "annotations": annotations},
        "type": "k3s.cattle.io/node-password",
        "stringData": {"hash": VALUE},
    })
}

fn run_of(report: &CheckReport, name: &str) -> (bool, String) {
    let run = report.checks.iter().find(|c| c.name == name).unwrap();
    (run.ran, run.note.clone())
}

#[test]
fn real_node_passwords_need_the_opt_in_role_and_never_show_their_data() {
    let Some(env) = EnvTest::start("real_node_passwords") else {
        return;
    };
    let admin = env.admin();
    admin.create(NODES, &server("s1", "v1.33.5+k3s1"));
    admin.create(SECRETS, &secret("s1.node-password.k3s", json!({})));
    admin.create(SECRETS, &secret("gone.node-password.k3s", json!({})));
    admin.create(
        SECRETS,
        &secret(
            "k3s-serving",
            json!({"listener.cattle.io/static": "true",
                   "listener.cattle.io/cn-10.0.0.1": "10.0.0.1"}),
        ),
    );
    // The Secrets were created just now: judged an hour later they are past k3s's 10 minutes.
    let later = (Timestamp::now() + SignedDuration::from_hours(1))
        .round(jiff::Unit::Second)
        .unwrap()
        .to_string();
    let args = [
        "check",
        "-o",
        "json",
        "--fail-on",
        "never",
        "-v",
        "--now",
        &later,
    ];

    viewer_with_every_read_only_right(&env);
    let out = run_as(&env, User::Viewer, &args);
    let report: CheckReport = out.json();
    for name in ["node-passwords", "serving-cert-static"] {
        let (ran, note) = run_of(&report, name);
        assert!(!ran, "{name}");
        assert_eq!(
            note,
            "needs list secrets in kube-system: `k3sdoctor rbac secrets-metadata` prints the role"
        );
    }

    let printed = k3sdoctor(["rbac", "secrets-metadata"]).run();
    admin.apply_yaml(&printed.stdout);
    admin.bind_in("kube-system", "k3sdoctor-secrets-metadata", "viewer");
    let out = run_as(&env, User::Viewer, &args);
    for text in [&out.stdout, &out.stderr] {
        assert!(!text.contains(VALUE), "{text}");
        assert!(!text.contains(VALUE_BASE64), "{text}");
    }
    assert!(
        out.stderr
            .contains("list secrets in kube-system (metadata only): 3 items"),
        "{}",
        out.stderr
    );
    let report: CheckReport = out.json();
    assert!(run_of(&report, "node-passwords").0);
    assert!(run_of(&report, "serving-cert-static").0);
    let mut found: Vec<(String, String)> = report
        .findings
        .iter()
        .map(|f| &f.finding)
        .filter(|f| ["node-password-orphaned", "serving-cert-frozen"].contains(&f.code.as_str()))
        .map(|f| (f.code.clone(), f.object.clone()))
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            (
                "node-password-orphaned".to_string(),
                "Secret kube-system/gone.node-password.k3s".to_string()
            ),
            (
                "serving-cert-frozen".to_string(),
                "Secret kube-system/k3s-serving".to_string()
            ),
        ],
        "{:?}",
        report.codes()
    );
    // The table output, too.
    let out = run_as(
        &env,
        User::Viewer,
        &["check", "--fail-on", "never", "-v", "--now", &later],
    );
    for text in [&out.stdout, &out.stderr] {
        assert!(
            !text.contains(VALUE) && !text.contains(VALUE_BASE64),
            "{text}"
        );
    }
}
