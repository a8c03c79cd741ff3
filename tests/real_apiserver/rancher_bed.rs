//! Smoke tests of the Rancher test bed itself (tests/support/rancher), not of k3sdoctor: the
//! proxy routes, rewrites tokens, answers as Rancher for unknown and disconnected clusters,
//! records every request and cuts bodies on demand; the records oracle names objects as
//! Rancher does. Each bed costs two apiservers, so the bed tests are few and broad.

use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};

use crate::support::envtest::User;
use crate::support::envtest::servers::SimCluster;
use crate::support::harness::k3sdoctor;
use crate::support::rancher::Fault;
use crate::support::rancher::bed::{CLUSTER, CLUSTER_ID, GONE_ID, RancherBed, WORKSPACE};
use crate::support::rancher::client::RancherClient;
use crate::support::rancher::proxy::RequestRecord;
use crate::support::rancher::records::{
    self, Rancher, SNAPSHOT_NAME, metadata_base64, quantity_i64, restore_modes, safe_concat_name,
    safe_snapshot_name, sanitized,
};
use crate::support::wait::wait_for;

/// A first snapshot round (every 20 s in the bed's sims) with room for a busy CI machine.
const FIRST_SNAPSHOT: Duration = Duration::from_secs(150);
const RESPONSE: Duration = Duration::from_secs(60);

#[test]
fn safe_concat_name_keeps_short_names_and_cuts_long_ones_as_wrangler_does() {
    // Expected values computed independently (Python hashlib) from wrangler's rule.
    let file = "etcd-snapshot-ip-10-0-0-11-1796110945";
    assert_eq!(
        safe_concat_name(&["prod", file, "local"]),
        "prod-etcd-snapshot-ip-10-0-0-11-1796110945-local"
    );
    // 70 characters, the 57th a digit: cut at 57 plus 5 hex.
    let long = "etcd-snapshot-server-with-a-rather-long-hostname-1796110945";
    let name = safe_concat_name(&["prod", long, "local"]);
    assert_eq!(
        name,
        "prod-etcd-snapshot-server-with-a-rather-long-hostname-179-21746"
    );
    assert_eq!(name.len(), 63);
    // The 57th a '-': cut at 56 plus 6 hex, so the name does not end in "--".
    let dash = format!("etcd-snapshot-{}-1796110945", "a".repeat(37));
    assert_eq!(
        safe_concat_name(&["prod", &dash, "local"]),
        "prod-etcd-snapshot-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-57a6a2"
    );
    // 63 characters exactly stay whole; 64 are cut.
    let exact = "a".repeat(63);
    assert_eq!(safe_concat_name(&[&exact]), exact);
    assert_eq!(safe_concat_name(&[&"a".repeat(64)]).len(), 63);
}

#[test]
fn snapshot_record_names_follow_each_rancher_line() {
    assert_eq!(
        sanitized("etcd-snapshot_Node 1.zip"),
        "etcd-snapshot-node-1.zip"
    );
    let file = "etcd-snapshot-ip-10-0-0-11-1796110945";
    let location = format!("file:///var/lib/rancher/k3s/server/db/snapshots/{file}");
    let base = safe_snapshot_name(file, "ip-10-0-0-11", &location, false, 1796110945);
    assert_eq!(
        safe_concat_name(&["prod", &base]),
        "prod-local-etcd-snapshot-ip-10-0-0-11-1796110945-6fd1e5"
    );
    // Not a DNS-1123 subdomain: 2.14 names it after the node's short name and the time.
    let weird = "etcd_snapshot_weird";
    let base = safe_snapshot_name(
        weird,
        "ip-10-0-0-11.example.com",
        &format!("file:///x/{weird}"),
        false,
        1796110945,
    );
    assert_eq!(
        safe_concat_name(&["prod", &base]),
        "prod-local-etcd-snapshot-ip-10-0-0-11-1796110945-83b89c"
    );
    assert_eq!(
        Rancher::parse("v2.10.3"),
        Some(Rancher {
            minor: 10,
            patch: 3
        })
    );
    assert_eq!(
        Rancher::parse("v2.11.2-rc1"),
        Some(Rancher {
            minor: 11,
            patch: 2
        })
    );
    assert_eq!(Rancher::parse("v3.0.0"), None);
    assert!(
        !Rancher {
            minor: 10,
            patch: 3
        }
        .lowercases_node_names()
    );
    assert!(
        Rancher {
            minor: 10,
            patch: 4
        }
        .lowercases_node_names()
    );
}

