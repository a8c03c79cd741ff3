use super::*;

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
    let endpoints = state.kubernetes_endpoints.unwrap();
    assert_eq!(endpoints.len(), 1);
    assert_eq!(endpoints[0].ready_ips().collect::<Vec<_>>(), ["10.0.0.1"]);
    let slices = state.kubernetes_endpoint_slices.unwrap();
    assert_eq!(slices.len(), 1);
    assert_eq!(slices[0].name, "kubernetes");
    let without = dir.path().join("nodes.yaml");
    std::fs::write(
        &without,
        "apiVersion: v1\nkind: Node\nmetadata: {name: s1}\n",
    )
    .unwrap();
    let state = read_dump(&[without], BundleLimits::default()).unwrap();
    assert!(state.kubernetes_endpoints.is_none() && state.kubernetes_endpoint_slices.is_none());
}
