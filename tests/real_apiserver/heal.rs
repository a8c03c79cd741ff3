//! `serve --heal` against a real kube-apiserver and simulated k3s servers on an affected
//! version: dry-run records one WouldMoveLock Event and moves nothing; the pause annotation
//! holds it back; `on` heals the split after `--heal-after` (both locks on one server, the
//! ConfigMap healing); a split back inside the cooldown is reported, not healed.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::another_server;
use crate::support::envtest::servers::SimCluster;
use crate::support::envtest::{EnvTest, User};
use crate::support::harness::k3sdoctor;
use crate::support::readme::readme_namespaced_role;
use crate::support::scrape::{get, metrics, sample, start_serve, wait_for_sample};

pub(crate) const SEEN: Duration = Duration::from_secs(60);
/// A move, its verification (up to the lease's 15 s + 10 s) and the controllers' check.
pub(crate) const HEALED: Duration = Duration::from_secs(180);

pub(crate) fn events(env: &EnvTest, reason: &str) -> Vec<Value> {
    let list = env
        .admin()
        .get("/apis/events.k8s.io/v1/namespaces/kube-system/events")
        .expect("events");
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["reason"] == reason)
        .cloned()
        .collect()
}

fn pause(env: &EnvTest, reason: Option<&str>) {
    env.admin().merge_patch(
        "/api/v1/namespaces/kube-system",
        &json!({"metadata": {"annotations": {"k3sdoctor.io/heal-paused": reason}}}),
    );
}

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn real_heal_dry_run_pause_on_and_cooldown() {
    let Some(env) = EnvTest::start("real_heal_dry_run_pause_on_and_cooldown") else {
        return;
    };
    let cluster = SimCluster::start(&env, "k3s", "v1.29.4+k3s1", 3, &[]);
    let core = cluster.core_lock();
    let etcd = cluster.etcd_lock();
    // SimCluster creates Rancher's extra-metadata ConfigMap: snapshots get ConfigMap entries,
    // so the heal's check of the -etcd controllers has something to see.
    let target = another_server(&cluster, &core);
    cluster.split_etcd_onto(target);
    let old = cluster.holder(&core);
    let split = r#"k3sdoctor_lease_split{lock="k3s",affected="true"}"#;

    // dry-run: one WouldMoveLock per episode, nothing moved.
    let (serve, address) = start_serve(
        k3sdoctor(["serve", "--heal", "dry-run", "--heal-after", "5s"])
            .kubeconfig(&env.kubeconfig(User::Admin)),
    );
    wait_for_sample(
        address,
        r#"k3sdoctor_heals_total{outcome="would_move"}"#,
        1.0,
        SEEN,
    );
    // Three more evaluations (5 s apart) of the same split record nothing more.
    std::thread::sleep(Duration::from_secs(16));
    let scrape = metrics(address);
    assert_eq!(
        sample(&scrape, r#"k3sdoctor_heals_total{outcome="would_move"}"#),
        Some(1.0),
        "{scrape}"
    );
    assert_eq!(
        sample(&scrape, r#"k3sdoctor_heals_total{outcome="moved"}"#),
        Some(0.0)
    );
    let would = events(&env, "WouldMoveLock");
    assert_eq!(would.len(), 1, "{would:#?}");
    assert_eq!(would[0]["type"], "Warning");
    assert!(
        would[0]["note"].as_str().unwrap().starts_with(&format!(
            "would move lock kube-system/{core} from {old} to {target}"
        )),
        "{:#}",
        would[0]
    );
    assert_eq!(cluster.holder(&core), old);
    assert_eq!(cluster.holder(&etcd), target);
    serve.signal_and_wait(libc::SIGTERM).code(0);

    // Paused: the gate is named and nothing moves, however long the split lasts.
    pause(&env, Some("maintenance window"));
    let (serve, address) = start_serve(
        k3sdoctor([
            "serve",
            "--heal",
            "on",
            "--heal-after",
            "5s",
            "--heal-cooldown",
            "30m",
        ])
        .kubeconfig(&env.kubeconfig(User::Admin)),
    );
    wait_for_sample(address, "k3sdoctor_heal_paused", 1.0, SEEN);
    held_back(address, "paused");
    let scrape = metrics(address);
    assert_eq!(
        sample(&scrape, r#"k3sdoctor_heals_total{outcome="moved"}"#),
        Some(0.0),
        "{scrape}"
    );
    assert_eq!(cluster.holder(&core), old);
    let (_, report) = get(address, "/report").expect("/report");
    let report: Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["heal"]["state"], "blocked", "{report:#}");
    assert_eq!(
        report["heal"]["blocked"][0]["reason"], "paused",
        "{report:#}"
    );

    // Unpaused: healed, verified, the controllers seen working.
    let unpaused = Instant::now();
    pause(&env, None);
    wait_for_sample(
        address,
        r#"k3sdoctor_heals_total{outcome="moved"}"#,
        1.0,
        HEALED,
    );
    eprintln!(
        "split -> healed: {} ms after the pause was lifted (--heal-after 5s, split older than that)",
        unpaused.elapsed().as_millis()
    );
    assert_eq!(cluster.holders(&core), vec![target.to_string()]);
    assert_eq!(cluster.holders(&etcd), vec![target.to_string()]);
    let scrape = metrics(address);
    assert_eq!(sample(&scrape, "k3sdoctor_heal_paused"), Some(0.0));
    assert_eq!(
        sample(&scrape, r#"k3sdoctor_heals_total{outcome="failed"}"#),
        Some(0.0)
    );
    assert!(sample(&scrape, "k3sdoctor_heal_last_timestamp_seconds").unwrap() > 0.0);
    let moved = events(&env, "LockMoved");
    assert_eq!(moved.len(), 1, "{moved:#?}");
    let note = moved[0]["note"].as_str().unwrap();
    assert!(note.contains("the -etcd controllers work again"), "{note}");
    assert!(note.ends_with("asked by serve --heal."), "{note}");
    wait_for_sample(address, split, 0.0, SEEN);
    if let Some(rss) = rss_kib(serve.id()) {
        eprintln!("serve --heal on: RSS {} KiB after a heal", rss);
    }

    // Back within the cooldown: reported, not healed.
    let again = another_server(&cluster, &core);
    cluster.split_etcd_onto(again);
    wait_for_sample(
        address,
        r#"k3sdoctor_heal_blocked{reason="cooldown"}"#,
        1.0,
        SEEN,
    );
    std::thread::sleep(Duration::from_secs(10));
    assert_eq!(cluster.holder(&etcd), again);
    assert_eq!(cluster.holder(&core), target);
    let scrape = metrics(address);
    assert_eq!(
        sample(&scrape, r#"k3sdoctor_heals_total{outcome="moved"}"#),
        Some(1.0)
    );
    let out = serve.signal_and_wait(libc::SIGTERM);
    out.code(0);
    out.stderr_has("blocked: cooldown");
}

/// Waits until `series` is 1 on `address`, then lets three more evaluations pass.
pub(crate) fn held_back(address: std::net::SocketAddr, reason: &str) {
    wait_for_sample(
        address,
        &format!(r#"k3sdoctor_heal_blocked{{reason="{reason}"}}"#),
        1.0,
        SEEN,
    );
    std::thread::sleep(Duration::from_secs(16));
}

#[test]
fn real_heal_forbidden_write_and_not_ready_target_are_reported_never_moved() {
    let Some(env) =
        EnvTest::start("real_heal_forbidden_write_and_not_ready_target_are_reported_never_moved")
    else {
        return;
    };
    // No heartbeat during the test: a Node set NotReady stays so.
    let cluster = SimCluster::start(&env, "k3s", "v1.29.4+k3s1", 3, &["--heartbeat", "1h"]);
    let admin = env.admin();
    let core = cluster.core_lock();
    let etcd = cluster.etcd_lock();
    let target = another_server(&cluster, &core);
    cluster.split_etcd_onto(target);
    let old = cluster.holder(&core);

    // The heal Role without update on the locks: the write is refused, reported once (log,
    // metric, Event), and never tried again.
    crate::common::grant_read_only(&env, "repair");
    let without_update = readme_namespaced_role("k3sdoctor-heal").replace(
        "    resourceNames: [k3s, k3s-etcd, rke2, rke2-etcd]\n    verbs: [get, update]",
        "    resourceNames: [k3s, k3s-etcd, rke2, rke2-etcd]\n    verbs: [get]",
    );
    assert!(!without_update.contains("verbs: [get, update]\n  - apiGroups: [\"\"]"));
    admin.apply_yaml(&without_update);
    admin.bind_in("kube-system", "k3sdoctor-heal", "repair");
    // A short cooldown: after it, only the memory of the failed move holds the heal back.
    let repair = || {
        start_serve(
            k3sdoctor([
                "serve",
                "--heal",
                "on",
                "--heal-after",
                "5s",
                "--heal-cooldown",
                "5s",
            ])
            .kubeconfig(&env.kubeconfig(User::Repair)),
        )
    };
    let (serve, address) = repair();
    wait_for_sample(
        address,
        r#"k3sdoctor_heals_total{outcome="failed"}"#,
        1.0,
        SEEN,
    );
    held_back(address, "failed-before");
    let scrape = metrics(address);
    assert_eq!(
        sample(&scrape, r#"k3sdoctor_heals_total{outcome="failed"}"#),
        Some(1.0),
        "{scrape}"
    );
    assert_eq!(cluster.holder(&core), old);
    assert_eq!(cluster.holder(&etcd), target);
    let failed = events(&env, "LockMoveFailed");
    assert_eq!(failed.len(), 1, "{failed:#?}");
    assert!(
        failed[0]["note"]
            .as_str()
            .unwrap()
            .contains("not allowed to update"),
        "{:#}",
        failed[0]
    );
    let out = serve.signal_and_wait(libc::SIGKILL);
    assert_eq!(
        out.stderr.matches("heal of k3s failed").count(),
        1,
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("`k3sdoctor rbac heal`"),
        "the 403 names the heal role: {}",
        out.stderr
    );

    // Killed and started again: the failed move, recorded on the heal Lease, is not tried
    // again, long after the cooldown.
    let (serve, address) = repair();
    held_back(address, "failed-before");
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
    assert_eq!(events(&env, "LockMoveFailed").len(), 1);
    assert_eq!(cluster.holder(&core), old);
    serve.signal_and_wait(libc::SIGTERM).code(0);

    // The target's Node NotReady: held back with that reason, nothing moved.
    let node_path = format!("/api/v1/nodes/{}", cluster.server(target).node);
    let mut node = admin.get(&node_path).expect("the target's Node");
    for condition in node["status"]["conditions"].as_array_mut().unwrap() {
        if condition["type"] == "Ready" {
            condition["status"] = json!("False");
            condition["reason"] = json!("KubeletNotReady");
        }
    }
    admin
        .replace(&format!("{node_path}/status"), &node)
        .expect("status replaced");
    let (serve, address) = start_serve(
        k3sdoctor(["serve", "--heal", "on", "--heal-after", "5s"])
            .kubeconfig(&env.kubeconfig(User::Admin)),
    );
    held_back(address, "target-not-ready");
    assert_eq!(
        sample(
            &metrics(address),
            r#"k3sdoctor_heals_total{outcome="moved"}"#
        ),
        Some(0.0)
    );
    assert_eq!(cluster.holder(&core), old);
    serve
        .signal_and_wait(libc::SIGTERM)
        .code(0)
        .stderr_has("blocked: target-not-ready");
}

#[test]
fn real_heal_leaves_a_split_on_a_fixed_version_alone() {
    let Some(env) = EnvTest::start("real_heal_leaves_a_split_on_a_fixed_version_alone") else {
        return;
    };
    let cluster = SimCluster::start(&env, "k3s", "v1.29.6+k3s1", 3, &[]);
    let core = cluster.core_lock();
    let target = another_server(&cluster, &core);
    cluster.split_etcd_onto(target);
    let old = cluster.holder(&core);
    let (serve, address) = start_serve(
        k3sdoctor(["serve", "--heal", "on", "--heal-after", "5s"])
            .kubeconfig(&env.kubeconfig(User::Admin)),
    );
    wait_for_sample(
        address,
        r#"k3sdoctor_lease_split{lock="k3s",affected="false"}"#,
        1.0,
        SEEN,
    );
    held_back(address, "fixed-version");
    let scrape = metrics(address);
    assert_eq!(
        sample(&scrape, r#"k3sdoctor_heals_total{outcome="moved"}"#),
        Some(0.0)
    );
    assert_eq!(
        sample(
            &scrape,
            r#"k3sdoctor_findings{code="lease-split",severity="info"}"#
        ),
        Some(1.0),
        "{scrape}"
    );
    assert_eq!(cluster.holder(&core), old);
    assert!(events(&env, "LockMoved").is_empty());
    serve.signal_and_wait(libc::SIGTERM).code(0);
}
