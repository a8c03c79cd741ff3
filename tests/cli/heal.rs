//! `serve --heal` against the fake API server: the gates each block with their reason (fixed
//! version, target NotReady, pause), and a write the role forbids is reported once and never
//! retried. The heals themselves run on simulated k3s servers: tests/real_apiserver/heal.rs.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::json;

use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::k3sdoctor;
use crate::support::objects::{NodeSpec, node, renewed_now, server};
use crate::support::readme::{readme_namespaced_role, readme_read_only_roles};
use crate::support::scrape::{get, metrics, sample, start_serve, wait_for_sample};

const SEEN: Duration = Duration::from_secs(30);
const AFFECTED: &str = "v1.29.4+k3s1";

fn split_on(version: &str, s2_ready: bool) -> FakeApi {
    let fake = FakeApi::start();
    fake.put(server("s1", version));
    fake.put(node(&NodeSpec {
        name: "s2",
        hostname: "s2",
        version,
        prog: "k3s",
        server: true,
        ready: s2_ready,
    }));
    fake.put(server("s3", version));
    fake.put(renewed_now("k3s", "s1"));
    fake.put(renewed_now("k3s-etcd", "s2"));
    fake
}

fn blocked(address: SocketAddr, reason: &str) {
    wait_for_sample(
        address,
        &format!(r#"k3sdoctor_heal_blocked{{reason="{reason}"}}"#),
        1.0,
        SEEN,
    );
}

/// Nothing but reads (and no Event) went to the fake, besides the heal Lease's election.
fn nothing_written(fake: &FakeApi) {
    let writes: Vec<String> = fake
        .writes()
        .into_iter()
        .filter(|w| {
            !w.contains("/leases/k3sdoctor-heal?")
                && !w
                    .starts_with("POST /apis/coordination.k8s.io/v1/namespaces/kube-system/leases?")
        })
        .collect();
    assert!(writes.is_empty(), "{writes:?}");
}

#[test]
fn a_split_on_a_fixed_version_is_never_healed() {
    let fake = split_on("v1.29.6+k3s1", true);
    let (serve, address) = start_serve(
        k3sdoctor(["serve", "--heal", "on", "--heal-after", "1s"]).cluster(&fake, Role::Admin),
    );
    blocked(address, "fixed-version");
    // Past --heal-after and three evaluations.
    std::thread::sleep(Duration::from_secs(12));
    let scrape = metrics(address);
    assert_eq!(
        sample(&scrape, r#"k3sdoctor_heals_total{outcome="moved"}"#),
        Some(0.0)
    );
    assert_eq!(
        sample(&scrape, r#"k3sdoctor_heal_blocked{reason="paused"}"#),
        Some(0.0)
    );
    nothing_written(&fake);
    serve
        .signal_and_wait(libc::SIGTERM)
        .code(0)
        .stderr_has("blocked: fixed-version");
}

#[test]
fn a_target_that_is_not_ready_blocks_with_its_reason() {
    let fake = split_on(AFFECTED, false);
    let (serve, address) = start_serve(
        k3sdoctor(["serve", "--heal", "on", "--heal-after", "1s"]).cluster(&fake, Role::Admin),
    );
    blocked(address, "target-not-ready");
    std::thread::sleep(Duration::from_secs(12));
    nothing_written(&fake);
    assert_eq!(fake.lock_holder("Lease", "k3s").unwrap(), "s1");
    serve
        .signal_and_wait(libc::SIGTERM)
        .code(0)
        .stderr_has("blocked: target-not-ready: the target node s2 is NotReady");
}

#[test]
fn the_pause_annotation_blocks_and_shows_on_the_metric() {
    let fake = split_on(AFFECTED, true);
    fake.put(json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "kube-system", "annotations": {"k3sdoctor.io/heal-paused": "upgrade"}}}));
    let (serve, address) = start_serve(
        k3sdoctor(["serve", "--heal", "on", "--heal-after", "1s"]).cluster(&fake, Role::Admin),
    );
    wait_for_sample(address, "k3sdoctor_heal_paused", 1.0, SEEN);
    blocked(address, "paused");
    std::thread::sleep(Duration::from_secs(12));
    nothing_written(&fake);
    serve.signal_and_wait(libc::SIGTERM).code(0).stderr_has(
        "blocked: paused: Namespace kube-system carries k3sdoctor.io/heal-paused: \"upgrade\"",
    );
}

