//! `serve` through the binary against the fake API server: the endpoints, a split reported
//! and cleared on `/metrics` as the watches deliver it, a 403 and a missing CRD reported
//! (log line and metric) without ending the process, SIGTERM ending it with exit 0, JSON
//! logs, and what it refuses before serving anything. The same split against the real API
//! server: `tests/real_apiserver/serve.rs`.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::Value;

use crate::support::fake_api::{FakeApi, Fault, Role};
use crate::support::fleet::closed_port_url;
use crate::support::harness::{Run, Streaming, assert_matches_schema, k3sdoctor};
use crate::support::objects::{extra_metadata, fresh_cluster, renewed_now, snapshot_cr};
use crate::support::readme::readme_read_only_roles;
use crate::support::report_checks::check_run;
use crate::support::scrape::{self, get, metrics, sample, start_serve};
use crate::support::wait::wait_for;

/// Generous bounds: a change shows in well under a second, a retried watch after the
/// watcher's backoff. Nothing here measures time.
const SEEN: Duration = Duration::from_secs(30);

fn healthy() -> FakeApi {
    fresh_cluster(&["s1", "s2", "s3"])
}

fn start(run: Run) -> (Streaming, SocketAddr) {
    start_serve(run)
}

fn wait_for_sample(address: SocketAddr, series: &str, value: f64) {
    scrape::wait_for_sample(address, series, value, SEEN);
}

