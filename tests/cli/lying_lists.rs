//! List replies that lie about their paging, and answers too large to hold: a
//! `remainingItemCount` of billions is only a hint, a `continue` token that repeats or never
//! ends is refused in one line with exit 3, a body past the bound is refused before it is
//! held, and in a fleet only the members that lie are unreadable.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::fake_api::{FakeApi, Fault, ListLie, Role};
use crate::support::fleet::{FleetContext, write_fleet_kubeconfig};
use crate::support::harness::{Output, k3sdoctor};
use crate::support::objects::{NOW, fresh_cluster, lease, server};
use crate::support::scrape::{metrics, sample, start_serve};
use crate::support::wait::wait_for;

const V: &str = "v1.29.4+k3s1";
const WITHIN: Duration = Duration::from_secs(60);

fn split() -> FakeApi {
    FakeApi::with_objects(vec![
        server("s1", V),
        server("s2", V),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s2", 1),
    ])
}

/// `check` against `fake`, which must end within a minute.
fn check(fake: &FakeApi) -> Output {
    let started = Instant::now();
    let out = k3sdoctor(["check", "--now", NOW])
        .cluster(fake, Role::ReadOnly)
        .run();
    assert!(started.elapsed() < WITHIN, "took {:?}", started.elapsed());
    out
}

#[test]
fn a_remaining_item_count_of_billions_is_only_a_hint() {
    for count in [4_000_000_000, i64::MAX] {
        let fake = split();
        fake.inject(Fault::lying_list(
            "GET",
            "/namespaces/kube-system/leases",
            ListLie::RemainingItemCount(count),
        ));
        // The list holds what it holds: the split is found, nothing aborts.
        check(&fake).code(1).stdout_has("lease-split");
    }
}

#[test]
fn a_repeated_continue_token_is_refused_in_one_line() {
    let fake = split();
    fake.inject(Fault::lying_list(
        "GET",
        "/namespaces/kube-system/leases",
        ListLie::SameContinue,
    ));
    check(&fake)
        .code(3)
        .one_line_error()
        .stderr_has("cannot list leases in kube-system at ")
        .stderr_has("the same continue token twice");
    let pages = fake
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/leases") && r.method == "GET")
        .count();
    assert_eq!(pages, 2, "the second page shows the repeat");
}

#[test]
fn endless_continue_tokens_end_in_exit_3() {
    let fake = split();
    fake.inject(Fault::lying_list(
        "GET",
        "/api/v1/nodes",
        ListLie::EndlessContinue,
    ));
    check(&fake)
        .code(3)
        .one_line_error()
        .stderr_has("cannot list nodes at ")
        .stderr_has("did not end after 400 pages");
}

#[test]
fn a_body_past_the_bound_is_refused_before_it_is_held() {
    let fake = split();
    fake.inject(Fault::huge_body(
        "GET",
        "/namespaces/kube-system/leases",
        1 << 30,
    ));
    check(&fake)
        .code(3)
        .one_line_error()
        .stderr_has("cannot list leases in kube-system: ")
        .stderr_has("an answer larger than 64 MiB");
}

#[test]
fn in_a_fleet_only_the_member_that_lies_is_unreadable() {
    let honest = split();
    let endless = split();
    endless.inject(Fault::lying_list(
        "GET",
        "/api/v1/nodes",
        ListLie::EndlessContinue,
    ));
    let huge = split();
    huge.inject(Fault::huge_body("GET", "/api/v1/nodes", 1 << 30));
    let dir = tempfile::tempdir().unwrap();
    let member = |name, fake: &FakeApi| (name, fake.url());
    let members = [
        member("honest", &honest),
        member("endless", &endless),
        member("huge", &huge),
    ];
    let contexts: Vec<FleetContext> = members
        .iter()
        .map(|(name, url)| FleetContext {
            name,
            server: url,
            token: Role::ReadOnly.token(),
            ca_pem: None,
        })
        .collect();
    let kubeconfig = write_fleet_kubeconfig(dir.path(), "fleet.yaml", &contexts);
    let started = Instant::now();
    let out = k3sdoctor(["check", "--all-contexts", "-o", "json", "--now", NOW])
        .kubeconfig(&kubeconfig)
        .run();
    assert!(started.elapsed() < WITHIN, "took {:?}", started.elapsed());
    out.code(3)
        .stderr_has("context endless: cannot list nodes at ")
        .stderr_has("context huge: cannot list nodes: ");
    let report: Value = out.json();
    let outcome = |context: &str| {
        report["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["context"] == context)
            .map(|e| (e["outcome"].clone(), e["error"].clone()))
            .unwrap()
    };
    assert_eq!(outcome("honest").0, "checked", "{report:#}");
    // "error": neither unreachable nor refused; the error says what.
    assert_eq!(outcome("endless").0, "error", "{report:#}");
    assert!(
        outcome("endless")
            .1
            .as_str()
            .is_some_and(|e| e.contains("did not end after 400 pages")),
        "{report:#}"
    );
    assert_eq!(outcome("huge").0, "error", "{report:#}");
    let honest_report = &report["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["context"] == "honest")
        .unwrap()["report"];
    assert_eq!(honest_report["findings"][0]["code"], "lease-split");
}

#[test]
fn serve_logs_a_watch_whose_list_never_ends_and_keeps_serving() {
    let fake = fresh_cluster(&["s1", "s2", "s3"]);
    fake.inject(Fault::lying_list(
        "GET",
        "/namespaces/kube-system/leases",
        ListLie::EndlessContinue,
    ));
    let (mut serve, address) = start_serve(k3sdoctor(["serve"]).cluster(&fake, Role::ReadOnly));
    let line = serve
        .stderr_line_matching(WITHIN, |l| l.contains("WARN") && l.contains("leases"))
        .expect("the failed list is logged");
    assert!(line.contains("did not end after 400 pages"), "{line}");
    assert!(line.contains("retrying"), "{line}");
    let mut scrape = String::new();
    assert!(
        wait_for(WITHIN, || {
            scrape = metrics(address);
            sample(
                &scrape,
                r#"k3sdoctor_watch_errors_total{resource="leases",reason="other"}"#,
            )
            .is_some_and(|n| n >= 1.0)
        }),
        "{scrape}"
    );
    assert_eq!(sample(&scrape, "k3sdoctor_up"), Some(0.0), "{scrape}");
    // Honest again: the retried list ends and serve is up.
    fake.clear_faults();
    assert!(
        wait_for(WITHIN, || sample(&metrics(address), "k3sdoctor_up")
            == Some(1.0)),
        "{}",
        metrics(address)
    );
    serve.signal_and_wait(libc::SIGTERM).code(0);
}