#[test]
fn a_write_the_role_forbids_is_reported_once_and_never_retried() {
    let fake = split_on(AFFECTED, true);
    // Reads, Events and the heal Lease, but no update on the k3s Leases.
    let events_only = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: events\nrules:\n  - apiGroups: [events.k8s.io]\n    resources: [events]\n    verbs: [create]\n  - apiGroups: [coordination.k8s.io]\n    resources: [leases]\n    verbs: [create]\n  - apiGroups: [coordination.k8s.io]\n    resources: [leases]\n    resourceNames: [k3sdoctor-heal]\n    verbs: [get, patch, update]\n";
    fake.add_rbac_user("hal-token", "hal", &readme_read_only_roles());
    fake.add_rbac_user("hal-token", "hal", events_only);
    // A short cooldown: after it, only the memory of the failed move holds the heal back.
    let hal = || {
        start_serve(
            k3sdoctor([
                "serve",
                "--heal",
                "on",
                "--heal-after",
                "1s",
                "--heal-cooldown",
                "1s",
            ])
            .kubeconfig_for(&fake.url(), "hal-token"),
        )
    };
    let (serve, address) = hal();
    wait_for_sample(
        address,
        r#"k3sdoctor_heals_total{outcome="failed"}"#,
        1.0,
        SEEN,
    );
    blocked(address, "failed-before");
    // More evaluations: never tried again.
    std::thread::sleep(Duration::from_secs(12));
    let scrape = metrics(address);
    assert_eq!(
        sample(&scrape, r#"k3sdoctor_heals_total{outcome="failed"}"#),
        Some(1.0)
    );
    let reviews = fake
        .requests()
        .iter()
        .filter(|r| r.path.contains("selfsubjectaccessreviews") && r.body.contains("\"update\""))
        .count();
    assert_eq!(reviews, 1, "the permission is asked once");
    assert!(
        fake.requests()
            .iter()
            .all(|r| r.method != "PUT" || r.path.ends_with("/k3sdoctor-heal")),
        "nothing was sent"
    );
    assert_eq!(fake.lock_holder("Lease", "k3s").unwrap(), "s1");
    let events = crate::repair_events::events(&fake);
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0]["reason"], "LockMoveFailed");
    assert!(
        events[0]["note"]
            .as_str()
            .unwrap()
            .contains("not allowed to update"),
        "{:#}",
        events[0]
    );
    serve
        .signal_and_wait(libc::SIGTERM)
        .code(0)
        .stderr_has("heal of k3s failed: not allowed to update")
        .stderr_has("bind the heal role to serve's account (`k3sdoctor rbac heal` prints it)");

    // The failed move is recorded on the heal Lease, and a restarted serve does not try it again.
    let lease = fake
        .get("Lease", Some("kube-system"), "k3sdoctor-heal")
        .unwrap();
    let annotations = &lease["metadata"]["annotations"];
    assert_eq!(
        annotations["k3sdoctor.io/heal-failed"], r#"[{"lock":"k3s","from":"s1","to":"s2"}]"#,
        "{lease:#}"
    );
    assert!(
        annotations["k3sdoctor.io/heal-last"].is_string(),
        "{lease:#}"
    );
    let (serve, address) = hal();
    held_back_by(address, "failed-before");
    let scrape = metrics(address);
    assert_eq!(
        sample(&scrape, r#"k3sdoctor_heals_total{outcome="failed"}"#),
        Some(0.0),
        "{scrape}"
    );
    assert_eq!(
        sample(&scrape, r#"k3sdoctor_heal_blocked{reason="cooldown"}"#),
        Some(0.0),
        "{scrape}"
    );
    assert_eq!(crate::repair_events::events(&fake).len(), 1);
    assert_eq!(fake.lock_holder("Lease", "k3s").unwrap(), "s1");
    serve
        .signal_and_wait(libc::SIGTERM)
        .code(0)
        .stderr_has("1 failed move(s)");
}

/// `reason` blocks, and still does after three more evaluations.
fn held_back_by(address: SocketAddr, reason: &str) {
    blocked(address, reason);
    std::thread::sleep(Duration::from_secs(12));
    blocked(address, reason);
}

/// A split, and on the heal Lease what a replica that healed a minute ago and was killed left
/// there (expired): a last heal and a 1h cooldown. `serve --heal on` takes the Lease and is held
/// back by that cooldown; returned with when the recorded heal was.
fn serve_in_a_recorded_cooldown() -> (
    FakeApi,
    crate::support::harness::Streaming,
    SocketAddr,
    jiff::Timestamp,
) {
    let fake = split_on(AFFECTED, true);
    let mut lease = crate::support::objects::lease("k3sdoctor-heal", "killed-replica_1", 3600);
    let a_minute_ago = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(60);
    lease["metadata"]["annotations"] = json!({
        "k3sdoctor.io/heal-last": a_minute_ago.to_string(),
        "k3sdoctor.io/heal-cooldown": "1h",
    });
    fake.put(lease);
    let (serve, address) = start_serve(
        k3sdoctor(["serve", "--heal", "on", "--heal-after", "1s"]).cluster(&fake, Role::Admin),
    );
    held_back_by(address, "cooldown");
    (fake, serve, address, a_minute_ago)
}

#[test]
fn a_heal_recorded_on_the_heal_lease_holds_a_new_serve_in_its_cooldown() {
    let (fake, serve, address, a_minute_ago) = serve_in_a_recorded_cooldown();
    assert_eq!(fake.lock_holder("Lease", "k3s").unwrap(), "s1");
    let (_, report) = get(address, "/report").expect("/report");
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["heal"]["cooldown"], "1h", "{report:#}");
    assert_eq!(
        report["heal"]["lastHeal"],
        a_minute_ago.to_string(),
        "{report:#}"
    );
    nothing_written(&fake);
    serve
        .signal_and_wait(libc::SIGTERM)
        .code(0)
        .stderr_has("blocked: cooldown");
}

