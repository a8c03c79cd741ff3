use super::*;
use crate::diagnose::test_cluster::{TestCluster, now};
use crate::model::apiserver_endpoints::{PublishedAddress, PublishedAddresses};

fn published(kind: EndpointsKind, ips: &[(&str, bool)]) -> ApiserverEndpoints {
    ApiserverEndpoints {
        kind,
        name: "kubernetes".into(),
        addresses: ips
            .iter()
            .map(|(ip, ready)| PublishedAddress {
                ip: ip.to_string(),
                ready: *ready,
            })
            .collect(),
        port: Some(6443),
    }
}

/// Two servers at 10.0.0.1 and 10.0.0.2 on `version`, both objects listing `ips` (ready).
fn cluster(version: &str, ips: &[&str]) -> ClusterState {
    let mut state = TestCluster::k3s()
        .server("s1", version)
        .server("s2", version)
        .lease("k3s", "s1", 1)
        .lease("k3s-etcd", "s1", 1)
        .build();
    for (node, ip) in state
        .nodes
        .as_mut()
        .unwrap()
        .iter_mut()
        .zip(["10.0.0.1", "10.0.0.2"])
    {
        node.addresses = vec![ip.to_string(), node.name.clone()];
    }
    let ready: Vec<(&str, bool)> = ips.iter().map(|ip| (*ip, true)).collect();
    state.apiserver_addresses = Collected::Read(PublishedAddresses {
        endpoints: Some(vec![published(EndpointsKind::Endpoints, &ready)]),
        slices: Some(vec![published(EndpointsKind::EndpointSlice, &ready)]),
    });
    state
}

fn findings(state: &ClusterState) -> Vec<Finding> {
    analyse_apiserver_endpoints(state, Distro::K3s, now())
}

#[test]
fn an_address_of_no_server_fires_on_both_objects() {
    let found = findings(&cluster(
        "v1.34.2+k3s1",
        &["10.0.0.1", "10.0.0.2", "192.168.68.59"],
    ));
    assert_eq!(found.len(), 2, "{found:#?}");
    let objects: Vec<&str> = found.iter().map(|f| f.object.as_str()).collect();
    assert_eq!(
        objects,
        [
            "Endpoints default/kubernetes",
            "EndpointSlice default/kubernetes"
        ]
    );
    for f in &found {
        assert_eq!(f.code, FindingCode::ApiserverEndpointStale);
        assert_eq!(f.severity, Severity::Warning);
        assert!(
            f.message
                .contains("lists 192.168.68.59 that no server Node has"),
            "{}",
            f.message
        );
        assert!(
            f.remediation
                .contains("del /registry/masterleases/192.168.68.59")
        );
        assert!(f.remediation_command.is_empty(), "advice, not one command");
    }
    let slice = &found[1];
    assert_eq!(slice.object_refs[0].api_version, "discovery.k8s.io/v1");
    assert!(
        slice
            .message
            .contains("v1.34.2+k3s1 copies this EndpointSlice into the k3s/apiaddresses etcd key,"),
        "{}",
        slice.message
    );
    assert!(
        found[0]
            .message
            .contains("follows the EndpointSlice instead, not this Endpoints"),
        "{}",
        found[0].message
    );
}

#[test]
fn current_server_addresses_do_not_fire() {
    assert!(findings(&cluster("v1.34.2+k3s1", &["10.0.0.1", "10.0.0.2"])).is_empty());
    assert!(findings(&cluster("v1.34.2+k3s1", &[])).is_empty());
}

#[test]
fn a_not_ready_address_is_not_passed_on_so_it_does_not_fire() {
    let mut state = cluster("v1.34.2+k3s1", &["10.0.0.1"]);
    state.apiserver_addresses = Collected::Read(PublishedAddresses {
        endpoints: Some(vec![published(
            EndpointsKind::Endpoints,
            &[("10.0.0.1", true), ("10.9.9.9", false)],
        )]),
        slices: None,
    });
    assert!(findings(&state).is_empty());
}

#[test]
fn addresses_known_only_from_annotations_count() {
    let mut state = cluster(
        "v1.32.5+k3s1",
        &["10.0.0.1", "10.0.0.2", "172.16.0.5", "fd00::5"],
    );
    let s2 = &mut state.nodes.as_mut().unwrap()[1];
    s2.annotations
        .insert("k3s.io/internal-ip".into(), "172.16.0.5,fd00::5".into());
    assert!(findings(&state).is_empty());
    // The same IPv6 address spelt differently is the same address.
    let mut state = cluster("v1.32.5+k3s1", &["10.0.0.1", "fd00:0:0::5"]);
    state.nodes.as_mut().unwrap()[1]
        .addresses
        .push("fd00::5".into());
    assert!(findings(&state).is_empty());
    let mut state = cluster("v1.32.5+k3s1", &["10.0.0.1", "10.0.0.7"]);
    state.nodes.as_mut().unwrap()[1]
        .annotations
        .insert("etcd.k3s.cattle.io/node-address".into(), "10.0.0.7".into());
    assert!(findings(&state).is_empty());
}

