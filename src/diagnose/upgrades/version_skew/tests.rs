use super::*;
use crate::diagnose::test_cluster::TestCluster;

fn skew(cluster: TestCluster) -> Vec<Finding> {
    analyse_version_skew(cluster.build().nodes())
}

#[test]
fn one_minor_between_servers_is_not_a_breach() {
    let found = skew(
        TestCluster::k3s()
            .server("s1", "v1.32.9+k3s1")
            .server("s2", "v1.33.5+k3s1")
            .agent("a1", "v1.32.9+k3s1"),
    );
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn servers_two_minors_apart_are_one_error() {
    let found = skew(
        TestCluster::k3s()
            .server("s1", "v1.31.9+k3s1")
            .server("s2", "v1.33.5+k3s1"),
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(
        (found[0].severity, found[0].object.as_str()),
        (Severity::Error, "cluster")
    );
    assert!(
        found[0].message.contains("2 minors apart (1.31 to 1.33)"),
        "{}",
        found[0].message
    );
    assert!(
        found[0]
            .message
            .contains("v1.31.9+k3s1 on s1; v1.33.5+k3s1 on s2")
    );
}

#[test]
fn a_kubelet_newer_than_the_oldest_apiserver_is_an_error() {
    let found = skew(
        TestCluster::k3s()
            .server("s1", "v1.32.9+k3s1")
            .server("s2", "v1.33.5+k3s1")
            .agent("a1", "v1.33.5+k3s1"),
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].object, "Node a1");
    assert!(
        found[0]
            .message
            .contains("newer than the oldest apiserver (1.32)")
    );
    assert!(
        found[0]
            .remediation
            .starts_with("upgrade every server to 1.33")
    );
}

#[test]
fn kubelets_may_trail_three_minors_from_1_28_and_two_before() {
    let trail = |server: &str, agent: &str| {
        skew(TestCluster::k3s().server("s1", server).agent("a1", agent))
    };
    assert!(
        trail("v1.28.2+k3s1", "v1.25.9+k3s1").is_empty(),
        "n-3 from 1.28"
    );
    assert_eq!(trail("v1.28.2+k3s1", "v1.24.9+k3s1").len(), 1);
    let before = trail("v1.27.9+k3s1", "v1.24.9+k3s1");
    assert_eq!(before.len(), 1, "n-2 before 1.28");
    assert!(
        before[0]
            .message
            .contains("3 minors behind the newest apiserver (1.27): the policy allows 2")
    );
    assert!(trail("v1.27.9+k3s1", "v1.25.9+k3s1").is_empty());
    // A kubelet before 1.25 may trail two, whatever the control plane.
    let old = trail("v1.29.1+k3s1", "v1.24.9+k3s1");
    assert!(
        old[0].message.contains("allows 2 for kubelets before 1.25"),
        "{}",
        old[0].message
    );
    assert!(trail("v1.26.1+k3s1", "v1.24.9+k3s1").is_empty());
}

#[test]
fn etcd_only_servers_are_kubelets_and_unparsed_versions_are_skipped() {
    let mut cluster = TestCluster::k3s()
        .server("s1", "v1.30.1+k3s1")
        .agent("e1", "v1.31.1+k3s1")
        .agent("x1", "garbage")
        .build();
    // e1 carries only the etcd role: a kubelet, no apiserver.
    let e1 = cluster
        .nodes
        .as_mut()
        .unwrap()
        .iter_mut()
        .find(|n| n.name == "e1")
        .unwrap();
    e1.labels
        .insert("node-role.kubernetes.io/etcd".into(), "true".into());
    let found = analyse_version_skew(cluster.nodes());
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].object, "Node e1");
    assert!(analyse_version_skew(&[]).is_empty());
}

/// One cause, one finding: servers a minor apart are mixed-versions' warning alone, servers
/// further apart version-skew's error alone.
#[test]
fn mixed_versions_and_version_skew_never_report_one_cause_twice() {
    use crate::diagnose::leases::analyse_leases;
    use crate::diagnose::test_cluster::now;
    use crate::distro::Distro;
    let codes = |a: &str, b: &str| {
        let state = TestCluster::k3s()
            .server("s1", a)
            .server("s2", b)
            .lease("k3s", "s1", 1)
            .lease("k3s-etcd", "s1", 1)
            .build();
        let mut codes: Vec<FindingCode> = analyse_leases(&state, Distro::K3s, now())
            .findings
            .iter()
            .map(|f| f.code)
            .collect();
        codes.extend(analyse_version_skew(state.nodes()).iter().map(|f| f.code));
        codes.retain(|c| matches!(c, FindingCode::MixedVersions | FindingCode::VersionSkew));
        codes
    };
    assert_eq!(
        codes("v1.32.9+k3s1", "v1.33.5+k3s1"),
        [FindingCode::MixedVersions]
    );
    assert_eq!(
        codes("v1.31.9+k3s1", "v1.33.5+k3s1"),
        [FindingCode::VersionSkew]
    );
    assert_eq!(
        codes("v1.33.4+k3s1", "v1.33.5+k3s1"),
        [FindingCode::MixedVersions]
    );
}