#[test]
fn snapshot_file_fields_map_as_rancher_maps_them() {
    assert_eq!(metadata_base64(&Value::Null), "bnVsbA==");
    let meta = json!({"b": "<x>", "a": "1"});
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(metadata_base64(&meta))
        .expect("base64");
    assert_eq!(
        String::from_utf8_lossy(&decoded),
        r#"{"a":"1","b":"\u003cx\u003e"}"#
    );
    assert_eq!(quantity_i64("6160230"), Some(6160230));
    assert_eq!(quantity_i64("6077k"), Some(6077000));
    assert_eq!(quantity_i64("5Mi"), Some(5 << 20));
    assert_eq!(quantity_i64("1.5Gi"), None);
    // The sim's extra-metadata payload is a truncated gzip stream: Rancher offers only "none".
    let sim = json!({"provisioning-cluster-spec": "H4sIAAAAAAAA/6pWSs7PS8tMB9GpxcWZ+XlKVkq5iXmZSgq1AAAAAP//AQAA//8="});
    assert_eq!(restore_modes(&sim), "none");
    assert_eq!(restore_modes(&Value::Null), "none");
    let spec = |json: &str| {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(json.as_bytes()).expect("gzip");
        let b64 = base64::engine::general_purpose::STANDARD.encode(gz.finish().expect("gzip"));
        json!({"provisioning-cluster-spec": b64})
    };
    assert_eq!(
        restore_modes(&spec(r#"{"kubernetesVersion":"v1.29.4+k3s1"}"#)),
        "none,kubernetesVersion"
    );
    assert_eq!(
        restore_modes(&spec(
            r#"{"kubernetesVersion":"v1.29.4+k3s1","rkeConfig":{}}"#
        )),
        "none,kubernetesVersion,all"
    );
}

#[test]
fn bed_routes_each_cluster_through_rancher_paths_and_records_every_request() {
    let Some(bed) = RancherBed::start("rancher bed routes", "v2.11.4") else {
        return;
    };
    let cluster = SimCluster::start(bed.downstream(), "k3s", "v1.29.4+k3s1", 1, &[]);
    let node = cluster.servers[0].node.clone();
    let machines = bed.add_machines_for_nodes();
    assert_eq!(machines.len(), 1, "one Machine for {node}: {machines:?}");
    assert!(
        wait_for(FIRST_SNAPSHOT, || !bed
            .downstream()
            .admin()
            .snapshot_files()
            .is_empty()),
        "no ETCDSnapshotFile appeared downstream"
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

    // Today's k3sdoctor through a server URL with a path: every request keeps the prefix.
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
        seen.iter()
            .all(|r| r.cluster == CLUSTER_ID && !r.path.starts_with("/k8s/")),
        "{seen:#?}"
    );
    assert!([0, 1].contains(&out.code), "{}\n{}", out.stdout, out.stderr);
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

#[test]
fn request_records_tell_get_from_list_and_watch() {
    let verb = |method: &str, path: &str, watch: bool| {
        RequestRecord {
            cluster: "local".into(),
            method: method.into(),
            path: path.into(),
            watch,
            status: 200,
        }
        .verb()
    };
    let v3 = "/apis/management.cattle.io/v3";
    assert_eq!(
        verb("GET", &format!("{v3}/settings/server-version"), false),
        "get"
    );
    assert_eq!(verb("GET", &format!("{v3}/clusters"), false), "list");
    assert_eq!(
        verb(
            "GET",
            "/apis/rke.cattle.io/v1/namespaces/fleet-default/etcdsnapshots?labelSelector=a%3Db",
            false
        ),
        "list"
    );
    assert_eq!(
        verb(
            "GET",
            "/apis/rke.cattle.io/v1/namespaces/fleet-default/rkecontrolplanes/prod",
            false
        ),
        "get"
    );
    assert_eq!(
        verb("GET", "/api/v1/namespaces/fleet-default", false),
        "get"
    );
    assert_eq!(verb("GET", "/api/v1/namespaces", false), "list");
    assert_eq!(verb("GET", "/api/v1/nodes?watch=true", true), "watch");
    assert_eq!(verb("PATCH", "/api/v1/nodes/a", false), "patch");
}
