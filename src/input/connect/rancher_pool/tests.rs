//! A cluster's route: its path in front of each request's, on the Rancher's origin.

use super::*;

#[test]
fn a_cluster_s_path_goes_in_front_of_the_request_s() {
    let uri: Uri = "/api/v1/namespaces/kube-system/configmaps?limit=500"
        .parse()
        .unwrap();
    assert_eq!(
        routed("/k8s/clusters/c-m-1", &uri).unwrap().to_string(),
        "/k8s/clusters/c-m-1/api/v1/namespaces/kube-system/configmaps?limit=500"
    );
    assert_eq!(
        routed("/rancher/k8s/clusters/local", &"/version".parse().unwrap())
            .unwrap()
            .to_string(),
        "/rancher/k8s/clusters/local/version"
    );
    assert_eq!(
        origin_of("https://h:8443/rancher/k8s/clusters/c-m-1")
            .unwrap()
            .to_string(),
        "https://h:8443/"
    );
    assert!(origin_of("https://10.0.0.1:6443").is_none());
}