#[test]
fn serve_reports_a_split_as_it_happens_and_clears_it_when_healed() {
    let fake = healthy();
    let (serve, address) = start(k3sdoctor(["serve"]).cluster(&fake, Role::ReadOnly));

    wait_for_sample(address, "k3sdoctor_ready", 1.0);
    assert_eq!(get(address, "/readyz"), Some((200, "ok\n".into())));
    assert_eq!(get(address, "/healthz"), Some((200, "ok\n".into())));
    let scrape = metrics(address);
    for (series, value) in [
        ("k3sdoctor_up", 1.0),
        (r#"k3sdoctor_lease_split{lock="k3s",affected="true"}"#, 0.0),
        (
            r#"k3sdoctor_lease_holder_info{lock="k3s-etcd",holder="s1",node="s1"}"#,
            1.0,
        ),
        (r#"k3sdoctor_snapshot_entries{state="missing"}"#, 0.0),
        (r#"k3sdoctor_etcd_members{state="ready"}"#, 3.0),
        (r#"k3sdoctor_etcd_members{state="not_ready"}"#, 0.0),
        (
            r#"k3sdoctor_watch_synced{resource="etcdsnapshotfiles"}"#,
            1.0,
        ),
        (
            &format!(
                r#"k3sdoctor_build_info{{version="{}"}}"#,
                env!("CARGO_PKG_VERSION")
            ),
            1.0,
        ),
    ] {
        assert_eq!(sample(&scrape, series), Some(value), "{series}:\n{scrape}");
    }
    let age = sample(&scrape, r#"k3sdoctor_lease_renew_age_seconds{lock="k3s"}"#);
    assert!(age.is_some_and(|a| a >= 0.0), "{scrape}");
    assert!(scrape.contains("k3sdoctor_evaluation_duration_seconds_count"));
    // v1.29.4 is affected: the one finding says a split can come back.
    assert!(
        scrape.contains(r#"k3sdoctor_findings{code="version-affected",severity="warning"} 1"#),
        "{scrape}"
    );
    assert!(!scrape.contains(r#"code="lease-split""#), "{scrape}");
    assert!(
        scrape.ends_with("# EOF\n"),
        "OpenMetrics text ends with # EOF"
    );

    let (status, body) = get(address, "/report").expect("/report answers");
    assert_eq!(status, 200);
    let report: Value = serde_json::from_str(&body).expect("/report is JSON");
    assert_eq!(report["kind"], "CheckReport");
    assert_matches_schema(&report, "serve /report");
    assert_eq!(get(address, "/nothing-here").map(|(s, _)| s), Some(404));

    // The k3s-etcd lock moves: a split on an affected version.
    fake.put(renewed_now("k3s-etcd", "s2"));
    wait_for_sample(
        address,
        r#"k3sdoctor_lease_split{lock="k3s",affected="true"}"#,
        1.0,
    );
    let scrape = metrics(address);
    assert_eq!(
        sample(
            &scrape,
            r#"k3sdoctor_findings{code="lease-split",severity="error"}"#
        ),
        Some(1.0),
        "{scrape}"
    );
    assert_eq!(
        sample(
            &scrape,
            r#"k3sdoctor_lease_holder_info{lock="k3s-etcd",holder="s2",node="s2"}"#
        ),
        Some(1.0)
    );
    assert!(
        !scrape.contains(r#"lock="k3s-etcd",holder="s1""#),
        "the old holder's series is gone:\n{scrape}"
    );

    // A snapshot the split keeps out of the ConfigMap: the ETCDSnapshotFile watch sees it.
    fake.put(extra_metadata("k3s"));
    fake.put(snapshot_cr("s2", 1_717_000_000, true));
    wait_for_sample(
        address,
        r#"k3sdoctor_snapshot_entries{state="missing"}"#,
        1.0,
    );

    // Healed: k3s follows k3s-etcd.
    fake.put(renewed_now("k3s", "s2"));
    wait_for_sample(
        address,
        r#"k3sdoctor_lease_split{lock="k3s",affected="true"}"#,
        0.0,
    );
    assert!(!metrics(address).contains(r#"code="lease-split""#));

    let out = serve.signal_and_wait(libc::SIGTERM);
    out.code(0);
    out.stderr_has("stopping: SIGTERM or SIGINT received");
    out.stderr_has("verdict: lease-split Lease kube-system/k3s");
}

#[test]
fn serve_reports_a_403_and_a_missing_crd_and_keeps_serving() {
    let fake = healthy();
    fake.set_crd_installed(false);
    // The read-only role without its Nodes rule: that watch is refused, every other works.
    let rule = "  - apiGroups: [\"\"]\n    resources: [nodes]\n    verbs: [list, watch]\n";
    let role = readme_read_only_roles().replacen(rule, "", 1);
    assert!(!role.contains("nodes"), "{role}");
    fake.add_rbac_user("carol-token", "carol", &role);
    let (mut serve, address) =
        start(k3sdoctor(["serve"]).kubeconfig_for(&fake.url(), "carol-token"));

    // Both are logged once, in whichever order the watches fail.
    let (mut forbidden, mut absent) = (None, None);
    while forbidden.is_none() || absent.is_none() {
        let line = serve
            // The kubernetes Endpoints in default are refused too (no Role there), in any
            // order: wait for the Nodes line itself.
            .stderr_line_matching(SEEN, |l| {
                (l.contains("forbidden") && l.contains("nodes"))
                    || l.contains("etcdsnapshotfiles.k3s.cattle.io is not served")
            })
            .unwrap_or_else(|| panic!("403: {forbidden:?}, missing CRD: {absent:?}"));
        if line.contains("forbidden") {
            forbidden = Some(line);
        } else {
            absent = Some(line);
        }
    }
    let (forbidden, absent) = (forbidden.unwrap(), absent.unwrap());
    assert!(forbidden.contains("WARN"), "{forbidden}");
    assert!(forbidden.contains("cannot watch nodes"), "{forbidden}");
    assert!(forbidden.contains("retrying"), "{forbidden}");
    assert!(absent.contains("the snapshot check is skipped"), "{absent}");

    let mut scrape = String::new();
    assert!(
        wait_for(SEEN, || {
            scrape = metrics(address);
            sample(
                &scrape,
                r#"k3sdoctor_watch_errors_total{resource="nodes",reason="forbidden"}"#,
            )
            .is_some_and(|n| n >= 1.0)
                && sample(
                    &scrape,
                    r#"k3sdoctor_watch_errors_total{resource="etcdsnapshotfiles",reason="not_found"}"#,
                )
                .is_some_and(|n| n >= 1.0)
                // Evaluated since (the evaluation follows the last change by a moment).
                && sample(&scrape, r#"k3sdoctor_watch_synced{resource="nodes"}"#).is_some()
        }),
        "{scrape}"
    );
    assert_eq!(
        sample(&scrape, r#"k3sdoctor_watch_synced{resource="nodes"}"#),
        Some(0.0),
        "{scrape}"
    );
    assert_eq!(
        sample(
            &scrape,
            r#"k3sdoctor_watch_synced{resource="etcdsnapshotfiles"}"#
        ),
        Some(1.0),
        "a CRD that is not installed is an answer"
    );
    assert_eq!(sample(&scrape, "k3sdoctor_ready"), Some(0.0));
    assert_eq!(sample(&scrape, "k3sdoctor_up"), Some(0.0));
    assert_eq!(get(address, "/readyz").map(|(s, _)| s), Some(503));
    assert_eq!(get(address, "/report").map(|(s, _)| s), Some(503));
    assert_eq!(get(address, "/healthz").map(|(s, _)| s), Some(200));

    // Granted the Nodes rule: the retried watch lists, is logged as working again, and
    // serve is ready and complete.
    fake.add_rbac_user(
        "carol-token",
        "carol",
        &format!("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: nodes\nrules:\n{rule}"),
    );
    serve
        .stderr_line_matching(SEEN, |l| l.contains("watch nodes works again"))
        .expect("the recovery is logged");
    wait_for_sample(address, "k3sdoctor_ready", 1.0);
    wait_for_sample(address, "k3sdoctor_up", 1.0);
    assert_eq!(get(address, "/readyz").map(|(s, _)| s), Some(200));

    serve.signal_and_wait(libc::SIGTERM).code(0);
}

#[test]
fn without_the_snapshot_crd_serve_is_ready_and_skips_the_snapshot_check() {
    let fake = healthy();
    fake.set_crd_installed(false);
    let (serve, address) = start(k3sdoctor(["serve"]).cluster(&fake, Role::ReadOnly));
    wait_for_sample(address, "k3sdoctor_ready", 1.0);
    let scrape = metrics(address);
    assert_eq!(sample(&scrape, "k3sdoctor_up"), Some(1.0), "{scrape}");
    assert!(!scrape.contains("k3sdoctor_snapshot_entries{"), "{scrape}");
    let (_, body) = get(address, "/report").unwrap();
    let report: Value = serde_json::from_str(&body).unwrap();
    let snapshots = check_run(&report, "snapshots");
    assert_eq!(snapshots["ran"], false, "{snapshots}");

    // Installed later: the watcher asks again and the check runs.
    fake.set_crd_installed(true);
    wait_for_sample(
        address,
        r#"k3sdoctor_snapshot_entries{state="missing"}"#,
        0.0,
    );
    serve.signal_and_wait(libc::SIGTERM).code(0);
}

#[test]
fn json_logs_are_one_object_per_line() {
    let fake = healthy();
    let (serve, address) =
        start(k3sdoctor(["serve", "--log-format", "json"]).cluster(&fake, Role::ReadOnly));
    wait_for_sample(address, "k3sdoctor_ready", 1.0);
    let out = serve.signal_and_wait(libc::SIGTERM);
    out.code(0);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert!(lines.len() >= 3, "{}", out.stderr);
    for line in lines {
        let event: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("not a JSON object ({e}): {line}"));
        assert!(event["timestamp"].is_string(), "{line}");
        assert!(event["level"].is_string(), "{line}");
        assert!(event["message"].is_string(), "{line}");
    }
    assert!(
        out.stderr
            .contains(r#""message":"verdict: version-affected Node s1"#)
            || out
                .stderr
                .contains(r#""message":"verdict: version-affected"#),
        "{}",
        out.stderr
    );
}

#[test]
fn serve_refuses_what_it_cannot_do_before_listening() {
    let fake = healthy();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap();
    let out = k3sdoctor(["serve", "--listen", &port.to_string()])
        .cluster(&fake, Role::ReadOnly)
        .run();
    out.code(2).one_line_error();
    out.stderr_has(&format!("serve: cannot listen on {port}"));
    // Go's `:PORT` means every interface.
    let taken = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let out = k3sdoctor(["serve", "--listen", &format!(":{port}")])
        .cluster(&fake, Role::ReadOnly)
        .run();
    out.code(2).one_line_error();
    out.stderr_has(&format!("serve: cannot listen on 0.0.0.0:{port}"));

    for (args, says) in [
        // Usage errors now: serve does not take them (nor list them in its --help).
        (
            vec!["serve", "--from-file", "x.yaml"],
            "unexpected argument '--from-file'",
        ),
        (
            vec!["-o", "json", "serve"],
            "GET /report has the CheckReport",
        ),
        (
            vec!["serve", "--now", "2024-05-31T12:00:00Z"],
            "`k3sdoctor serve` does not take it",
        ),
        (
            vec!["serve", "--context", "a", "--context", "b"],
            "`k3sdoctor serve` reads one cluster",
        ),
    ] {
        let out = k3sdoctor(args.clone()).cluster(&fake, Role::ReadOnly).run();
        out.code(2).one_line_error();
        out.stderr_has(says);
    }
    let out = k3sdoctor(["serve", "--listen", "nowhere"]).run();
    out.code(2);
    assert!(fake.requests().is_empty(), "nothing was read");
}

#[test]
fn an_api_server_that_refuses_connections_is_reported_and_sigterm_still_ends_serve() {
    let (mut serve, address) = start(
        k3sdoctor(["serve"]).kubeconfig_for(&closed_port_url(), FakeApi::token(Role::ReadOnly)),
    );
    assert_eq!(get(address, "/healthz").map(|(s, _)| s), Some(200));
    assert_eq!(get(address, "/readyz").map(|(s, _)| s), Some(503));
    let refused = serve
        .stderr_line_matching(SEEN, |l| l.contains("WARN"))
        .expect("the failed watches are logged");
    assert!(refused.contains("retrying"), "{refused}");
    let mut scrape = String::new();
    assert!(
        wait_for(SEEN, || {
            scrape = metrics(address);
            sample(
                &scrape,
                r#"k3sdoctor_watch_errors_total{resource="leases",reason="other"}"#,
            )
            .is_some_and(|n| n >= 1.0)
        }),
        "{scrape}"
    );
    assert_eq!(sample(&scrape, "k3sdoctor_ready"), Some(0.0), "{scrape}");
    serve.signal_and_wait(libc::SIGTERM).code(0);
}

/// A watch that fails four times in a row, with two different causes, is one
/// failure episode: one WARN naming the watch (the first cause), every attempt counted, and one
/// INFO once its list succeeds, which is also what brings `k3sdoctor_up` back to 1 for a
/// ConfigMap that does not exist and so never sends an event.
#[test]
fn a_failing_watch_is_one_warning_per_episode_and_works_again_once_it_has_listed() {
    let fake = healthy();
    let name = "rke2-etcd-snapshot-extra-metadata";
    fake.inject(Fault::status("GET", name, 500).times(2));
    fake.inject(Fault::drop_connection("GET", name).times(2));
    let (serve, address) = start(k3sdoctor(["serve"]).cluster(&fake, Role::ReadOnly));
    wait_for_sample(address, "k3sdoctor_up", 1.0);
    let scrape = metrics(address);
    let resource = format!("configmaps/{name}");
    assert_eq!(
        sample(
            &scrape,
            &format!(r#"k3sdoctor_watch_errors_total{{resource="{resource}",reason="other"}}"#)
        ),
        Some(4.0),
        "{scrape}"
    );

    let out = serve.signal_and_wait(libc::SIGTERM);
    out.code(0);
    let warnings: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains(" WARN ") && l.contains(&format!("resource={resource} ")))
        .collect();
    assert_eq!(warnings.len(), 1, "{}", out.stderr);
    assert!(
        warnings[0].contains(&format!("cannot watch configmap kube-system/{name}")),
        "{}",
        warnings[0]
    );
    out.stderr_has(&format!(
        "watch {resource} works again after 4 failed attempt(s)"
    ));
    assert!(!out.stderr.contains("ERROR"), "{}", out.stderr);
}

/// A retention delete leaves the entry for the moment k3s's controller takes
/// to remove it (the CR carries its deletionTimestamp and the controller's finalizer until the
/// key is gone). serve must not call that entry orphaned; a deletion that hangs past the grace
/// is one.
#[test]
fn serve_does_not_call_the_entry_of_a_cr_being_deleted_an_orphan() {
    let fake = healthy();
    let now = jiff::Timestamp::now();
    let mut cr = snapshot_cr("s1", now.as_second() - 7200, true);
    cr["metadata"]["finalizers"] =
        serde_json::json!(["wrangler.cattle.io/managed-etcd-snapshots-controller"]);
    cr["metadata"]["deletionTimestamp"] = Value::String(now.to_string());
    let key = format!("local-{}", cr["spec"]["snapshotName"].as_str().unwrap());
    fake.put(extra_metadata("k3s"));
    fake.put(crate::support::objects::snapshot_configmap(
        "k3s",
        &[(key, "{}".to_string())],
    ));
    fake.put(cr.clone());
    let (serve, address) = start(k3sdoctor(["serve"]).cluster(&fake, Role::ReadOnly));
    wait_for_sample(address, "k3sdoctor_ready", 1.0);
    let scrape = metrics(address);
    assert_eq!(
        sample(&scrape, r#"k3sdoctor_snapshot_entries{state="orphaned"}"#),
        Some(0.0),
        "{scrape}"
    );
    assert!(
        !scrape.contains("snapshot-orphaned-in-configmap"),
        "{scrape}"
    );

    // The same deletion, begun ten minutes ago and still not done: that entry is orphaned.
    let hung = jiff::Timestamp::from_second(now.as_second() - 600).unwrap();
    cr["metadata"]["deletionTimestamp"] = Value::String(hung.to_string());
    fake.put(cr);
    wait_for_sample(
        address,
        r#"k3sdoctor_snapshot_entries{state="orphaned"}"#,
        1.0,
    );
    serve.signal_and_wait(libc::SIGTERM).code(0);
}
