//! A lock move's gates count a server down when its kubelet has stopped beating (its Lease in
//! kube-node-lease), though its Node still says Ready: the node controller marks it only after
//! its grace, and not at all when the dead server was the one running it.

use serde_json::{Value, json};

use crate::common::follow_fix;
use crate::support::fake_api::{FakeApi, Fault, Role};
use crate::support::harness::{Output, k3sdoctor};
use crate::support::objects::{NOW, lease, micro_ago, server};

const V: &str = "v1.29.4+k3s1";

fn heartbeat(node: &str, secs_ago: i64) -> Value {
    json!({
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": node, "namespace": "kube-node-lease"},
        "spec": {
            "holderIdentity": node,
            "leaseDurationSeconds": 40,
            "renewTime": micro_ago(secs_ago)
        }
    })
}

/// A split (k3s on s1, k3s-etcd on s2) on three Ready servers whose kubelets last beat
/// `beats` seconds before NOW.
fn split_beating(beats: [i64; 3]) -> FakeApi {
    let mut objects = vec![
        server("s1", V),
        server("s2", V),
        server("s3", V),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s2", 1),
    ];
    objects.extend(
        ["s1", "s2", "s3"]
            .into_iter()
            .zip(beats)
            .map(|(n, ago)| heartbeat(n, ago)),
    );
    FakeApi::with_objects(objects)
}

fn plan(fake: &FakeApi) -> Output {
    k3sdoctor(["leases", "follow", "--now", NOW])
        .cluster(fake, Role::ReadOnly)
        .run()
}

#[test]
fn a_member_ready_by_its_node_but_silent_for_67_s_costs_the_quorum_of_a_move() {
    let fake = split_beating([5, 3, 67]);
    plan(&fake)
        .code(2)
        .one_line_error()
        .stderr_has("etcd would lose quorum while s1 restarts (3 etcd members, 2 Ready, 1 Ready during the restart, quorum 2")
        .stderr_has("counted down though Ready: s3: no heartbeat for 67s (its Lease in kube-node-lease; past the 40 s node-monitor grace and the 10 s allowed for its clock)");
}

#[test]
fn members_that_beat_within_the_grace_and_the_clock_allowance_keep_the_quorum() {
    // 45 s is past the grace but inside the allowance for a kubelet clock running behind.
    let fake = split_beating([5, 3, 45]);
    plan(&fake).code(1).stdout_has(
        "etcd quorum holds (3 etcd members, 3 Ready, 2 Ready during the restart, quorum 2)",
    );
}

#[test]
fn a_silent_target_is_not_a_candidate() {
    let fake = split_beating([5, 90, 3]);
    plan(&fake)
        .code(2)
        .one_line_error()
        .stderr_has("target s2 is Ready by its Node but has sent no heartbeat for 90s");
}

#[test]
fn heartbeats_this_user_may_not_read_leave_ready_alone_and_the_plan_says_so() {
    let fake = split_beating([5, 3, 67]);
    fake.inject(Fault::status(
        "GET",
        "/namespaces/kube-node-lease/leases",
        403,
    ));
    plan(&fake)
        .code(1)
        .stdout_has("judged by Ready alone, heartbeats not read: this user may not list leases in kube-node-lease");
}

/// `--fix` is refused by the same gate, before anything is sent.
#[test]
fn a_fix_gated_by_a_silent_member_writes_nothing() {
    let fake = split_beating([5, 3, 67]);
    follow_fix(&fake, &["--no-wait"])
        .code(2)
        .stderr_has("no heartbeat for 67s");
    assert_eq!(fake.lock_holder("Lease", "k3s").unwrap(), "s1");
}
