//! Many ETCDSnapshotFiles on the real kube-apiserver: the paged, projected read
//! gives the report the whole-object read gives (CI, 1,200 CRs so the list takes 3 pages), and
//! an on-demand benchmark of memory and time at 5,000 and 50,000 CRs (docs/performance.md):
//!
//! ```sh
//! cargo build --release --locked
//! K3SDOCTOR_ENVTEST=../shared/envtest K3SDOCTOR_BENCH_BIN=$PWD/target/release/k3sdoctor \
//!   cargo test --locked --test real_apiserver many_snapshot_files::benchmark -- --ignored --nocapture
//! ```
//!
//! `copied_snapshot_files::benchmark_all_missing` measures the case where every CR is missing.
//! `K3SDOCTOR_BENCH_SIZES=5000,50000` (the default) sets the CR counts; the same bed grows
//! from one to the next. `K3SDOCTOR_BENCH_BIN` may name several builds, `label=path,…`, to
//! compare them side by side on the same objects.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::peak_launcher::PeakLauncher;
use crate::support::envtest::{EnvTest, User};
use crate::support::k3s_sim::snapshot_entry::{S3ConfigShape, data_key, entry_value};
use crate::support::objects::{extra_metadata, numbered_snapshot_cr, server, snapshot_configmap};

use crate::snapshot_bench::{
    Bed, BenchTable, FILES, binary, create_all, hold_if_asked, run, sizes,
};
const SERVERS: [&str; 3] = ["server-1", "server-2", "server-3"];
/// The newest snapshot; every server takes one an hour, a second after the previous one.
const NEWEST: i64 = 1_717_156_840;
/// k3s's ConfigMap limit: the newest entries that fit in 1 MiB are kept.
const CONFIGMAP_LIMIT: usize = 1_048_576;
/// The same "now" for every run, so reports compare byte for byte.
const NOW: &str = "2024-05-31T12:20:40Z";

/// The `i`-th newest snapshot (`numbered_snapshot_cr`), with the controller's finalizer.
fn snapshot(i: usize) -> Value {
    let mut cr = numbered_snapshot_cr(i, &SERVERS, NEWEST);
    cr["metadata"]["finalizers"] = json!(["wrangler.cattle.io/managed-etcd-snapshots-controller"]);
    cr
}

/// Creates CRs `from..to` through the API.
fn create_files(env: &EnvTest, from: usize, to: usize) {
    create_all(env, (from..to).map(snapshot).collect(), None);
}

/// The cluster's ConfigMaps: the newest `count` CRs' entries that fit in 1 MiB, and Rancher's
/// extra metadata. `drift`: the oldest 200 entries are
/// left out and every 97th has another size, so that the report shows entries of each kind.
fn put_configmaps(env: &EnvTest, count: usize, drift: bool) {
    let mut entries = Vec::new();
    let mut bytes = 0;
    for i in 0..count {
        let cr = snapshot(i);
        if drift && i + 200 >= count {
            break;
        }
        let mut value = entry_value(&cr, S3ConfigShape::Legacy);
        if drift && i % 97 == 0 {
            value = value.replace("8417312", "8417313");
        }
        if bytes + value.len() > CONFIGMAP_LIMIT {
            break;
        }
        bytes += value.len();
        entries.push((data_key(&cr), value));
    }
    let admin = env.admin();
    for name in SERVERS {
        admin.put("/api/v1/nodes", &server(name, "v1.29.4+k3s1"));
    }
    let configmaps = "/api/v1/namespaces/kube-system/configmaps";
    admin.put(configmaps, &snapshot_configmap("k3s", &entries));
    admin.put(configmaps, &extra_metadata("k3s"));
}

fn diff_args(kubeconfig: &Path) -> Vec<String> {
    [
        "--kubeconfig",
        &kubeconfig.display().to_string(),
        "--distro",
        "k3s",
        "--now",
        NOW,
    ]
    .into_iter()
    .chain(["snapshots", "diff", "-o", "json"])
    .map(str::to_string)
    .collect()
}

