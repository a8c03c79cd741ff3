//! Hostile input on the real API server: what the cluster hands k3sdoctor — a hostile Lease holder
//! (item 15), a node literally named `s3` (item 16), a kubelet clock running fast in a dump
//! (item 14), a snapshot landing while a backfill runs (item 4). The objects are written by
//! the admin client, as a broken or hostile component would write them; no simulator runs,
//! so nothing but the test changes them.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::run_as;
use crate::support::envtest::{EnvTest, User};
use crate::support::harness::k3sdoctor;
use crate::support::k3s_sim::snapshot_entry::{S3ConfigShape, data_key, entry_value};
use crate::support::objects::{
    NOW, agent, extra_metadata, lease, server, snapshot_configmap, snapshot_cr,
};
use crate::support::wait::wait_for;

const V: &str = "v1.29.4+k3s1";
const NODES: &str = "/api/v1/nodes";
const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";
const CONFIGMAPS: &str = "/api/v1/namespaces/kube-system/configmaps";
const SNAPSHOTS: &str = "/apis/k3s.cattle.io/v1/etcdsnapshotfiles";

/// `lease()` renewed at the real time with an hour's duration: fresh for the whole test.
fn fresh_lease(name: &str, holder: &str) -> Value {
    let mut lease = lease(name, holder, 0);
    lease["spec"]["renewTime"] = json!(
        jiff::Timestamp::now()
            .strftime("%Y-%m-%dT%H:%M:%S.%6fZ")
            .to_string()
    );
    lease["spec"]["leaseDurationSeconds"] = json!(3600);
    lease
}

/// Item 15: a holder with `ESC[31m` and a newline, stored by the real API server, is printed
/// escaped by every human rendering and exactly in JSON.
#[test]
fn real_a_hostile_lease_holder_is_printed_escaped() {
    let Some(env) = EnvTest::start("real_a_hostile_lease_holder_is_printed_escaped") else {
        return;
    };
    let admin = env.admin();
    let hostile = "s1\x1b[31m\nevil";
    admin.create(NODES, &server("s1", V));
    admin.create(NODES, &server("s2", V));
    admin.create(LEASES, &lease("k3s", hostile, 1));
    admin.create(LEASES, &lease("k3s-etcd", "s2", 1));
    for args in [
        vec!["leases", "--now", NOW],
        vec!["check", "--now", NOW],
        vec!["leases", "follow", "--now", NOW],
    ] {
        let out = run_as(&env, User::Admin, &args);
        let both = format!("{}{}", out.stdout, out.stderr);
        assert!(both.contains("s1\\e[31m\\nevil"), "{args:?}:\n{both}");
        assert!(!both.contains('\x1b'), "{args:?} wrote ESC:\n{both:?}");
        assert!(
            !both.contains("\nevil"),
            "{args:?} wrote the newline:\n{both:?}"
        );
    }
    let out = run_as(&env, User::Admin, &["leases", "-o", "json", "--now", NOW]);
    let report: Value = out.json();
    assert_eq!(report["locks"][0]["holder"], hostile);
}

