//! The control-plane analysers' cost target, on demand: `check` on a 5-server cluster with the control-plane
//! analysers makes at most 4 more requests than before them, and takes at most 1.2× the wall
//! time. Two builds side by side (`K3SDOCTOR_BENCH_BIN=before=PATH,after=PATH`) on the same
//! objects: the requests counted exactly by the in-repo fake API server, the wall time measured
//! on the real kube-apiserver + etcd bed, alternating, medians. It measures; it asserts nothing
//! about time (docs/performance.md has the figures and the command).
//!
//! The cluster: 5 servers whose addresses (127.0.0.11–15) answer TLS on 6443 as k3sdoctor
//! would see them from the servers' network, both locks, 100 ETCDSnapshotFiles and their
//! ConfigMap, cert-monitor Events, 20 Secrets in kube-system (node passwords among them), and
//! 5 HelmCharts with their install Jobs.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use crate::snapshot_bench::binaries;
use crate::support::envtest::{EnvTest, User};
use crate::support::fake_api::{FakeApi, Role};
use crate::support::objects::{numbered_snapshot_cr, renewed_now, server_at, snapshot_configmap};
use crate::support::test_ca::TestCa;
use crate::support::tls_listener::TlsListener;

const SERVERS: [&str; 5] = ["s1", "s2", "s3", "s4", "s5"];
const SNAPSHOTS: usize = 100;
const ROUNDS: usize = 31;

fn objects() -> Vec<(&'static str, Value)> {
    let mut objects: Vec<(&str, Value)> = Vec::new();
    let now = Timestamp::now().as_second();
    for (i, name) in SERVERS.iter().enumerate() {
        objects.push((
            "/api/v1/nodes",
            server_at(name, "v1.33.6+k3s1", &format!("127.0.0.{}", 11 + i)),
        ));
        objects.push((
            "/api/v1/namespaces/default/events",
            json!({"apiVersion": "v1", "kind": "Event",
                   "metadata": {"name": format!("{name}.certok"), "namespace": "default"},
                   "involvedObject": {"kind": "Node", "name": name, "uid": name},
                   "reason": "CertificateExpirationOK", "type": "Normal",
                   "message": "Node and Certificate Authority certificates managed by k3s are OK",
                   "source": {"component": "k3s-cert-monitor", "host": name},
                   "firstTimestamp": Timestamp::now().round(jiff::Unit::Second).unwrap().to_string(),
                   "lastTimestamp": Timestamp::now().round(jiff::Unit::Second).unwrap().to_string(),
                   "count": 1}),
        ));
        objects.push((
            "/api/v1/namespaces/kube-system/secrets",
            json!({"apiVersion": "v1", "kind": "Secret",
                   "metadata": {"name": format!("{name}.node-password.k3s"), "namespace": "kube-system"},
                   "type": "k3s.cattle.io/node-password", "data": {"hash": "aGFzaA=="}}),
        ));
    }
    for i in 0..15 {
        objects.push((
            "/api/v1/namespaces/kube-system/secrets",
            json!({"apiVersion": "v1", "kind": "Secret",
                   "metadata": {"name": format!("sh.helm.release.v1.chart.v{i}"), "namespace": "kube-system",
                                "labels": {"owner": "helm", "status": "deployed"}},
                   "data": {"release": "cmVsZWFzZQ=="}}),
        ));
    }
    objects.push((
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
        renewed_now("k3s", "s1"),
    ));
    objects.push((
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
        renewed_now("k3s-etcd", "s1"),
    ));
    let mut entries = Vec::new();
    for i in 0..SNAPSHOTS {
        let cr = numbered_snapshot_cr(i, &SERVERS, now - 600);
        entries.push((
            cr["spec"]["snapshotName"].as_str().unwrap().to_string(),
            "{}".to_string(),
        ));
        objects.push(("/apis/k3s.cattle.io/v1/etcdsnapshotfiles", cr));
    }
    objects.push((
        "/api/v1/namespaces/kube-system/configmaps",
        snapshot_configmap("k3s", &entries),
    ));
    for chart in [
        "traefik",
        "traefik-crd",
        "coredns",
        "metrics-server",
        "local-storage",
    ] {
        objects.push((
            "/apis/helm.cattle.io/v1/namespaces/kube-system/helmcharts",
            json!({"apiVersion": "helm.cattle.io/v1", "kind": "HelmChart",
                   "metadata": {"name": chart, "namespace": "kube-system"},
                   "spec": {"chart": chart}}),
        ));
        objects.push((
            "/apis/batch/v1/namespaces/kube-system/jobs",
            json!({"apiVersion": "batch/v1", "kind": "Job",
                   "metadata": {"name": format!("helm-install-{chart}"), "namespace": "kube-system",
                                "labels": {"helmcharts.helm.cattle.io/chart": chart}},
                   "spec": {"backoffLimit": 1000, "template": {"spec": {"restartPolicy": "OnFailure",
                            "containers": [{"name": "helm", "image": "rancher/klipper-helm"}]}}}}),
        ));
    }
    objects
}

