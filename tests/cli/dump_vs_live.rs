use serde_json::Value;

use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::{k3sdoctor, repo_path};
use crate::support::objects::{NOW, configmap_lock, lease, read_dump_objects, server, write_dump};

const EXAMPLE: &str = "tests/fixtures/split-cluster";

/// The same objects, read live and from a dump, give the same report.
fn assert_same_report(objects: Vec<Value>, now: &str) {
    let fake = FakeApi::start();
    for o in &objects {
        fake.put(o.clone());
    }
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("dump.yaml");
    write_dump(&dump, &objects);

    let live = k3sdoctor(["leases", "-o", "json", "--now", now])
        .cluster(&fake, Role::ReadOnly)
        .run();
    let offline = k3sdoctor(["leases", "-o", "json", "--now", now, "--from-file"])
        .arg(dump.display().to_string())
        .run();
    assert_eq!(
        live.code, offline.code,
        "live:\n{}\ndump:\n{}",
        live.stderr, offline.stderr
    );
    let (a, b): (Value, Value) = (live.json(), offline.json());
    assert_eq!(a, b, "live and dump reports differ");
}

#[test]
fn the_bundled_example_reads_the_same_live_and_offline() {
    let objects = read_dump_objects(&repo_path(EXAMPLE));
    assert!(objects.len() > 10);
    assert_same_report(objects, "2024-05-31T12:10:41Z");
}

#[test]
fn a_multilock_cluster_reads_the_same_live_and_offline() {
    let v = "v1.27.10+k3s2";
    assert_same_report(
        vec![
            server("s1", v),
            server("s2", v),
            lease("k3s", "s1", 1),
            configmap_lock("k3s", "s1", 1),
            lease("k3s-etcd", "s2", 1),
            configmap_lock("k3s-etcd", "s2", 1),
        ],
        NOW,
    );
}

#[test]
fn readme_first_command_shows_the_split() {
    let out = k3sdoctor([
        "--from-file",
        &repo_path(EXAMPLE).display().to_string(),
        "leases",
    ])
    .run();
    out.code(1)
        .stderr_has("ERROR   lease-split")
        .stderr_has("k3s is held by prod-k3s-1 but k3s-etcd by prod-k3s-2")
        .stderr_has("newest server-written timestamp in the dump");
}

#[test]
fn dump_directories_json_and_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let v = "v1.29.4+k3s1";
    // kubectl -o json output of one list, a YAML file with an older copy of the same lease.
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [
        server("s1", v), server("s2", v),
        with_rv(lease("k3s", "s1", 1), "900"), lease("k3s-etcd", "s1", 1)
    ]});
    std::fs::write(
        dir.path().join("a.json"),
        serde_json::to_string_pretty(&list).unwrap(),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("more")).unwrap();
    write_dump(
        &dir.path().join("more").join("old.yaml"),
        &[with_rv(lease("k3s", "s2", 1), "100")],
    );
    std::fs::write(dir.path().join("README.txt"), "not a dump").unwrap();

    let out = k3sdoctor(["leases", "--now", NOW, "--from-file"])
        .arg(dir.path().display().to_string())
        .run();
    out.code(0)
        .stdout_has("k3s        s1")
        .stderr_has("kept resourceVersion 900");
}

fn with_rv(mut object: Value, rv: &str) -> Value {
    object["metadata"]["resourceVersion"] = Value::String(rv.into());
    object
}