/// Item 16: a node literally named `s3`, its local CRs named `s3-…` as k3s's `GenerateName`
/// names them, with their entries: no digest warning, so `--fail-on warning` (the shipped
/// CronJob) passes; a `local-…` name for the same node is the mismatch.
#[test]
fn real_a_node_named_s3_gets_no_false_digest_warning() {
    let Some(env) = EnvTest::start("real_a_node_named_s3_gets_no_false_digest_warning") else {
        return;
    };
    let admin = env.admin();
    for name in ["s1", "s2", "s3"] {
        admin.create(NODES, &server(name, V));
    }
    admin.create(LEASES, &lease("k3s", "s1", 1));
    admin.create(LEASES, &lease("k3s-etcd", "s1", 1));
    admin.create(CONFIGMAPS, &extra_metadata("k3s"));
    let t0 = 1_717_142_400;
    let mut entries = Vec::new();
    for (node, ts) in [("s3", t0), ("s3", t0 + 600), ("s1", t0)] {
        let mut cr = snapshot_cr(node, ts, true);
        cr["metadata"]["finalizers"] =
            json!(["wrangler.cattle.io/managed-etcd-snapshots-controller"]);
        entries.push((data_key(&cr), entry_value(&cr, S3ConfigShape::Legacy)));
        let stored = admin.create(SNAPSHOTS, &cr);
        if node == "s3" {
            let name = stored["metadata"]["name"].as_str().unwrap().to_string();
            assert!(name.starts_with("s3-on-demand-s3-"), "{name}");
        }
    }
    admin.create(CONFIGMAPS, &snapshot_configmap("k3s", &entries));
    let out = run_as(
        &env,
        User::Admin,
        &["snapshots", "list", "--fail-on", "warning", "--now", NOW],
    );
    out.code(0);
    assert!(!out.stdout.contains("digest"), "{}", out.stdout);
    assert!(!out.stderr.contains("digest"), "{}", out.stderr);

    // The name k3s does not give such a CR is still caught.
    let mut wrong = snapshot_cr("s3", t0 + 1200, true);
    let name = wrong["metadata"]["name"].as_str().unwrap().to_string();
    wrong["metadata"]["name"] = json!(name.replacen("s3-", "local-", 1));
    admin.create(SNAPSHOTS, &wrong);
    run_as(
        &env,
        User::Admin,
        &["snapshots", "list", "--fail-on", "warning", "--now", NOW],
    )
    .code(1)
    .stderr_has("snapshot-name-digest-mismatch")
    .stderr_has("should start with s3-");
}

/// Item 14: a dump of the real cluster (as `kubectl get -o json` prints it: lists, no
/// managedFields) with one agent's heartbeat six minutes ahead judges the locks against the
/// server-written times, so they stay fresh.
#[test]
fn real_a_dump_with_a_fast_kubelet_clock_keeps_fresh_locks_fresh() {
    let Some(env) = EnvTest::start("real_a_dump_with_a_fast_kubelet_clock_keeps_fresh_locks_fresh")
    else {
        return;
    };
    let admin = env.admin();
    admin.create(NODES, &server("s1", V));
    admin.create(NODES, &server("s2", V));
    admin.create(NODES, &agent("w1", V));
    let mut w1 = admin.get(&format!("{NODES}/w1")).expect("Node w1");
    let ahead = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(360);
    w1["status"]["conditions"][0]["lastHeartbeatTime"] =
        json!(ahead.strftime("%Y-%m-%dT%H:%M:%SZ").to_string());
    admin
        .replace(&format!("{NODES}/w1/status"), &w1)
        .expect("update the heartbeat");
    let mut k3s = fresh_lease("k3s", "s1");
    k3s["spec"]["leaseDurationSeconds"] = json!(45);
    admin.create(LEASES, &k3s);
    let mut etcd = fresh_lease("k3s-etcd", "s1");
    etcd["spec"]["leaseDurationSeconds"] = json!(45);
    admin.create(LEASES, &etcd);

    let dir = tempfile::tempdir().unwrap();
    for (file, path) in [
        ("nodes.json", NODES.to_string()),
        ("leases.json", LEASES.to_string()),
        ("configmaps.json", CONFIGMAPS.to_string()),
    ] {
        let mut list = admin.get(&path).expect("list");
        // kubectl get hides managedFields unless asked.
        for item in list["items"].as_array_mut().unwrap() {
            item["metadata"]
                .as_object_mut()
                .unwrap()
                .remove("managedFields");
        }
        std::fs::write(dir.path().join(file), list.to_string()).unwrap();
    }
    let stored = admin.get(&format!("{NODES}/w1")).unwrap();
    assert_eq!(
        stored["status"]["conditions"][0]["lastHeartbeatTime"],
        json!(ahead.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()),
        "the API server kept the heartbeat"
    );
    let out = k3sdoctor(["--from-file", &dir.path().display().to_string(), "leases"]).run();
    out.code(0)
        .stderr_has("newest server-written timestamp in the dump")
        .stderr_has("Node w1's heartbeat is ")
        .stderr_has("was not used as now");
    assert!(!out.stderr.contains("lease-expired"), "{}", out.stderr);
}

