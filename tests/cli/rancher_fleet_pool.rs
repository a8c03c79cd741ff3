//! `--rancher-clusters` on one client per Rancher: every cluster's requests share one
//! connection pool (the proxy counts its TLS handshakes: over HTTP/2, as Rancher speaks it, no
//! more than `--parallel`; over HTTP/1.1 at most 8 per `--parallel`, and fewer than the
//! requests, each connection carrying several), the Rancher context's exec plugin runs once
//! for all of them, and a cluster Rancher holds for its 20–40 s "cluster agent disconnected"
//! is cut off at `--cluster-timeout` while the others get their verdicts. Management and
//! downstream clusters are fake API servers behind the test Rancher proxy.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::fake_api::FakeApi;
use crate::support::faults::exec_plugin::{ExecPlugin, Mode};
use crate::support::harness::{Output, k3sdoctor};
use crate::support::objects::{renewed_now, server};
use crate::support::rancher::Fault;
use crate::support::rancher::proxy::{Backend, Disconnected, RancherProxy};

const USER: &str = "admin";
const RANCHER_TOKEN: &str = "kubeconfig-u-admin:pool0123456789abcdef";
/// Far beyond the runs here: a run that hangs fails instead of blocking the suite.
const ENDS: Duration = Duration::from_secs(120);

fn management_cluster(id: &str) -> Value {
    json!({
        "apiVersion": "management.cattle.io/v3", "kind": "Cluster",
        "metadata": {"name": id},
        "spec": {"displayName": id, "fleetWorkspaceName": "fleet-default"},
        "status": {"conditions": [{"type": "Connected", "status": "True"},
                                  {"type": "Ready", "status": "True"}]},
    })
}

/// A Rancher whose `local` knows `ids` (all connected, as Rancher still says for a while
/// after an agent goes), each a one-server k3s cluster behind the proxy.
struct Bed {
    proxy: RancherProxy,
    _management: FakeApi,
    _clusters: Vec<FakeApi>,
}

fn bed(proxy: RancherProxy, ids: &[&str]) -> Bed {
    proxy.add_user(USER, RANCHER_TOKEN);
    let management = FakeApi::start_tls();
    management.set_rancher_management(true);
    management.put(management_cluster("local"));
    let clusters: Vec<FakeApi> = ids
        .iter()
        .map(|id| {
            management.put(management_cluster(id));
            let fake = FakeApi::start_tls();
            fake.put(server("s1", "v1.29.6+k3s1"));
            fake.put(renewed_now("k3s", "s1"));
            fake.put(renewed_now("k3s-etcd", "s1"));
            proxy.register(id, &Backend::fake_admin(&fake, USER));
            fake
        })
        .collect();
    proxy.register("local", &Backend::fake_admin(&management, USER));
    Bed {
        proxy,
        _management: management,
        _clusters: clusters,
    }
}

const IDS: [&str; 6] = ["c-m-1", "c-m-2", "c-m-3", "c-m-4", "c-m-5", "c-m-6"];

#[test]
fn over_http2_the_clusters_of_one_rancher_share_one_connection() {
    let bed = bed(RancherProxy::start(), &IDS);
    fleet_at_parallel_2(&bed);
    // One connection carries every request, the cut-off ones too (each its own stream).
    let handshakes = bed.proxy.handshakes();
    assert!(
        (1..=2).contains(&handshakes),
        "{handshakes} TLS handshakes with the proxy for {} requests at --parallel 2",
        bed.proxy.requests().len()
    );
    // The management cluster's reads go out together: one request first, alone, opens the
    // connection they share (sent together before it is up, each would open its own).
    let local: Vec<String> = bed
        .proxy
        .requests_to("local")
        .into_iter()
        .map(|r| r.path)
        .collect();
    assert_eq!(
        local.first().map(String::as_str),
        Some("/version"),
        "{local:#?}"
    );
}

#[test]
fn over_http1_each_connection_carries_several_requests() {
    let bed = bed(RancherProxy::start_http1_only(), &IDS);
    fleet_at_parallel_2(&bed);
    // At most 8 connections per --parallel at once (k3sdoctor's REQUESTS_PER_CLUSTER), each
    // reused for several requests. A request cut off at the cluster timeout takes its
    // connection with it, so one more may be opened after each.
    let handshakes = bed.proxy.handshakes();
    let requests = bed.proxy.requests().len();
    let cut = bed.proxy.requests_to("c-m-6").len();
    assert!(
        (1..=8 * 2 + cut).contains(&handshakes) && handshakes < requests,
        "{handshakes} TLS handshakes with the proxy for {requests} requests to {} clusters at \
         --parallel 2, {cut} requests cut off",
        IDS.len()
    );
}

