//! A dump's "now" comes from times the API server or a lock holder wrote,
//! never from a kubelet heartbeat, which each node writes with its own clock.

use crate::support::harness::k3sdoctor;
use crate::support::objects::{NOW, agent, apiserver_identity, lease, server, write_dump};

#[test]
fn an_agent_six_minutes_fast_does_not_expire_fresh_locks() {
    let dir = tempfile::tempdir().unwrap();
    let v = "v1.29.4+k3s1";
    let mut fast = agent("w1", v);
    fast["status"]["conditions"][0]["lastHeartbeatTime"] = "2024-05-31T12:16:40Z".into();
    let dump = dir.path().join("dump.yaml");
    write_dump(
        &dump,
        &[
            server("s1", v),
            server("s2", v),
            fast,
            lease("k3s", "s1", 2),
            lease("k3s-etcd", "s1", 0),
            apiserver_identity("s1", 5),
        ],
    );
    let out = k3sdoctor(["--from-file", &dump.display().to_string(), "leases"]).run();
    out.code(0)
        .stderr_has(&format!(
            "now: {NOW} (newest server-written timestamp in the dump"
        ))
        .stderr_has("Node w1's heartbeat is 6m0s past the newest server-written time in the dump")
        .stderr_has(&format!(
            "now is {NOW} from Lease kube-system/k3s-etcd spec.renewTime"
        ));
    assert!(!out.stdout.contains("lease-expired"), "{}", out.stdout);
}