/// Item 4: a snapshot lands while `snapshots backfill --fix` waits for its confirmation, after
/// the plan and before the write. The cluster read again after the verified write has it
/// without an entry, seconds old: pending, and the backfill exits 0.
#[test]
fn real_a_snapshot_landing_during_a_backfill_is_pending_and_the_backfill_exits_0() {
    let Some(env) = EnvTest::start(
        "real_a_snapshot_landing_during_a_backfill_is_pending_and_the_backfill_exits_0",
    ) else {
        return;
    };
    let admin = env.admin();
    admin.create(NODES, &server("s1", V));
    admin.create(NODES, &server("s2", V));
    admin.create(LEASES, &fresh_lease("k3s", "s1"));
    admin.create(LEASES, &fresh_lease("k3s-etcd", "s1"));
    admin.create(CONFIGMAPS, &extra_metadata("k3s"));
    admin.create(CONFIGMAPS, &snapshot_configmap("k3s", &[]));
    // Processed by the controller (its finalizer is there) but without an entry: what a
    // backfill is for. A CR's creation time is the API server's, so it is missing (not
    // pending) only once it is a minute old.
    let now = jiff::Timestamp::now().as_second();
    let mut old = snapshot_cr("s1", now - 3600, true);
    old["metadata"]["finalizers"] = json!(["wrangler.cattle.io/managed-etcd-snapshots-controller"]);
    admin.create(SNAPSHOTS, &old);
    let young = run_as(&env, User::Admin, &["snapshots", "diff"]);
    young.code(0).stdout_has("pending ");
    assert!(
        wait_for(Duration::from_secs(150), || {
            let out = run_as(&env, User::Admin, &["snapshots", "diff"]);
            let missing = out.code == 1 && out.stdout.contains("missing ");
            if !missing {
                std::thread::sleep(Duration::from_secs(2));
            }
            missing
        }),
        "the CR never became missing"
    );

    let run = k3sdoctor(Vec::<String>::new());
    let command = format!(
        "{} snapshots backfill --fix --kubeconfig {}",
        env!("CARGO_BIN_EXE_k3sdoctor"),
        env.kubeconfig(User::Admin).display()
    );
    let mut child = std::process::Command::new("script")
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .env_clear()
        .env("HOME", run.home())
        // The backup lands in the working directory: keep it out of the checkout.
        .current_dir(run.home())
        .env("TERM", "dumb")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("util-linux script");
    let screen = Arc::new(Mutex::new(String::new()));
    let reader = {
        let screen = screen.clone();
        let mut stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                screen
                    .lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        })
    };
    let asked = wait_for(Duration::from_secs(60), || {
        // The prompt itself: the question before it wraps between words at the terminal width.
        screen.lock().unwrap().contains("[y/N]")
    });
    let mut stdin = child.stdin.take().unwrap();
    if asked {
        // The snapshot lands between the plan and the write.
        admin.create(SNAPSHOTS, &snapshot_cr("s1", now, true));
        stdin.write_all(b"y\n").unwrap();
    }
    let status = child.wait().unwrap();
    drop(stdin);
    reader.join().unwrap();
    let screen = screen.lock().unwrap().clone();
    assert!(asked, "no confirmation prompt:\n{screen}");
    assert_eq!(status.code(), Some(0), "{screen}");
    assert!(screen.contains("pending "), "{screen}");
    assert!(
        !screen.contains("snapshot-missing-from-configmap"),
        "{screen}"
    );
    let data = admin.configmap_data("k3s-etcd-snapshots");
    assert!(
        data.contains_key(&data_key(&old)),
        "the backfill wrote {data:?}"
    );
}
