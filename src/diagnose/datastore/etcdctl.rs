//! The etcdctl commands a finding's fix gives, as each product lets an operator run them on a
//! server: k3s ships no etcdctl (it is installed beside it) and reads its own member's
//! certificates; RKE2's etcd static Pod carries etcdctl, run through `kubectl exec`.

use crate::distro::Distro;

/// `etcdctl` with the endpoint and certificates of `node`'s member, ready for a subcommand.
pub(crate) fn etcdctl(distro: Distro, node: Option<&str>) -> String {
    let tls = format!("/var/lib/rancher/{}/server/tls/etcd", distro.prog());
    match distro {
        Distro::K3s => format!(
            "ETCDCTL_API=3 etcdctl --endpoints https://127.0.0.1:2379 --cacert {tls}/server-ca.crt \
             --cert {tls}/client.crt --key {tls}/client.key"
        ),
        Distro::Rke2 => format!(
            "kubectl -n kube-system exec etcd-{} -- etcdctl --cacert {tls}/server-ca.crt --cert \
             {tls}/server-client.crt --key {tls}/server-client.key",
            node.unwrap_or("<node>")
        ),
    }
}

/// On the member's server: compact to the current revision and defragment, which gives the
/// file's free pages back (a defrag blocks that member's reads and writes while it runs).
pub(super) fn compact_and_defrag(distro: Distro, node: Option<&str>) -> String {
    let etcdctl = etcdctl(distro, node);
    format!(
        "on {}: rev=$({etcdctl} endpoint status --write-out json | grep -o '\"revision\":[0-9]*' | cut -d: -f2); \
         {etcdctl} compact $rev; {etcdctl} defrag",
        node.unwrap_or("each server")
    )
}
