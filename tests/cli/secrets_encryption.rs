//! `secrets-encryption-diverged` from the servers' encryption-config-hash
//! annotations, as `<prog> secrets-encrypt status` would judge them on each server.

use serde_json::{Value, json};

use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::k3sdoctor;
use crate::support::objects::{lease, server};

const V: &str = "v1.31.5+k3s1";
const HASH_A: &str = "prepare-5f1c4ae36f3b21c8b4e1a8a5e0d3a2b1c9f8e7d6c5b4a3928170615243342516";
const HASH_B: &str = "start-0b5d2c0e3f6a7b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e";

fn annotated(name: &str, hash: &str) -> Value {
    let mut node = server(name, V);
    node["metadata"]["annotations"]["k3s.io/encryption-config-hash"] = json!(hash);
    node
}

fn check(fake: &FakeApi) -> Value {
    k3sdoctor(["check", "-o", "json", "--fail-on", "never"])
        .cluster(fake, Role::ReadOnly)
        .run()
        .json()
}

fn codes(report: &Value) -> Vec<&str> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect()
}

#[test]
fn servers_at_different_stages_are_named_with_stage_and_hash() {
    let fake = FakeApi::with_objects([
        annotated("s1", HASH_A),
        annotated("s2", HASH_B),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
    ]);
    let report = check(&fake);
    let finding = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "secrets-encryption-diverged")
        .unwrap_or_else(|| panic!("{report:#}"));
    assert_eq!(finding["severity"], "warning");
    let message = finding["message"].as_str().unwrap();
    assert!(
        message.contains("s1 stage prepare hash 5f1c4ae36f3b, s2 stage start hash 0b5d2c0e3f6a"),
        "{message}"
    );
    assert!(message.contains("Hash Match: false"));
}

#[test]
fn one_hash_everywhere_or_none_at_all_is_quiet() {
    let same = FakeApi::with_objects([
        annotated("s1", HASH_A),
        annotated("s2", HASH_A),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
    ]);
    assert!(!codes(&check(&same)).contains(&"secrets-encryption-diverged"));
    let off = FakeApi::with_objects([
        server("s1", V),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
    ]);
    let report = check(&off);
    let run = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "secrets-encryption")
        .unwrap();
    assert_eq!(run["ran"], true);
    assert!(
        run["note"]
            .as_str()
            .unwrap()
            .contains("secrets encryption is not enabled")
    );
}
