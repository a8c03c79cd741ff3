//! A Lease in kube-system: an election lock or an apiserver identity lease.

use std::collections::BTreeMap;

use k8s_openapi::api::coordination::v1::Lease;

use super::lock::{APISERVER_IDENTITY_LABEL, LockRecord};

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LeaseFacts {
    pub name: String,
    pub namespace: String,
    pub resource_version: Option<String>,
    pub labels: BTreeMap<String, String>,
    pub record: LockRecord,
}

impl LeaseFacts {
    pub(crate) fn from_api(lease: &Lease) -> LeaseFacts {
        LeaseFacts {
            name: lease.metadata.name.clone().unwrap_or_default(),
            namespace: lease.metadata.namespace.clone().unwrap_or_default(),
            resource_version: lease.metadata.resource_version.clone(),
            labels: lease.metadata.labels.clone().unwrap_or_default(),
            record: LockRecord::from_lease(lease),
        }
    }

    /// Whether `new` is this lease renewed by the same holder and nothing else: what an
    /// elector writes every retry period (2 s for k3s), and an apiserver identity lease every
    /// 10 s.
    pub(crate) fn renewed_only(&self, new: &LeaseFacts) -> bool {
        let comparable = |l: &LeaseFacts| LeaseFacts {
            resource_version: None,
            record: l.record.without_renewal(),
            ..l.clone()
        };
        comparable(self) == comparable(new)
    }

    /// One lease per apiserver (`apiserver-<hash>` from Kubernetes 1.27, `kube-apiserver-<hash>`
    /// labelled `k8s.io/component=kube-apiserver` in 1.26): a heartbeat, not an election, so never
    /// a problem to report (kubernetes/kubernetes#114586).
    pub(crate) fn is_apiserver_identity(&self) -> bool {
        self.labels.contains_key(APISERVER_IDENTITY_LABEL)
            || self.labels.get("k8s.io/component").map(String::as_str) == Some("kube-apiserver")
    }

    /// The OS hostname of the kube-apiserver behind an identity lease: its `kubernetes.io/hostname`
    /// label ("convenience label to easily map a lease object to a specific apiserver",
    /// `labelAPIServerHeartbeatFunc` in pkg/controlplane; on 1.27+ clusters, not on 1.24's UUID
    /// leases). A k3s server's apiserver runs in its process, so this is its election identity.
    pub(crate) fn apiserver_hostname(&self) -> Option<&str> {
        if !self.is_apiserver_identity() {
            return None;
        }
        self.labels
            .get("kubernetes.io/hostname")
            .map(String::as_str)
    }
}

/// The identity Lease of a kube-apiserver on `hostname` that is still valid at `at`: a live
/// server, with or without a Node.
pub(crate) fn live_apiserver_identity<'a>(
    leases: &'a [LeaseFacts],
    hostname: &str,
    at: jiff::Timestamp,
) -> Option<&'a LeaseFacts> {
    leases.iter().find(|l| {
        l.apiserver_hostname() == Some(hostname) && l.record.expires_at().is_some_and(|t| t > at)
    })
}
