//! Smoke tests of the Rancher test bed itself (tests/support/rancher), not of k3sdoctor: the
//! proxy routes, rewrites tokens, answers as Rancher for unknown and disconnected clusters,
//! records every request and cuts bodies on demand; the records oracle's objects fit the CRD.
//! Each bed costs two apiservers, so the bed tests are few and broad (the oracles' own tests
//! need no cluster: rancher_records.rs).

use std::time::Duration;

use serde_json::json;

use crate::support::envtest::User;
use crate::support::envtest::servers::SimCluster;
use crate::support::harness::k3sdoctor;
use crate::support::rancher::Fault;
use crate::support::rancher::bed::{CLUSTER, CLUSTER_ID, GONE_ID, RancherBed, WORKSPACE};
use crate::support::rancher::client::RancherClient;
use crate::support::rancher::records::{self, Rancher, SNAPSHOT_NAME};
use crate::support::wait::wait_for;

/// A first snapshot round (every 20 s in the bed's sims) with room for a busy CI machine.
const FIRST_SNAPSHOT: Duration = Duration::from_secs(150);
const RESPONSE: Duration = Duration::from_secs(60);

#[test]
fn bed_routes_each_cluster_through_rancher_paths_and_records_every_request() {
    let Some(bed) = RancherBed::start("rancher bed routes", "v2.11.4") else {
        return;
    };
    let cluster = SimCluster::start(bed.downstream(), "k3s", "v1.29.4+k3s1", 1, &[]);
    let node = cluster.servers[0].node.clone();
    let machines = bed.add_machines_for_nodes();
    assert_eq!(machines.len(), 1, "one Machine for {node}: {machines:?}");
    // Rancher 2.10's records are filled from the ConfigMap, which the sim's controller writes a
    // moment after the ETCDSnapshotFile: wait for both, or the oracle sees the entry missing.
    let down = bed.downstream().admin();
    assert!(
        wait_for(FIRST_SNAPSHOT, || {
            let files = down.snapshot_files().len();
            files > 0 && down.configmap_data("k3s-etcd-snapshots").len() >= files
        }),
        "no ETCDSnapshotFile reached the ConfigMap downstream"
    );
    let written = bed.write_snapshot_records("k3s");
    assert!(!written.is_empty());

    let client = RancherClient::new(bed.proxy());
    let admin = bed.rancher_token(User::Admin);
    let list = client.get(
        admin,
        &format!("/k8s/clusters/local/apis/rke.cattle.io/v1/namespaces/{WORKSPACE}/etcdsnapshots?labelSelector=rke.cattle.io/cluster-name={CLUSTER}"),
    );
    assert_eq!(list.status, 200, "{}", list.text());
    let listed = list.json();
    let mut names: Vec<&str> = listed["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|o| o["metadata"]["name"].as_str())
        .collect();
    names.sort();
    let mut expected: Vec<&str> = written.iter().map(|r| r.name()).collect();
    expected.sort();
    assert_eq!(names, expected);
    let files = bed.downstream().admin().snapshot_files();
    for item in listed["items"].as_array().expect("items") {
        let esf = item["metadata"]["annotations"][SNAPSHOT_NAME]
            .as_str()
            .expect("2.11 keys");
        assert!(files.iter().any(|f| f["metadata"]["name"] == esf), "{esf}");
        assert_eq!(
            item["metadata"]["labels"][records::NODE_NAME_LABEL],
            json!(node)
        );
        assert_eq!(item["snapshotFile"]["status"], "successful");
        assert!(
            item["snapshotFile"]["size"].as_i64().unwrap_or(0) > 0,
            "{item}"
        );
    }

    // The other lines' records fit the CRD too (each in a namespace of its own).
    for (version, namespace) in [("v2.10.8", "rancher-2-10"), ("v2.14.0", "rancher-2-14")] {
        let rancher = Rancher::parse(version).expect("a version");
        bed.management().admin().create(
            "/api/v1/namespaces",
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}),
        );
        let records = bed.snapshot_records_as("k3s", rancher, namespace);
        assert_eq!(records.len(), written.len(), "{version}: {records:?}");
        records::write(bed.management().admin(), &records);
        for record in &records {
            let stored = bed
                .management()
                .admin()
                .get(&format!(
                    "/apis/rke.cattle.io/v1/namespaces/{namespace}/etcdsnapshots/{}",
                    record.name()
                ))
                .expect("the record was written");
            assert_eq!(
                stored["snapshotFile"], record.object["snapshotFile"],
                "{version}"
            );
            assert_eq!(
                stored["metadata"]["annotations"],
                record.object["metadata"]["annotations"]
            );
        }
    }
    let v210 = bed.snapshot_records_as(
        "k3s",
        Rancher {
            minor: 10,
            patch: 8,
        },
        "rancher-2-10",
    );
    // The sim's ConfigMap has every entry, so 2.10 filled size and status from it.
    assert!(
        v210.iter().all(|r| r.status.is_none()
            && r.object["snapshotFile"]["size"].as_i64().unwrap_or(0) > 0
            && r.object["metadata"]["annotations"][records::RECONCILED] == "true"),
        "{v210:?}"
    );

    let nodes = client.get(admin, &format!("/k8s/clusters/{CLUSTER_ID}/api/v1/nodes"));
    assert_eq!(nodes.status, 200, "{}", nodes.text());
    assert!(nodes.text().contains(&node));

    let gone = client.get(admin, &format!("/k8s/clusters/{GONE_ID}/api/v1/nodes"));
    assert_eq!(
        (gone.status, gone.text().as_str()),
        (500, "cluster agent disconnected")
    );
    let unknown = client.get(admin, "/k8s/clusters/c-m-nothere/api/v1/nodes");
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.json()["Code"]["Code"], "NotFound");
    let anonymous = client.get(
        "kubeconfig-u-someone:wrong",
        "/k8s/clusters/local/api/v1/nodes",
    );
    assert_eq!(anonymous.status, 401);
    // Rancher's token is no token of the apiserver behind it: the proxy must swap it.
    let viewer = client.get(
        bed.rancher_token(User::Viewer),
        "/k8s/clusters/local/api/v1/nodes",
    );
    assert_eq!(
        viewer.status,
        403,
        "authenticated downstream as viewer: {}",
        viewer.text()
    );

    let local = bed.proxy().requests_to("local");
    assert!(
        local
            .iter()
            .all(|r| ["get", "list", "watch"].contains(&r.verb().as_str())),
        "{local:?}"
    );
    assert!(
        local
            .iter()
            .any(|r| r.verb() == "list" && r.path.contains("/etcdsnapshots?")),
        "{local:?}"
    );

    // k3sdoctor through a server URL with a path: every request keeps the prefix, and goes to
    // the downstream cluster or (its Rancher view, reads only) the management cluster.
    bed.proxy().clear_requests();
    let out = k3sdoctor(["check"])
        .kubeconfig(&bed.kubeconfig(User::Admin))
        .run();
    let seen = bed.proxy().requests();
    eprintln!(
        "k3sdoctor check through the proxy: exit {}\n{}\n{}\n{seen:#?}",
        out.code, out.stdout, out.stderr
    );
    assert!(!seen.is_empty(), "k3sdoctor sent nothing through the proxy");
    assert!(
        seen.iter().all(|r| (r.cluster == CLUSTER_ID
            || (r.cluster == "local" && ["get", "list", "watch"].contains(&r.verb().as_str())))
            && !r.path.starts_with("/k8s/")),
        "{seen:#?}"
    );
    assert!(seen.iter().any(|r| r.cluster == CLUSTER_ID), "{seen:#?}");
    assert!([0, 1].contains(&out.code), "{}\n{}", out.stdout, out.stderr);

    // Disconnecting prod's agent: the proxy and the management Cluster both say so.
    let prod_nodes = format!("/k8s/clusters/{CLUSTER_ID}/api/v1/nodes");
    bed.set_prod_connected(false);
    let cut = client.get(admin, &prod_nodes);
    assert_eq!(
        (cut.status, cut.text().as_str()),
        (500, "cluster agent disconnected")
    );
    let management = client.get(
        admin,
        &format!("/k8s/clusters/local/apis/management.cattle.io/v3/clusters/{CLUSTER_ID}"),
    );
    let conditions = management.json()["status"]["conditions"].clone();
    assert!(
        conditions
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Connected" && c["status"] == "False"),
        "{conditions}"
    );
    bed.set_prod_connected(true);
    assert_eq!(client.get(admin, &prod_nodes).status, 200);
}