#[test]
fn a_denied_election_is_reported_as_denied_not_as_another_replica() {
    let fake = split_on(AFFECTED, true);
    // serve's read-only role and nothing of the heal role.
    fake.add_rbac_user("ro-token", "ro", &readme_read_only_roles());
    let (serve, address) = start_serve(
        k3sdoctor(["serve", "--heal", "dry-run", "--heal-after", "1s"])
            .kubeconfig_for(&fake.url(), "ro-token"),
    );
    blocked(address, "election-denied");
    let scrape = metrics(address);
    assert_eq!(
        sample(&scrape, r#"k3sdoctor_heal_blocked{reason="not-leader"}"#),
        Some(0.0),
        "{scrape}"
    );
    let (_, report) = get(address, "/report").expect("/report");
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    let blocked = report["heal"]["blocked"].as_array().unwrap();
    assert_eq!(blocked.len(), 1, "{report:#}");
    assert_eq!(blocked[0]["reason"], "election-denied", "{report:#}");
    let message = blocked[0]["message"].as_str().unwrap();
    for part in [
        "not allowed to get, create, patch, update leases.coordination.k8s.io \"k3sdoctor-heal\" in kube-system",
        "`k3sdoctor rbac heal`",
    ] {
        assert!(message.contains(part), "{message}");
    }
    assert!(!message.contains("another replica"), "{message}");
    let out = serve.signal_and_wait(libc::SIGTERM);
    out.code(0)
        .stderr_has("heal: the API server refused this replica the lease kube-system/k3sdoctor-heal: not allowed to get, create, patch, update")
        .stderr_has("blocked: election-denied");
    assert!(!out.stderr.contains("Status {"), "{}", out.stderr);
    assert!(!out.stderr.contains("another replica"), "{}", out.stderr);
}

#[test]
fn a_person_running_follow_is_not_paused_but_told() {
    let fake = split_on(AFFECTED, true);
    fake.put(json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "kube-system", "annotations": {"k3sdoctor.io/heal-paused": "upgrade"}}}));
    k3sdoctor(["leases", "follow", "--fix", "--yes", "--no-wait"])
        .cluster(&fake, Role::Admin)
        .run()
        .code(0)
        .stderr_has(
            "serve --heal is paused on this cluster (k3sdoctor.io/heal-paused: \"upgrade\")",
        );
    assert_eq!(fake.lock_holder("Lease", "k3s").unwrap(), "s2");
}

