use std::time::Duration;

use super::*;

#[test]
fn quiet_watches_end_before_the_read_timeout_would_fail_them() {
    assert_eq!(watch_timeout(Some(Duration::from_secs(30))), 25);
    assert_eq!(watch_timeout(Some(Duration::from_secs(3))), 1);
    assert_eq!(watch_timeout(Some(Duration::from_secs(3600))), 290);
    assert_eq!(watch_timeout(None), 290);
}

#[test]
fn the_snapshot_scope_adds_the_snapshot_configmaps_of_every_distro_in_scope() {
    let scope = WatchScope {
        distros: vec![Distro::K3s],
        snapshots: false,
    };
    assert_eq!(configmap_names(&scope), ["k3s", "k3s-etcd"]);
    let scope = WatchScope {
        distros: Distro::ALL.to_vec(),
        snapshots: true,
    };
    assert_eq!(
        configmap_names(&scope),
        [
            "k3s",
            "k3s-etcd",
            "k3s-etcd-snapshots",
            "k3s-etcd-snapshot-extra-metadata",
            "rke2",
            "rke2-etcd",
            "rke2-etcd-snapshots",
            "rke2-etcd-snapshot-extra-metadata"
        ]
    );
}