#[test]
fn bed_faults_cut_bodies_and_watches_stream() {
    let Some(bed) = RancherBed::start("rancher bed faults", "v2.14.0") else {
        return;
    };
    let client = RancherClient::new(bed.proxy());
    let token = bed.rancher_token(User::Admin);
    let crds = "/k8s/clusters/local/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let whole = client.get(token, crds);
    assert_eq!(whole.status, 200);
    let count = whole.json()["items"].as_array().map_or(0, Vec::len);
    assert!(count >= 7, "{count} CRDs");

    bed.proxy().set_fault("local", Fault::ResetMidBody);
    let reset = client.get(token, crds);
    assert_eq!(reset.status, 200, "the head goes out before the reset");
    // A RST, not a FIN: the client's read fails with ECONNRESET, not an early end of body.
    assert!(
        matches!(&reset.done, Some(Err(e)) if e.contains("ConnectionReset")),
        "{:?}",
        reset.done
    );
    assert!(
        !reset.body.is_empty() && reset.body.len() < whole.body.len(),
        "{} bytes",
        reset.body.len()
    );

    bed.proxy().set_fault("local", Fault::StallMidBody);
    let stalled = client.start_get(token, crds);
    let part = stalled.until(RESPONSE, |s| s.status == 200 && !s.body.is_empty());
    // The stall holds until the switch flips, so this is no race.
    assert!(
        part.done.is_none() && part.body.len() < whole.body.len(),
        "{:?}",
        part.done
    );
    bed.proxy().set_fault("local", Fault::Pass);
    let resumed = stalled.finished(RESPONSE);
    assert_eq!(resumed.done, Some(Ok(())));
    assert_eq!(
        resumed.json()["items"].as_array().map_or(0, Vec::len),
        count
    );

    let watch = client.start_get(
        token,
        "/k8s/clusters/local/api/v1/namespaces?watch=true&timeoutSeconds=60",
    );
    let events = watch.until(RESPONSE, |s| {
        s.text().contains(&format!("\"name\":\"{WORKSPACE}\""))
    });
    assert!(events.done.is_none(), "the watch streams before it ends");
    let records = bed.proxy().requests_to("local");
    assert!(
        records
            .iter()
            .any(|r| r.watch && r.verb() == "watch" && r.status == 200),
        "{records:?}"
    );
}
