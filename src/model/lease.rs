//! A Lease in kube-system: an election lock or an apiserver identity lease.

use std::collections::BTreeMap;

use k8s_openapi::api::coordination::v1::Lease;

use super::lock::{APISERVER_IDENTITY_LABEL, LockRecord};

#[derive(Debug, Clone, PartialEq)]
pub struct LeaseFacts {
    pub name: String,
    pub namespace: String,
    pub resource_version: Option<String>,
    pub labels: BTreeMap<String, String>,
    pub record: LockRecord,
}

impl LeaseFacts {
    pub fn from_api(lease: &Lease) -> LeaseFacts {
        LeaseFacts {
            name: lease.metadata.name.clone().unwrap_or_default(),
            namespace: lease.metadata.namespace.clone().unwrap_or_default(),
            resource_version: lease.metadata.resource_version.clone(),
            labels: lease.metadata.labels.clone().unwrap_or_default(),
            record: LockRecord::from_lease(lease),
        }
    }

    /// One lease per apiserver (`apiserver-<hash>`, older `kube-apiserver-<hash>`): a heartbeat,
    /// not an election, so never a problem to report (facts §1.1).
    pub fn is_apiserver_identity(&self) -> bool {
        self.labels.contains_key(APISERVER_IDENTITY_LABEL)
    }
}
