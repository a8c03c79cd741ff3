//! Rancher's workspaces are read from the management apiserver's watch cache: one answer per
//! kind at `resourceVersion=0`, no page size, while the clusters Rancher manages are listed
//! consistently, page by page. A cache answer too large to hold is read again page by page.
//! Management and downstream are fake API servers behind the test Rancher proxy; the real
//! apiserver's answers to these reads are checked in the real tier (`rancher_view`).

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::fake_api::{FakeApi, Fault};
use crate::support::faults::exec_plugin::{ExecPlugin, Mode};
use crate::support::harness::{Output, k3sdoctor};
use crate::support::objects::{renewed_now, server};
use crate::support::rancher::proxy::{Backend, RancherProxy};

const USER: &str = "admin";
const RANCHER_TOKEN: &str = "kubeconfig-u-admin:cache0123456789abcdef";
const ID: &str = "c-m-1";
const WORKSPACE: &str = "fleet-default";
/// Far beyond the runs here: a run that hangs fails instead of blocking the suite.
const ENDS: Duration = Duration::from_secs(120);

struct Bed {
    proxy: RancherProxy,
    management: FakeApi,
    _downstream: FakeApi,
}

/// One cluster `c-m-1` with one k3s server.
fn bed() -> Bed {
    let proxy = RancherProxy::start();
    proxy.add_user(USER, RANCHER_TOKEN);
    let management = FakeApi::start_tls();
    management.set_rancher_management(true);
    for id in ["local", ID] {
        management.put(json!({
            "apiVersion": "management.cattle.io/v3", "kind": "Cluster",
            "metadata": {"name": id},
            "spec": {"fleetWorkspaceName": WORKSPACE},
            "status": {"conditions": [{"type": "Connected", "status": "True"},
                                      {"type": "Ready", "status": "True"}]},
        }));
    }
    let downstream = FakeApi::start_tls();
    downstream.put(server("s1", "v1.29.6+k3s1"));
    downstream.put(renewed_now("k3s", "s1"));
    downstream.put(renewed_now("k3s-etcd", "s1"));
    proxy.register(ID, &Backend::fake_admin(&downstream, USER));
    proxy.register("local", &Backend::fake_admin(&management, USER));
    Bed {
        proxy,
        management,
        _downstream: downstream,
    }
}

/// `leases --rancher-clusters -o json -v` as the Rancher context.
fn fleet_leases(bed: &Bed) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let plugin = ExecPlugin::new(Mode::Token(RANCHER_TOKEN.into()));
    let config = bed.proxy.local_kubeconfig(dir.path(), &plugin);
    let args = ["leases", "--rancher-clusters", "-o", "json", "-v"];
    k3sdoctor(args)
        .kubeconfig(&config)
        .spawn()
        .exit_within(ENDS)
        .expect("the fleet check ends")
}

/// The lists the run sent to the management cluster, as `path?query`.
fn lists_on_local(bed: &Bed) -> Vec<String> {
    bed.proxy
        .requests_to("local")
        .into_iter()
        .filter(|r| r.verb() == "list")
        .map(|r| r.path)
        .collect()
}

/// The one cluster was checked.
#[track_caller]
fn checked(out: &Output) {
    out.code(0);
    let report: Value = out.json();
    let entries = report["entries"].as_array().cloned().unwrap_or_default();
    assert_eq!(entries.len(), 1, "{report:#}");
    assert_eq!(entries[0]["context"], ID, "{report:#}");
    assert_eq!(entries[0]["outcome"], "checked", "{report:#}");
}

const PROVISIONING: &str = "/apis/provisioning.cattle.io/v1/namespaces/fleet-default/clusters?";

#[test]
fn workspaces_are_read_from_the_watch_cache_and_the_clusters_consistently() {
    let bed = bed();
    checked(&fleet_leases(&bed));
    let lists = lists_on_local(&bed);
    let clusters: Vec<&String> = lists
        .iter()
        .filter(|p| p.starts_with("/apis/management.cattle.io/v3/clusters?"))
        .collect();
    assert_eq!(clusters.len(), 1, "{lists:#?}");
    assert!(
        clusters[0].contains("limit=500") && !clusters[0].contains("resourceVersion"),
        "the clusters are listed consistently, page by page: {lists:#?}"
    );
    let workspace: Vec<&String> = lists
        .iter()
        .filter(|p| p.starts_with(PROVISIONING))
        .collect();
    assert_eq!(workspace.len(), 1, "{lists:#?}");
    assert!(
        workspace[0].contains("resourceVersion=0") && !workspace[0].contains("limit="),
        "a workspace is read from the watch cache in one answer: {lists:#?}"
    );
}

#[test]
fn a_cache_answer_too_large_is_read_again_page_by_page() {
    let bed = bed();
    // The first list of the workspace's clusters: the one asked of the watch cache.
    bed.management
        .inject(Fault::huge_body("GET", PROVISIONING, 65 << 20).times(1));
    let out = fleet_leases(&bed);
    checked(&out);
    out.stderr_has(&format!(
        "list clusters.provisioning.cattle.io in {WORKSPACE}: the watch cache's answer is too \
         large, reading it page by page"
    ));
    let lists: Vec<String> = lists_on_local(&bed)
        .into_iter()
        .filter(|p| p.starts_with(PROVISIONING))
        .collect();
    assert_eq!(lists.len(), 2, "{lists:#?}");
    assert!(lists[0].contains("resourceVersion=0"), "{lists:#?}");
    assert!(
        lists[1].contains("limit=500") && !lists[1].contains("resourceVersion"),
        "{lists:#?}"
    );
}
