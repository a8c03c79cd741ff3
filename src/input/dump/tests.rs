use super::*;
use crate::diagnose::leases::analyse_leases;
use crate::diagnose::snapshots::{EntryState, SnapshotRow, analyse_snapshots};
use crate::diagnose::test_cluster::now;
use crate::distro::Distro;
use crate::model::collected::Collected;
use crate::model::snapshot_entry::encode_for;

#[test]
fn only_the_kubernetes_services_endpoints_and_slices_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("default.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: List\nitems:\n\
         - apiVersion: v1\n  kind: Endpoints\n  metadata: {name: kubernetes, namespace: default}\n  \
           subsets: [{addresses: [{ip: 10.0.0.1}], ports: [{name: https, port: 6443}]}]\n\
         - apiVersion: v1\n  kind: Endpoints\n  metadata: {name: web, namespace: default}\n\
         - apiVersion: discovery.k8s.io/v1\n  kind: EndpointSlice\n  \
           metadata: {name: kubernetes, namespace: default, labels: {kubernetes.io/service-name: kubernetes}}\n  \
           addressType: IPv4\n  endpoints: [{addresses: [10.0.0.1]}]\n\
         - apiVersion: discovery.k8s.io/v1\n  kind: EndpointSlice\n  \
           metadata: {name: web-x1, namespace: default, labels: {kubernetes.io/service-name: web}}\n  \
           addressType: IPv4\n  endpoints: []\n",
    )
    .unwrap();
    let state = read_dump(std::slice::from_ref(&file), BundleLimits::default()).unwrap();
    let published = state.apiserver_addresses.as_read().unwrap();
    let endpoints = published.endpoints.clone().unwrap();
    assert_eq!(endpoints.len(), 1);
    assert_eq!(endpoints[0].ready_ips().collect::<Vec<_>>(), ["10.0.0.1"]);
    let slices = published.slices.clone().unwrap();
    assert_eq!(slices.len(), 1);
    assert_eq!(slices[0].name, "kubernetes");
    let without = dir.path().join("nodes.yaml");
    std::fs::write(
        &without,
        "apiVersion: v1\nkind: Node\nmetadata: {name: s1}\n",
    )
    .unwrap();
    let state = read_dump(&[without], BundleLimits::default()).unwrap();
    assert_eq!(
        state.apiserver_addresses,
        Collected::NotInDump(
            "not in dump (add `kubectl -n default get endpoints,endpointslices -o yaml`)".into()
        )
    );
}

#[test]
fn only_node_events_are_kept_and_a_dump_without_events_has_none() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("events.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: List\nitems:\n\
         - apiVersion: v1\n  kind: Event\n  metadata: {name: s1.17c, namespace: default}\n  \
           involvedObject: {kind: Node, name: s1, uid: s1}\n  reason: CertificateExpirationWarning\n  \
           type: Warning\n  message: \"Node certificates require attention: x/y.crt: certificate CN=a expired at 2024-05-01T00:00:00Z\"\n  \
           count: 3\n  lastTimestamp: \"2024-05-31T12:00:00Z\"\n  source: {component: k3s-cert-monitor}\n\
         - apiVersion: v1\n  kind: Event\n  metadata: {name: web.17d, namespace: apps}\n  \
           involvedObject: {kind: Pod, name: web, namespace: apps}\n  reason: Pulled\n",
    )
    .unwrap();
    let state = read_dump(std::slice::from_ref(&file), BundleLimits::default()).unwrap();
    let events = state.node_events.as_read().unwrap().clone();
    assert_eq!(events.len(), 1);
    assert_eq!(
        (
            events[0].node.as_str(),
            events[0].count,
            events[0].source.as_str()
        ),
        ("s1", 3, "k3s-cert-monitor")
    );
    assert_eq!(
        events[0].last_seen,
        Some("2024-05-31T12:00:00Z".parse().unwrap())
    );
    let nodes = dir.path().join("nodes.yaml");
    std::fs::write(&nodes, "apiVersion: v1\nkind: Node\nmetadata: {name: s1}\n").unwrap();
    let state = read_dump(&[nodes], BundleLimits::default()).unwrap();
    assert_eq!(
        state.node_events.why_not(),
        Some("not in dump (add `kubectl get events -A -o yaml`)")
    );
}

#[test]
fn helm_charts_and_their_jobs_in_kube_system_are_kept_and_odd_ones_noted() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("charts.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: List\nitems:\n\
         - apiVersion: helm.cattle.io/v1\n  kind: HelmChart\n  metadata: {name: traefik, namespace: kube-system}\n  \
           status: {jobName: helm-install-traefik}\n\
         - apiVersion: helm.cattle.io/v1\n  kind: HelmChart\n  metadata: {name: app, namespace: apps}\n\
         - apiVersion: batch/v1\n  kind: Job\n  \
           metadata: {name: helm-install-traefik, namespace: kube-system, labels: {helmcharts.helm.cattle.io/chart: traefik}}\n  \
           status: {active: 1, startTime: \"2024-05-31T11:00:00Z\"}\n\
         - apiVersion: batch/v1\n  kind: Job\n  metadata: {name: backup, namespace: kube-system}\n",
    )
    .unwrap();
    let state = read_dump(std::slice::from_ref(&file), BundleLimits::default()).unwrap();
    let read = state.packaged_charts.as_read().unwrap();
    let charts = read.charts.clone().unwrap();
    assert_eq!(charts.len(), 1);
    assert_eq!(charts[0].job(), "helm-install-traefik");
    let jobs = read.jobs.clone().unwrap();
    assert_eq!(jobs.len(), 1, "only helm-controller's Jobs are kept");
    assert_eq!(jobs[0].active, 1);
    let nodes = dir.path().join("nodes.yaml");
    std::fs::write(&nodes, "apiVersion: v1\nkind: Node\nmetadata: {name: s1}\n").unwrap();
    let state = read_dump(&[nodes], BundleLimits::default()).unwrap();
    assert_eq!(state.packaged_charts.why_not(), Some("not in dump"));
}

#[test]
fn entries_in_the_bundled_dump_are_byte_identical_to_the_encoder() {
    // The example dump's entries were written by a generator of their own, not this encoder.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/split-cluster");
    let state = read_dump(&[dir], Default::default()).unwrap();
    let leases = analyse_leases(&state, Distro::K3s, now());
    let a = analyse_snapshots(&state, Distro::K3s, now(), &leases);
    let data = &state.configmap("k3s-etcd-snapshots").unwrap().data;
    let present: Vec<&SnapshotRow> = a
        .snapshots
        .iter()
        .filter(|r| r.state == EntryState::Present)
        .collect();
    assert_eq!(present.len(), 2);
    for row in present {
        assert_eq!(
            data[&row.key()],
            encode_for(row.file(), a.s3_shape, a.go_escaping),
            "{}",
            row.key()
        );
    }
}
