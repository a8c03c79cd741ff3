//! A server killed without its Node being marked (nothing runs the node lifecycle controller
//! here, as when the dead server was the one running it): its Node stays Ready, but its
//! kubelet Lease in kube-node-lease stops. A move whose old holder restarts must count it
//! down and refuse, with nothing written.

use std::time::Duration;

use crate::common::run_as;
use crate::support::envtest::servers::SimCluster;
use crate::support::envtest::{EnvTest, User};
use crate::support::wait::wait_for;

/// The gate's threshold: the 40 s node-monitor grace and 10 s for the kubelet's clock.
const SILENT_AFTER: Duration = Duration::from_secs(52);

#[test]
fn real_a_killed_server_still_ready_by_its_node_costs_the_quorum_of_a_move() {
    let Some(env) =
        EnvTest::start("real_a_killed_server_still_ready_by_its_node_costs_the_quorum_of_a_move")
    else {
        return;
    };
    let cluster = SimCluster::start(&env, "k3s", "v1.29.4+k3s1", 3, &[]);
    cluster.split_etcd_onto("server-2");
    let core_holder = cluster.holder("k3s");
    let core_node = cluster.server(&core_holder).node.clone();
    let silent = ["server-1", "server-2", "server-3"]
        .into_iter()
        .find(|s| *s != core_holder && *s != "server-2")
        .expect("a third server");
    let node_name = cluster.server(silent).node.clone();
    env.kill_sim(silent);
    let path =
        format!("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{node_name}");
    let renewed = || -> Option<jiff::Timestamp> {
        env.admin().get(&path)?["spec"]["renewTime"]
            .as_str()?
            .parse()
            .ok()
    };
    let last = renewed().expect("the killed server's kubelet Lease");
    assert!(
        wait_for(SILENT_AFTER + Duration::from_secs(20), || {
            jiff::Timestamp::now().duration_since(last).as_secs() > SILENT_AFTER.as_secs() as i64
        }),
        "the clock did not move"
    );
    let node = env
        .admin()
        .get(&format!("/api/v1/nodes/{node_name}"))
        .expect("its Node");
    assert!(
        node["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True"),
        "the Node should still say Ready: {node:#}"
    );
    let out = run_as(
        &env,
        User::Admin,
        &["leases", "follow", "--fix", "--yes", "--no-wait"],
    );
    out.code(2)
        .one_line_error()
        .stderr_has(&format!(
            "etcd would lose quorum while {core_node} restarts"
        ))
        .stderr_has(&format!(
            "counted down though Ready: {node_name}: no heartbeat for"
        ));
    assert_eq!(cluster.holder("k3s"), core_holder, "nothing may be written");
}