#[test]
fn a_replica_that_does_not_hold_the_heal_lease_never_moves() {
    let fake = split_on(AFFECTED, true);
    // Another replica holds k3sdoctor-heal, renewed just now for an hour.
    let mut held = renewed_now("k3sdoctor-heal", "serve-replica-a_1");
    held["spec"]["leaseDurationSeconds"] = json!(3600);
    fake.put(held);
    let (serve, address) = start_serve(
        k3sdoctor(["serve", "--heal", "on", "--heal-after", "1s"]).cluster(&fake, Role::Admin),
    );
    blocked(address, "not-leader");
    std::thread::sleep(Duration::from_secs(12));
    let scrape = metrics(address);
    assert_eq!(
        sample(&scrape, r#"k3sdoctor_heals_total{outcome="moved"}"#),
        Some(0.0)
    );
    assert_eq!(fake.lock_holder("Lease", "k3s").unwrap(), "s1");
    assert_eq!(
        fake.lock_holder("Lease", "k3sdoctor-heal").unwrap(),
        "serve-replica-a_1"
    );
    serve
        .signal_and_wait(libc::SIGTERM)
        .code(0)
        .stderr_has("blocked: not-leader");
}

#[test]
fn a_stopping_replica_releases_the_heal_lease_for_the_next_one() {
    let fake = split_on(AFFECTED, true);
    let (serve, _address) =
        start_serve(k3sdoctor(["serve", "--heal", "dry-run"]).cluster(&fake, Role::Admin));
    let holder = || {
        fake.lock_holder("Lease", "k3sdoctor-heal")
            .unwrap_or_default()
    };
    assert!(
        crate::support::wait::wait_for(SEEN, || !holder().is_empty()),
        "serve never took the heal Lease"
    );
    serve.signal_and_wait(libc::SIGTERM).code(0);
    assert_eq!(
        holder(),
        "",
        "the heal Lease is still held after serve stopped"
    );
}

#[test]
fn the_heal_role_without_update_on_its_lease_cannot_record_a_heal_and_does_not_start_one() {
    let fake = split_on(AFFECTED, true);
    // The docs' heal role, less the update that writes the guardrails onto the heal Lease.
    let role = readme_namespaced_role("k3sdoctor-heal");
    let without_update = role.replace(
        "    resourceNames: [k3sdoctor-heal]\n    verbs: [get, update, patch]",
        "    resourceNames: [k3sdoctor-heal]\n    verbs: [get, patch]",
    );
    assert_ne!(without_update, role);
    fake.add_rbac_user("hal-token", "hal", &readme_read_only_roles());
    fake.add_rbac_user("hal-token", "hal", &without_update);
    let (serve, address) = start_serve(
        k3sdoctor(["serve", "--heal", "on", "--heal-after", "1s"])
            .kubeconfig_for(&fake.url(), "hal-token"),
    );
    held_back_by(address, "election-denied");
    let scrape = metrics(address);
    assert_eq!(
        sample(&scrape, r#"k3sdoctor_heals_total{outcome="failed"}"#),
        Some(0.0),
        "{scrape}"
    );
    assert_eq!(fake.lock_holder("Lease", "k3s").unwrap(), "s1");
    assert!(crate::repair_events::events(&fake).is_empty());
    serve.signal_and_wait(libc::SIGTERM).code(0).stderr_has(
        "blocked: election-denied: not allowed to update leases.coordination.k8s.io \"k3sdoctor-heal\" in kube-system",
    );
}

/// docs/heal.md's way to make the heal forget: removing the annotations from the heal Lease takes
/// effect while this replica holds it, not only after a failover.
#[test]
fn removing_the_guardrail_annotations_is_followed_by_the_replica_that_holds_the_lease() {
    let (fake, serve, _, _) = serve_in_a_recorded_cooldown();
    assert_eq!(fake.lock_holder("Lease", "k3s").unwrap(), "s1");

    // kubectl -n kube-system annotate lease k3sdoctor-heal k3sdoctor.io/heal-last- …
    let mut held = fake
        .get("Lease", Some("kube-system"), "k3sdoctor-heal")
        .expect("serve holds the heal Lease");
    let annotations = held["metadata"]["annotations"].as_object_mut().unwrap();
    annotations.remove("k3sdoctor.io/heal-last");
    annotations.remove("k3sdoctor.io/heal-failed");
    fake.put(held);

    assert!(
        crate::support::wait::wait_for(SEEN, || {
            fake.lock_holder("Lease", "k3s").as_deref() == Some("s2")
        }),
        "the heal stayed in the cooldown the annotations no longer record"
    );
    serve
        .signal_and_wait(libc::SIGTERM)
        .stderr_has("were edited: last heal none, cooldown 1h");
}