fn check(bin: &Path, kubeconfig: &Path) -> Duration {
    let started = Instant::now();
    let status = Command::new(bin)
        .args([
            "check",
            "-o",
            "json",
            "--fail-on",
            "never",
            "--distro",
            "k3s",
            "--kubeconfig",
        ])
        .arg(kubeconfig)
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("k3sdoctor runs");
    let took = started.elapsed();
    assert_eq!(status.code(), Some(0), "{}", bin.display());
    took
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

#[test]
#[ignore = "a benchmark: run on demand (docs/performance.md)"]
fn benchmark_control_plane_reads() {
    let builds = binaries();
    // The fake serves plain HTTP: the servers' certificates chain to the CA it publishes.
    let ca = TestCa::generate();
    let _listeners: Vec<TlsListener> = (0..SERVERS.len())
        .map(|i| {
            let ip = format!("127.0.0.{}", 11 + i);
            TlsListener::start(
                &ip,
                6443,
                &[&ip],
                Timestamp::now() + SignedDuration::from_hours(24 * 365),
                &ca,
            )
            .unwrap_or_else(|| panic!("{ip}:6443 is taken"))
        })
        .collect();

    // Requests, exactly, on the fake API server.
    let fake = FakeApi::start();
    for (_, object) in objects() {
        fake.put(object);
    }
    fake.put(ca.root_ca_configmap());
    let dir = tempfile::tempdir().unwrap();
    let fake_config = fake.write_kubeconfig(dir.path(), Role::Admin);
    for (label, bin) in &builds {
        fake.clear_requests();
        check(bin, &fake_config);
        let requests = fake.requests();
        println!(
            "{label}: {} requests to the fake API server",
            requests.len()
        );
        for r in &requests {
            println!("  {} {}", r.method, r.path);
        }
    }

    // Wall time on the real API server.
    let Some(env) = EnvTest::start("control_plane_benchmark") else {
        return;
    };
    crate::packaged_charts::install_crd(&env);
    let admin = env.admin();
    for (collection, object) in objects() {
        admin.put(collection, &object);
    }
    let kubeconfig = env.kubeconfig(User::Admin);
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); builds.len()];
    for (_, bin) in &builds {
        check(bin, &kubeconfig);
    }
    for _ in 0..ROUNDS {
        for (i, (_, bin)) in builds.iter().enumerate() {
            times[i].push(check(bin, &kubeconfig).as_secs_f64() * 1000.0);
        }
    }
    println!("| build | `check` wall ms (median of {ROUNDS}) | min | max |");
    println!("|---|---:|---:|---:|");
    for (i, (label, _)) in builds.iter().enumerate() {
        let min = times[i].iter().copied().fold(f64::MAX, f64::min);
        let max = times[i].iter().copied().fold(0.0, f64::max);
        println!(
            "| {label} | {:.1} | {min:.1} | {max:.1} |",
            median(times[i].clone())
        );
    }
    // Keeps the bed (and the servers' listeners) up for profiling by hand while FILE exists.
    if let Ok(hold) = std::env::var("K3SDOCTOR_BENCH_HOLD") {
        println!(
            "holding while {hold} exists; kubeconfig {}",
            kubeconfig.display()
        );
        while Path::new(&hold).exists() {
            std::thread::sleep(Duration::from_secs(1));
        }
    }
}