/// `leases --rancher-clusters --parallel 2` through `bed`'s Rancher, whose c-m-6 lost its
/// agent: every other cluster checked, c-m-6 cut off at `--cluster-timeout 2s`, and the
/// Rancher context's plugin run once.
fn fleet_at_parallel_2(bed: &Bed) {
    let ids = IDS;
    // Rancher still lists c-m-6 as connected, but its agent is gone: the proxy holds each
    // request for the 20–40 s Rancher's dialer takes to give up.
    bed.proxy.register_disconnected_after(
        "c-m-6",
        Disconnected::AgentDisconnected,
        Duration::from_secs(90),
    );
    let plugin = ExecPlugin::new(Mode::Token(RANCHER_TOKEN.into()));
    let out = leases_through_rancher(bed, &plugin, &[]);

    out.code(3)
        .stderr_has("k3sdoctor: error: context c-m-6: cannot ")
        .stderr_has("within 2s (--cluster-timeout)");
    let report: Value = out.json();
    let entries = report["entries"].as_array().unwrap();
    assert_eq!(entries.len(), ids.len(), "{report}");
    for entry in entries {
        if entry["context"] == "c-m-6" {
            assert_eq!(entry["outcome"], "unreachable", "{report}");
            let error = entry["error"].as_str().unwrap();
            assert!(
                error.contains("within 2s (--cluster-timeout)") && error.contains("Rancher"),
                "{error}"
            );
        } else {
            assert_eq!(entry["outcome"], "checked", "{report}");
        }
    }
    assert_eq!(
        plugin.runs(),
        1,
        "one plugin run for the Rancher and its clusters"
    );
}

/// Over HTTP/2 Rancher resets one stream when a cluster's answer breaks off (Go's reverse
/// proxy aborts the handler): that cluster is unreachable in those words, and the others,
/// whose requests share the connection, are checked.
#[test]
fn a_stream_reset_fails_one_cluster_not_the_shared_connection() {
    let bed = bed(RancherProxy::start(), &IDS);
    bed.proxy.set_fault("c-m-2", Fault::ResetMidBody);
    let plugin = ExecPlugin::new(Mode::Token(RANCHER_TOKEN.into()));
    let out = leases_through_rancher(&bed, &plugin, &[]);
    only_unreachable(
        &out,
        "c-m-2",
        "broke off its answer (HTTP/2 RST_STREAM INTERNAL_ERROR)",
    );
    assert!(bed.proxy.handshakes() <= 2, "{}", bed.proxy.handshakes());
}

/// An answer that stalls mid-body on the shared HTTP/2 connection, which the pings and the
/// other clusters' answers keep busy, still fails at `--request-timeout`: each request keeps
/// its own.
#[test]
fn a_stalled_answer_fails_at_the_request_timeout_on_a_shared_connection() {
    let bed = bed(RancherProxy::start(), &IDS);
    bed.proxy.set_fault("c-m-3", Fault::StallMidBody);
    let plugin = ExecPlugin::new(Mode::Token(RANCHER_TOKEN.into()));
    let out = leases_through_rancher(&bed, &plugin, &["--request-timeout", "3s"]);
    only_unreachable(&out, "c-m-3", "within the request timeout");
    assert!(bed.proxy.handshakes() <= 2, "{}", bed.proxy.handshakes());
}

/// The fleet exits 3 with `cluster` unreachable, its error saying `words`, and every other
/// cluster checked.
fn only_unreachable(out: &Output, cluster: &str, words: &str) {
    out.code(3);
    let report: Value = out.json();
    let entries = report["entries"].as_array().unwrap();
    assert_eq!(entries.len(), IDS.len(), "{report}");
    for entry in entries {
        if entry["context"] == cluster {
            assert_eq!(entry["outcome"], "unreachable", "{report}");
            let error = entry["error"].as_str().unwrap();
            assert!(error.contains(words), "{error}");
        } else {
            assert_eq!(entry["outcome"], "checked", "{report}");
        }
    }
}

/// `leases --rancher-clusters --parallel 2 --cluster-timeout 2s -o json ARGS` as the Rancher
/// context whose exec plugin is `plugin`.
fn leases_through_rancher(bed: &Bed, plugin: &ExecPlugin, args: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let config = bed.proxy.local_kubeconfig(dir.path(), plugin);
    let fleet = [
        "leases",
        "--rancher-clusters",
        "--parallel",
        "2",
        "--cluster-timeout",
        "2s",
        "-o",
        "json",
    ];
    k3sdoctor(fleet.iter().chain(args))
        .kubeconfig(&config)
        .spawn()
        .exit_within(ENDS)
        .expect("the fleet ends at the cluster timeout")
}

#[test]
fn cluster_timeout_needs_rancher_clusters() {
    for args in [
        &["check", "--all-contexts", "--cluster-timeout", "5s"][..],
        &["leases", "--cluster-timeout", "5s"][..],
    ] {
        k3sdoctor(args)
            .run()
            .code(2)
            .one_line_error()
            .stderr_has("--cluster-timeout bounds the clusters read through Rancher");
    }
}
