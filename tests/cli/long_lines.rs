//! Error, note and finding lines are bounded whatever the cluster holds: each is cut at 4 KiB
//! (a table cell at 1 KiB) and says how many characters were left out, and what an API server or a Job wrote is quoted
//! up to 1 KiB, so the advice after it is never what gets cut.

use serde_json::{Value, json};

use crate::support::fake_api::{FakeApi, Fault, Role};
use crate::support::harness::{Output, k3sdoctor};
use crate::support::objects::{NOW, lease, server, server_at, write_dump};

/// 4 KiB of text, the cut's own words and the line's prefix.
const LONGEST: usize = 4096 + 200;

#[track_caller]
fn every_line_bounded(text: &str, what: &str) {
    let longest = text.lines().map(str::len).max().unwrap_or(0);
    assert!(longest <= LONGEST, "{what}: a line of {longest} bytes");
}

#[test]
fn an_error_quoting_a_huge_answer_is_one_bounded_line() {
    let fake = FakeApi::with_objects(vec![server("s1", "v1.29.4+k3s1")]);
    let message = "no ".repeat(80_000);
    let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": "Forbidden", "code": 403});
    fake.inject(Fault::raw(
        "GET",
        "/leases",
        403,
        "application/json",
        status.to_string(),
    ));
    let out: Output = k3sdoctor(["leases"]).cluster(&fake, Role::ReadOnly).run();
    out.code(3)
        .one_line_error()
        .stderr_has("cannot list leases in kube-system: forbidden (403): no no")
        .stderr_has("… and ")
        .stderr_has(" more characters");
    every_line_bounded(&out.stderr, "the error");
}

#[test]
fn a_note_naming_a_huge_object_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let name = format!("s{}", "x".repeat(300_000));
    let node = server(&name, "v1.29.4+k3s1");
    let dump = dir.path().join("dump.yaml");
    write_dump(
        &dump,
        &[
            node.clone(),
            node,
            lease("k3s", &name, 1),
            lease("k3s-etcd", &name, 1),
        ],
    );
    let out = k3sdoctor([
        "leases",
        "--from-file",
        dump.to_str().unwrap(),
        "--now",
        NOW,
    ])
    .run();
    out.stderr_has("note: Node sxxx")
        .stderr_has(" more characters");
    // The table's holder cell and the findings naming the holder are bounded too.
    every_line_bounded(&out.stdout, "stdout");
    let note = out
        .stderr
        .lines()
        .find(|l| l.starts_with("note: Node sxxx"))
        .unwrap_or_else(|| panic!("no note:\n{}", &out.stderr[..out.stderr.len().min(2000)]));
    assert!(note.len() <= LONGEST, "a note of {} bytes", note.len());
    every_line_bounded(&out.stderr, "stderr");
}

fn failed_chart(name: &str, message: &str) -> [Value; 2] {
    [
        json!({
            "apiVersion": "helm.cattle.io/v1", "kind": "HelmChart",
            "metadata": {"name": name, "namespace": "kube-system"},
            "spec": {"chart": "x"},
            "status": {"jobName": format!("helm-install-{name}")}
        }),
        json!({
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": format!("helm-install-{name}"), "namespace": "kube-system",
                         "labels": {"helmcharts.helm.cattle.io/chart": name}},
            "spec": {"backoffLimit": 1000},
            "status": {"failed": 6, "startTime": "2024-05-31T11:00:00Z", "conditions": [
                {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                 "message": message, "lastTransitionTime": "2024-05-31T12:06:40Z"}]}
        }),
    ]
}

#[test]
fn a_finding_quoting_a_huge_message_is_bounded_and_keeps_its_meaning() {
    let message = "the chart failed to render: ".to_string() + &"boom ".repeat(40_000);
    let mut objects = vec![
        server_at("s1", "v1.31.5+k3s1", "10.0.0.1"),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
    ];
    for n in 0..3 {
        objects.extend(failed_chart(&format!("chart-{n}"), &message));
    }
    let fake = FakeApi::with_objects(objects);
    let out = k3sdoctor(["check", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    out.code(1);
    let both = format!("{}{}", out.stdout, out.stderr);
    // Wrapped at 80 columns: the words read in order, whatever the line breaks.
    let flat = both.split_whitespace().collect::<Vec<_>>().join(" ");
    for words in [
        "the chart failed to render: boom boom",
        "more characters)",
        // The failure's words are quoted up to 1 KiB, so what follows them (what it means,
        // the fix) is never what gets cut.
        "a failed Job is not run again",
    ] {
        assert!(flat.contains(words), "lacks {words:?}:\n{both}");
    }
    every_line_bounded(&both, "the output");
    assert!(
        out.stdout.len() + out.stderr.len() < 3 * 3 * LONGEST + 16 * 1024,
        "{} bytes for three findings",
        out.stdout.len() + out.stderr.len()
    );
    // JSON says the same.
    let report: Value = k3sdoctor(["check", "--now", NOW, "-o", "json"])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .json();
    let messages: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["message"].as_str())
        .filter(|m| m.contains("the chart failed to render"))
        .collect();
    assert_eq!(messages.len(), 3, "{report:#}");
    for m in messages {
        assert!(m.len() < 2048 && m.contains(" more characters)"), "{m}");
    }
}