/// What k3sdoctor's live read reports, and what it reports reading a whole-object dump of the
/// same objects (a `kubectl get -o json` List written by the admin client: every field, every
/// object, parsed whole).
#[test]
fn the_paged_projected_read_reports_what_a_whole_object_dump_reports() {
    let Some(env) = EnvTest::start("many_snapshot_files") else {
        return;
    };
    let count = 1_200;
    create_files(&env, 0, count);
    put_configmaps(&env, count, true);
    let dir = env.scratch().join("many");
    std::fs::create_dir_all(&dir).unwrap();
    let args = diff_args(&env.kubeconfig(User::Admin));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let live = run(&binary(), &args, &dir.join("live.json"));
    assert!(matches!(live.code, 0 | 1), "live diff exited {}", live.code);

    let admin = env.admin();
    let files = admin.get(FILES).expect("the ETCDSnapshotFile list");
    assert_eq!(files["items"].as_array().unwrap().len(), count);
    let configmaps = admin
        .get("/api/v1/namespaces/kube-system/configmaps")
        .expect("the ConfigMap list");
    let nodes = admin.get("/api/v1/nodes").expect("the Node list");
    // The live read judges the locks too (none here, so nothing writes the entries): the dump
    // holds the same Lease list, or it could only say the locks were not read.
    let leases = admin
        .get("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases")
        .expect("the Lease list");
    let leases_file = dir.join("leases.json");
    std::fs::write(&leases_file, serde_json::to_vec_pretty(&leases).unwrap()).unwrap();
    let dump = dir.join("dump.json");
    let mut items = files["items"].as_array().unwrap().clone();
    // A typed list's items carry no apiVersion and kind; `kubectl get -o json` adds them.
    for (list, kind) in [(&configmaps, "ConfigMap"), (&nodes, "Node")] {
        items.extend(list["items"].as_array().unwrap().iter().map(|object| {
            let mut object = object.clone();
            object["apiVersion"] = json!("v1");
            object["kind"] = json!(kind);
            object
        }));
    }
    std::fs::write(
        &dump,
        serde_json::to_vec_pretty(&json!({"apiVersion": "v1", "kind": "List", "items": items}))
            .unwrap(),
    )
    .unwrap();
    let dumped = run(
        &binary(),
        &[
            "--from-file",
            dump.to_str().unwrap(),
            "--from-file",
            leases_file.to_str().unwrap(),
            "--distro",
            "k3s",
            "--now",
            NOW,
            "snapshots",
            "diff",
            "-o",
            "json",
        ],
        &dir.join("dumped.json"),
    );
    assert_eq!(dumped.code, live.code);
    let (live, dumped): (Value, Value) = (
        serde_json::from_slice(&live.stdout).unwrap(),
        serde_json::from_slice(&dumped.stdout).unwrap(),
    );
    assert_eq!(
        strip_source(live.clone()),
        strip_source(dumped),
        "the live (paged) and the dump (whole-object) reports differ"
    );
    let rows = live["snapshots"].as_array().map_or(0, Vec::len);
    assert!(
        rows >= 200,
        "the report shows the missing and differing entries: {live}"
    );
}

/// Where the objects came from (the server or the file) is the one field that differs.
fn strip_source(mut report: Value) -> Value {
    if let Some(o) = report.as_object_mut() {
        for key in ["source", "origin", "server", "input"] {
            o.remove(key);
        }
    }
    report
}

/// The controller ran: most CRs pruned from the 1 MiB ConfigMap.
#[test]
#[ignore = "a benchmark: minutes and GBs; run on demand (docs/performance.md)"]
fn benchmark() {
    // Before anything grows this process: see peak_launcher.rs.
    let mut launcher = PeakLauncher::start();
    let Some(env) = EnvTest::start("many_snapshot_files_benchmark") else {
        return;
    };
    let args = diff_args(&env.kubeconfig(User::Admin));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let serve_flags = ["--distro", "k3s"];
    let mut table = BenchTable::start(&env, &mut launcher, "ready + 20 s");
    let mut created = 0;
    for n in sizes() {
        let seeding = Instant::now();
        create_files(&env, created, n);
        created = n;
        put_configmaps(&env, n, false);
        eprintln!("seeded {n} CRs in {:.1} s", seeding.elapsed().as_secs_f64());
        hold_if_asked(&env, User::Admin);
        let bed = Bed {
            env: &env,
            user: User::Admin,
            diff_args: &args,
            serve_flags: &serve_flags,
            settle: Duration::from_secs(20),
        };
        table.measure(&bed, &mut launcher, n);
    }
}
