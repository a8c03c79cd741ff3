//! Every ETCDSnapshotFile missing, measured the way a user meets it (issue 44's recipe), on
//! demand (docs/performance.md, "Every snapshot missing"):
//!
//! ```sh
//! cargo build --release --locked
//! K3SDOCTOR_ENVTEST=../shared/envtest K3SDOCTOR_BENCH_BIN=$PWD/target/release/k3sdoctor \
//!   cargo test --locked --test real_apiserver copied_snapshot_files::benchmark_all_missing -- --ignored --nocapture
//! ```
//!
//! Three simulated servers on v1.30.5+k3s1 (not affected by k3s-io/k3s#10046) with Rancher's
//! extra-metadata ConfigMap write snapshots for 20 s and stop, so the controller is idle. One
//! ETCDSnapshotFile k3s wrote is then copied N times as `kubectl create -f` would create it: the
//! fields the apiserver sets are dropped, each copy gets its own snapshot name, CR name and
//! location, and keeps the labels, annotations, status and `spec.metadata` k3s wrote. No copy
//! has an entry, so every one is `missing`. k3sdoctor reads as the README's read-only user, with
//! no `--distro` (it finds k3s from the Nodes as it would on a real cluster); `--now` is fixed
//! after the seeding only so that the builds' reports can be compared byte for byte.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::viewer_with_the_read_only_role;
use crate::peak_launcher::PeakLauncher;
use crate::snapshot_bench::{Bed, BenchTable, FILES, create_all, hold_if_asked, sizes};
use crate::support::envtest::servers::SimCluster;
use crate::support::envtest::{EnvTest, User};
use crate::support::wait::wait_for;

/// Affected-free, with the metadata rule: every snapshot it writes carries `spec.metadata`.
const VERSION: &str = "v1.30.5+k3s1";
/// `kubectl create -f` in lists of this many.
const LIST: usize = 5_000;
/// The seconds between two copies' snapshots: the simulators' interval.
const INTERVAL: i64 = 15;

/// Runs three servers for 20 s, stops them, and returns the oldest snapshot they wrote with
/// `spec.metadata`, as the apiserver serves it.
fn one_snapshot_as_k3s_wrote_it(env: &EnvTest) -> Value {
    let cluster = SimCluster::start(env, "k3s", VERSION, 3, &["--snapshot-interval", "15s"]);
    std::thread::sleep(Duration::from_secs(20));
    let with_metadata = |env: &EnvTest| -> Vec<Value> {
        env.admin()
            .snapshot_files()
            .into_iter()
            .filter(|cr| cr["spec"]["metadata"].is_object())
            .collect()
    };
    assert!(
        wait_for(Duration::from_secs(60), || !with_metadata(env).is_empty()),
        "the simulated servers wrote a snapshot with metadata"
    );
    for server in &cluster.servers {
        env.stop_sim(&server.hostname);
    }
    with_metadata(env)
        .into_iter()
        .min_by_key(unix_of)
        .expect("a snapshot with metadata")
}

/// The Unix time a snapshot's name ends with (`<snapshot-name>-<node>-<unix>`).
fn unix_of(cr: &Value) -> i64 {
    let name = cr["spec"]["snapshotName"]
        .as_str()
        .expect("spec.snapshotName");
    let (_, unix) = name.rsplit_once('-').expect("<prefix>-<unix>");
    unix.parse().expect("a Unix time")
}

/// Copy `i` of `original`, `i + 1` intervals older, as `kubectl create -f` sends it.
fn copy_of(original: &Value, i: usize) -> Value {
    use sha2::{Digest, Sha256};
    let mut copy = original.clone();
    let metadata = copy["metadata"].as_object_mut().expect("metadata");
    for field in [
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "managedFields",
        "generation",
        "finalizers",
    ] {
        metadata.remove(field);
    }
    let snapshot = original["spec"]["snapshotName"].as_str().unwrap();
    let (prefix, _) = snapshot.rsplit_once('-').unwrap();
    let file = format!("{prefix}-{}", unix_of(original) - INTERVAL * (i as i64 + 1));
    let digest: String = Sha256::digest(file.as_bytes())
        .iter()
        .take(3)
        .map(|b| format!("{b:02x}"))
        .collect();
    copy["metadata"]["name"] = Value::from(format!("local-{file}-{digest}"));
    let location = original["spec"]["location"].as_str().unwrap();
    let (folder, _) = location.rsplit_once('/').unwrap();
    copy["spec"]["location"] = Value::from(format!("{folder}/{file}"));
    copy["spec"]["snapshotName"] = Value::from(file);
    copy
}

/// Creates copies `from..to` in lists of [`LIST`].
fn create_copies(env: &EnvTest, original: &Value, from: usize, to: usize) {
    for start in (from..to).step_by(LIST) {
        let list = (start..to.min(start + LIST))
            .map(|i| copy_of(original, i))
            .collect();
        create_all(env, list, Some("kubectl-create"));
    }
}

/// The controller idle, every CR missing.
#[test]
#[ignore = "a benchmark: minutes and GBs; run on demand (docs/performance.md)"]
fn benchmark_all_missing() {
    // Before anything grows this process: see peak_launcher.rs.
    let mut launcher = PeakLauncher::start();
    let Some(env) = EnvTest::start("copied_snapshot_files_benchmark") else {
        return;
    };
    let original = one_snapshot_as_k3s_wrote_it(&env);
    println!(
        "the copied ETCDSnapshotFile: {}",
        serde_json::to_string(&original).unwrap()
    );
    viewer_with_the_read_only_role(&env);
    let kubeconfig = env.kubeconfig(User::Viewer).display().to_string();
    let mut table = BenchTable::start(&env, &mut launcher, "ready + 10 s");
    let mut created = 0;
    for n in sizes() {
        let seeding = Instant::now();
        create_copies(&env, &original, created, n);
        created = n;
        let listed = env.admin().get(&format!("{FILES}?limit=1")).unwrap();
        let left = listed["metadata"]["remainingItemCount"]
            .as_u64()
            .unwrap_or(0);
        assert!(left as usize + 1 >= n, "the bed holds {n} CRs");
        eprintln!("seeded {n} CRs in {:.1} s", seeding.elapsed().as_secs_f64());
        hold_if_asked(&env, User::Viewer);
        let now = jiff::Timestamp::now()
            .round(jiff::Unit::Second)
            .unwrap()
            .to_string();
        let args = [
            "--kubeconfig",
            &kubeconfig,
            "--now",
            &now,
            "snapshots",
            "diff",
            "-o",
            "json",
        ];
        let bed = Bed {
            env: &env,
            user: User::Viewer,
            diff_args: &args,
            serve_flags: &[],
            settle: Duration::from_secs(10),
        };
        table.measure(&bed, &mut launcher, n);
    }
}
