//! `-v`, `-vv` and `-vvv` each add something on stderr (commands::verbosity): what was read,
//! then every HTTP request, then response headers and error bodies; never a credential, and
//! never anything on stdout.

use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::{k3sdoctor, repo_path};
use crate::support::objects::fresh_cluster;

fn leases(fake: &FakeApi, verbosity: &[&str]) -> crate::support::harness::Output {
    k3sdoctor(["leases", "-o", "json"].iter().chain(verbosity))
        .cluster(fake, Role::ReadOnly)
        .run()
}

#[test]
fn each_level_adds_its_own_lines_and_none_shows_the_token() {
    let fake = fresh_cluster(&["server-1", "server-2"]);
    let quiet = leases(&fake, &[]);
    let v = leases(&fake, &["-v"]);
    let vv = leases(&fake, &["-vv"]);
    let vvv = leases(&fake, &["-v", "-v", "-v"]);
    for out in [&quiet, &v, &vv, &vvv] {
        out.code(0);
        // stdout is the report alone, at every level.
        serde_json::from_str::<serde_json::Value>(&out.stdout).expect("JSON on stdout");
        assert!(
            !out.stderr.contains(FakeApi::token(Role::ReadOnly)),
            "{}",
            out.stderr
        );
    }
    let read = "list leases in kube-system: 2 items in";
    let request = "http.method=GET http.url=";
    let ended = "}: close time.busy=";
    let since_start = regex::Regex::new(r"(?m)^\s*\d+\.\d+s DEBUG HTTP\{").unwrap();
    assert!(!quiet.stderr.contains(read), "{}", quiet.stderr);
    // -v: one line per read, no HTTP detail.
    v.stderr_has(read).stderr_has("list nodes: 2 items in");
    assert!(!v.stderr.contains(request), "{}", v.stderr);
    // -vv: every request, with its URL and status, and nothing of -vvv.
    vv.stderr_has(read)
        .stderr_has(&format!("{request}{}/api/v1/nodes", fake.url()))
        .stderr_has("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases")
        .stderr_has("http.status_code=200");
    assert!(!vv.stderr.contains(ended), "{}", vv.stderr);
    // -vvv: when each request ended, and how long it took.
    vvv.stderr_has(request).stderr_has(ended);
    assert!(since_start.is_match(&vvv.stderr), "{}", vvv.stderr);
    assert!(!since_start.is_match(&vv.stderr), "{}", vv.stderr);
}

#[test]
fn on_a_dump_v_says_what_was_read_from_which_files() {
    let dump = repo_path("tests/fixtures/split-cluster");
    let dump = dump.to_str().unwrap();
    let quiet = k3sdoctor(["--from-file", dump, "leases"]).run();
    assert!(!quiet.stderr.contains("read "), "{}", quiet.stderr);
    k3sdoctor(["--from-file", dump, "leases", "-v"])
        .run()
        .stderr_has(&format!("read {dump}: 8 Leases, 4 Nodes"));
}

#[test]
fn the_error_status_of_a_refused_request_shows_at_vv_without_the_token() {
    let fake = fresh_cluster(&["server-1"]);
    let token = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl";
    let out = k3sdoctor(["leases", "-vv"])
        .kubeconfig_for(&fake.url(), token)
        .run();
    // The API server's Status, as kube-rs traces it.
    out.code(3)
        .stderr_has("Unsuccessful: Status")
        .stderr_has("Unauthorized");
    assert!(!out.stderr.contains(token), "{}", out.stderr);
    // One error line still ends the run, after the trace.
    assert_eq!(
        out.stderr
            .lines()
            .filter(|l| l.starts_with("k3sdoctor: error:"))
            .count(),
        1,
        "{}",
        out.stderr
    );
}
