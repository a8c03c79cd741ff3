//! Rancher's management cluster is read from its apiserver's watch cache: one answer per kind
//! at `resourceVersion=0`, no page size, for the clusters Rancher manages and for each
//! workspace's objects. A cache answer too large to hold is read again page by page.
//! `fleet-default` is read beside the clusters list, before the list says whether any cluster
//! is there: read for nothing, it is dropped, and its refusal with it.
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

/// One cluster `c-m-1` with one k3s server, in `fleet-default`.
fn bed() -> Bed {
    bed_in(WORKSPACE)
}

/// One cluster `c-m-1` with one k3s server, in `workspace`.
fn bed_in(workspace: &str) -> Bed {
    let proxy = RancherProxy::start();
    proxy.add_user(USER, RANCHER_TOKEN);
    let management = FakeApi::start_tls();
    management.set_rancher_management(true);
    for id in ["local", ID] {
        management.put(json!({
            "apiVersion": "management.cattle.io/v3", "kind": "Cluster",
            "metadata": {"name": id},
            "spec": {"fleetWorkspaceName": workspace},
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
fn the_clusters_and_the_workspaces_are_read_from_the_watch_cache() {
    let bed = bed();
    checked(&fleet_leases(&bed));
    let lists = lists_on_local(&bed);
    for prefix in ["/apis/management.cattle.io/v3/clusters?", PROVISIONING] {
        let reads: Vec<&String> = lists.iter().filter(|p| p.starts_with(prefix)).collect();
        assert_eq!(reads.len(), 1, "{prefix}: {lists:#?}");
        assert!(
            reads[0].contains("resourceVersion=0") && !reads[0].contains("limit="),
            "{prefix} is read from the watch cache in one answer: {lists:#?}"
        );
    }
}

#[test]
fn fleet_default_read_for_nothing_is_dropped_with_its_refusal() {
    // Every cluster is in another workspace, and this user may read only that one.
    let bed = bed_in("team-a");
    bed.management
        .inject(Fault::status("GET", "/namespaces/fleet-default/", 403));
    let out = fleet_leases(&bed);
    checked(&out);
    let lists = lists_on_local(&bed);
    for workspace in [WORKSPACE, "team-a"] {
        let read = format!("/apis/provisioning.cattle.io/v1/namespaces/{workspace}/clusters?");
        assert!(
            lists.iter().any(|p| p.starts_with(&read)),
            "{workspace} was not read: {lists:#?}"
        );
    }
    assert!(!out.stderr.contains("refused"), "{}", out.stderr);
}

#[test]
fn fleet_default_refused_where_clusters_are_is_the_run_s_error() {
    let bed = bed();
    bed.management
        .inject(Fault::status("GET", "/namespaces/fleet-default/", 403));
    let out = fleet_leases(&bed);
    // docs/exit-codes.md: 3, the cluster could not be read.
    out.code(3);
    out.stderr_has("Rancher's management cluster refused to list clusters.provisioning.cattle.io in fleet-default (403 Forbidden)");
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
