//! k3s and RKE2 share one code base; every object name k3sdoctor reads is built from
//! `version.Program` (`k3s` or `rke2`). Keeping the derivations here means no other file
//! spells a name by hand.

use serde::Serialize;

/// Which product runs the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Distro {
    K3s,
    Rke2,
}

/// Namespace of every k3s/RKE2 leader lock (wrangler `leader.RunOrDie` with an empty namespace).
pub(crate) const LOCK_NAMESPACE: &str = "kube-system";

impl Distro {
    pub(crate) const ALL: [Distro; 2] = [Distro::K3s, Distro::Rke2];

    /// `version.Program`.
    pub(crate) fn prog(self) -> &'static str {
        match self {
            Distro::K3s => "k3s",
            Distro::Rke2 => "rke2",
        }
    }

    /// Display name used in messages.
    pub(crate) fn product(self) -> &'static str {
        match self {
            Distro::K3s => "K3s",
            Distro::Rke2 => "RKE2",
        }
    }

    /// Lease of the core leader-elected controllers (`pkg/server/server.go`).
    pub(crate) fn core_lock(self) -> String {
        self.prog().to_string()
    }

    /// Lease of the managed-etcd controllers (`pkg/etcd/etcd.go` `Register`).
    pub(crate) fn etcd_lock(self) -> String {
        format!("{}-etcd", self.prog())
    }

    /// Lease of the embedded cloud controller manager (`pkg/daemons/control/server.go`).
    pub(crate) fn cloud_controller_lock(self) -> String {
        format!("{}-cloud-controller-manager", self.prog())
    }

    /// Node annotation carrying `os.Hostname()` of the node (`pkg/cloudprovider/instances.go`).
    pub(crate) fn hostname_annotation(self) -> String {
        format!("{}.io/hostname", self.prog())
    }

    /// ConfigMap the snapshot controller keeps for Rancher (`pkg/etcd/snapshot_controller.go`).
    pub(crate) fn snapshots_configmap(self) -> String {
        format!("{}-etcd-snapshots", self.prog())
    }

    /// ConfigMap whose data is copied into every new snapshot's metadata (`pkg/etcd/snapshot.go`).
    pub(crate) fn extra_metadata_configmap(self) -> String {
        format!("{}-etcd-snapshot-extra-metadata", self.prog())
    }

    /// What the name of every node password Secret in kube-system ends with: it holds the
    /// hash of a node's password, made when the node first asks for its certificates
    /// (`pkg/nodepassword`, `getSecretName`: `<node>.node-password.<prog>`).
    pub(crate) fn node_password_suffix(self) -> String {
        format!(".node-password.{}", self.prog())
    }

    /// The apiserver's serving certificate, a TLS Secret dynamiclistener keeps.
    pub(crate) fn serving_secret(self) -> String {
        format!("{}-serving", self.prog())
    }

    /// Prefix of the etcd-related node annotations (`pkg/etcd/etcd.go`).
    pub(crate) fn etcd_annotation(self, suffix: &str) -> String {
        format!("etcd.{}.cattle.io/{}", self.prog(), suffix)
    }

    /// Name of the service unit that restarts the server process after a lost lease.
    pub(crate) fn server_unit(self) -> &'static str {
        match self {
            Distro::K3s => "k3s",
            Distro::Rke2 => "rke2-server",
        }
    }

    /// Where the product writes its admin kubeconfig; only ever named in hints, never read.
    pub(crate) fn default_kubeconfig(self) -> &'static str {
        match self {
            Distro::K3s => "/etc/rancher/k3s/k3s.yaml",
            Distro::Rke2 => "/etc/rancher/rke2/rke2.yaml",
        }
    }

    /// The distro a lease name belongs to, if it is one of the two k3s/RKE2 locks.
    pub(crate) fn owning_lock(name: &str) -> Option<Distro> {
        Distro::ALL
            .into_iter()
            .find(|d| name == d.core_lock() || name == d.etcd_lock())
    }
}

impl std::fmt::Display for Distro {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.prog())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rke2_names_follow_the_program_name() {
        let d = Distro::Rke2;
        assert_eq!(d.core_lock(), "rke2");
        assert_eq!(d.etcd_lock(), "rke2-etcd");
        assert_eq!(d.hostname_annotation(), "rke2.io/hostname");
        assert_eq!(d.snapshots_configmap(), "rke2-etcd-snapshots");
        assert_eq!(d.etcd_annotation("remove"), "etcd.rke2.cattle.io/remove");
        assert_eq!(d.cloud_controller_lock(), "rke2-cloud-controller-manager");
    }

    #[test]
    fn lock_names_identify_the_distro() {
        assert_eq!(Distro::owning_lock("k3s-etcd"), Some(Distro::K3s));
        assert_eq!(Distro::owning_lock("rke2"), Some(Distro::Rke2));
        assert_eq!(Distro::owning_lock("kube-scheduler"), None);
    }
}