#[test]
fn which_object_k3s_follows_changes_at_1_33_and_1_33_is_inferred() {
    let on = |version: &str| findings(&cluster(version, &["10.0.0.1", "10.0.0.9"]));
    let old = on("v1.32.13+k3s1");
    assert!(
        old[0]
            .message
            .contains("v1.32.13+k3s1 copies this Endpoints into"),
        "{}",
        old[0].message
    );
    assert!(
        old[1]
            .message
            .contains("follows the Endpoints instead, not this EndpointSlice")
    );
    assert!(!old[0].message.contains("(inferred)"));
    let boundary = on("v1.33.1+k3s1");
    assert!(
        boundary[1]
            .message
            .contains("copies this EndpointSlice into the k3s/apiaddresses etcd key (inferred)"),
        "{}",
        boundary[1].message
    );
    let newer = on("v1.34.0+k3s1");
    assert!(!newer[1].message.contains("key (inferred)"));
}

#[test]
fn the_etcd_holders_version_decides_during_an_upgrade() {
    let mut state = cluster("v1.32.13+k3s1", &["10.0.0.1", "10.0.0.9"]);
    let s2 = &mut state.nodes.as_mut().unwrap()[1];
    s2.version = ProductVersion::parse("v1.33.6+k3s1").ok();
    // k3s-etcd is held by s1, still on 1.32: it follows the Endpoints.
    assert!(
        findings(&state)[0]
            .message
            .contains("v1.32.13+k3s1 copies this Endpoints")
    );
    let state = {
        let mut s = state.clone();
        s.leases = TestCluster::k3s().lease("k3s-etcd", "s2", 1).build().leases;
        s
    };
    assert!(
        findings(&state)[1]
            .message
            .contains("v1.33.6+k3s1 copies this EndpointSlice")
    );
}

#[test]
fn more_addresses_than_live_apiservers_is_said() {
    let mut state = cluster("v1.36.3+k3s1", &["10.0.0.1", "192.168.68.59"]);
    state.nodes.as_mut().unwrap().truncate(1);
    let identity = TestCluster::k3s().apiserver_identity("s1", 5).build();
    state
        .leases
        .as_mut()
        .unwrap()
        .extend(identity.leases.unwrap());
    let found = findings(&state);
    assert!(
        found[0]
            .message
            .contains("it lists 2 addresses but only 1 kube-apiserver(s) renew an identity Lease"),
        "{}",
        found[0].message
    );
}

#[test]
fn a_server_without_a_node_lowers_it_to_info() {
    let mut state = cluster("v1.34.2+k3s1", &["10.0.0.1", "10.0.0.3"]);
    let identity = TestCluster::k3s()
        .apiserver_identity("cp-agentless", 5)
        .build();
    state
        .leases
        .as_mut()
        .unwrap()
        .extend(identity.leases.unwrap());
    let found = findings(&state);
    assert_eq!(found[0].severity, Severity::Info);
    assert!(found[0].message.contains("may belong to cp-agentless"));
    // An identity Lease that expired long ago is no live server.
    let mut state = cluster("v1.34.2+k3s1", &["10.0.0.1", "10.0.0.3"]);
    let gone = TestCluster::k3s()
        .apiserver_identity("cp-agentless", 7200)
        .build();
    state.leases.as_mut().unwrap().extend(gone.leases.unwrap());
    assert_eq!(findings(&state)[0].severity, Severity::Warning);
}

#[test]
fn unread_objects_are_not_checked_and_say_why() {
    let mut state = cluster("v1.34.2+k3s1", &["10.0.0.9"]);
    state.apiserver_addresses = Collected::NotAsked;
    assert_eq!(not_checked(&state).as_deref(), Some("not read"));
    assert!(findings(&state).is_empty());
    state.apiserver_addresses = Collected::Refused(
        "the API server refused to get endpoints default/kubernetes (403)".into(),
    );
    assert!(
        not_checked(&state)
            .unwrap()
            .starts_with("the API server refused")
    );
    state.apiserver_addresses = Collected::NotInDump("not in dump (add …)".into());
    assert!(not_checked(&state).unwrap().starts_with("not in dump"));
    assert!(findings(&state).is_empty());
    // Only one of the two read: judged on that one.
    let mut state = cluster("v1.34.2+k3s1", &["10.0.0.9"]);
    if let Collected::Read(published) = &mut state.apiserver_addresses {
        published.endpoints = None;
    }
    assert!(not_checked(&state).is_none());
    assert_eq!(findings(&state).len(), 1);
}
