//! `apiserver-endpoint-stale` against a real kube-apiserver. The test bed runs it with
//! `--endpoint-reconciler-type=none`, so nothing maintains `default/kubernetes`: the test writes
//! the Endpoints and the EndpointSlice as admin, the way the lease reconciler would, with and
//! without an address no simulated server has (k3s-io/k3s#14594).

use crate::common::run_as;
use crate::report::CheckReport;
use crate::support::envtest::servers::SimCluster;
use crate::support::envtest::{EnvTest, User};
use crate::support::objects::{kubernetes_endpoint_slice, kubernetes_endpoints};

const ENDPOINTS: &str = "/api/v1/namespaces/default/endpoints";
const SLICES: &str = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices";

fn stale(report: &CheckReport) -> Vec<(String, String)> {
    report
        .findings
        .iter()
        .map(|f| &f.finding)
        .filter(|f| f.code == "apiserver-endpoint-stale")
        .map(|f| (f.object.clone(), f.message.clone()))
        .collect()
}

#[test]
fn real_a_stale_apiserver_address_is_found_on_both_objects_and_a_current_one_is_not() {
    let Some(env) = EnvTest::start("real_a_stale_apiserver_address") else {
        return;
    };
    // k3ssim servers report InternalIP 10.0.0.11 and 10.0.0.12.
    let _cluster = SimCluster::start(&env, "k3s", "v1.34.2+k3s1", 2, &[]);
    let admin = env.admin();
    admin.put(
        ENDPOINTS,
        &kubernetes_endpoints(&["10.0.0.11", "10.0.0.12"]),
    );
    admin.put(
        SLICES,
        &kubernetes_endpoint_slice(&["10.0.0.11", "10.0.0.12"]),
    );
    let report: CheckReport = run_as(&env, User::Admin, &["check", "-o", "json"]).json();
    assert!(stale(&report).is_empty(), "{:?}", report.codes());
    let run = report
        .checks
        .iter()
        .find(|c| c.name == "apiserver-endpoints")
        .unwrap();
    assert!(run.ran, "{run:?}");

    // The server that moved from .59 keeps its old masterlease: both objects list it.
    admin.put(
        ENDPOINTS,
        &kubernetes_endpoints(&["10.0.0.11", "10.0.0.12", "192.168.68.59"]),
    );
    admin.put(
        SLICES,
        &kubernetes_endpoint_slice(&["10.0.0.11", "10.0.0.12", "192.168.68.59"]),
    );
    let out = run_as(
        &env,
        User::Admin,
        &["check", "-o", "json", "--fail-on", "warning"],
    );
    out.code(1);
    let report: CheckReport = out.json();
    let found = stale(&report);
    let objects: Vec<&str> = found.iter().map(|(o, _)| o.as_str()).collect();
    assert_eq!(
        objects,
        [
            "Endpoints default/kubernetes",
            "EndpointSlice default/kubernetes"
        ],
        "{:?}",
        report.codes()
    );
    assert!(
        found[1]
            .1
            .contains("lists 192.168.68.59 that no server Node has"),
        "{}",
        found[1].1
    );
    assert!(
        found[1]
            .1
            .contains("v1.34.2+k3s1 copies this EndpointSlice into the k3s/apiaddresses etcd key"),
        "{}",
        found[1].1
    );
    assert!(
        found[0].1.contains("follows the EndpointSlice instead"),
        "{}",
        found[0].1
    );

    // Fixed on the slice only: the Endpoints still carry it.
    admin.put(
        SLICES,
        &kubernetes_endpoint_slice(&["10.0.0.11", "10.0.0.12"]),
    );
    let report: CheckReport = run_as(&env, User::Admin, &["check", "-o", "json"]).json();
    let objects: Vec<String> = stale(&report).into_iter().map(|(o, _)| o).collect();
    assert_eq!(objects, ["Endpoints default/kubernetes"]);
}
