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

/// `serve` as a user with the README's roles: its Endpoints watch (a `metadata.name` field
/// selector, which the Role's resourceNames allows) and its EndpointSlice watch (a label
/// selector) are what a real kube-apiserver accepts, and the finding follows the objects.
/// Without the Role in default it stays ready and up, the check not run.
#[test]
fn real_serve_follows_the_kubernetes_endpoints_with_the_readme_roles() {
    use crate::common::viewer_with_the_read_only_role;
    use crate::support::harness::k3sdoctor;
    use crate::support::readme::readme_namespaced_role;
    use crate::support::scrape::{metrics, sample, start_serve, wait_for_sample};
    use crate::support::wait::wait_for;
    use std::time::Duration;
    const SEEN: Duration = Duration::from_secs(30);
    const SERIES: &str =
        r#"k3sdoctor_findings{code="apiserver-endpoint-stale",severity="warning"}"#;

    let Some(env) = EnvTest::start("real_serve_follows_the_kubernetes_endpoints") else {
        return;
    };
    let _cluster = SimCluster::start(&env, "k3s", "v1.34.2+k3s1", 1, &[]);
    let admin = env.admin();
    admin.put(
        ENDPOINTS,
        &kubernetes_endpoints(&["10.0.0.11", "192.168.68.59"]),
    );
    admin.put(SLICES, &kubernetes_endpoint_slice(&["10.0.0.11"]));
    viewer_with_the_read_only_role(&env);

    // The ClusterRole alone: ready and up, the check not run, no finding.
    let (serve, address) =
        start_serve(k3sdoctor(["serve"]).kubeconfig(&env.kubeconfig(User::Viewer)));
    wait_for_sample(address, "k3sdoctor_ready", 1.0, SEEN);
    wait_for_sample(address, "k3sdoctor_up", 1.0, SEEN);
    assert_eq!(sample(&metrics(address), SERIES), None);
    drop(serve);

    admin.apply_yaml(&readme_namespaced_role("k3sdoctor-read-only"));
    admin.bind_in("default", "k3sdoctor-read-only", "viewer");
    let (_serve, address) =
        start_serve(k3sdoctor(["serve"]).kubeconfig(&env.kubeconfig(User::Viewer)));
    wait_for_sample(address, SERIES, 1.0, SEEN);
    admin.put(
        SLICES,
        &kubernetes_endpoint_slice(&["10.0.0.11", "192.168.68.59"]),
    );
    wait_for_sample(address, SERIES, 2.0, SEEN);
    admin.put(ENDPOINTS, &kubernetes_endpoints(&["10.0.0.11"]));
    admin.put(SLICES, &kubernetes_endpoint_slice(&["10.0.0.11"]));
    assert!(
        wait_for(SEEN, || sample(&metrics(address), SERIES).is_none()),
        "{}",
        metrics(address)
    );
    assert_eq!(sample(&metrics(address), "k3sdoctor_up"), Some(1.0));
}
