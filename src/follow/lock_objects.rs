//! What a lock move works on and produces: the lock's copies as read, each copy written, and
//! what verification of the takeover saw.

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use serde::Serialize;

use super::follow_plan::LockCopy;
use super::lock_edit::configmap_record;
use crate::model::lock::LockRecord;

/// The objects behind a lock, as read (with their resourceVersions).
#[derive(Debug, Clone, Default)]
pub(crate) struct LockObjects {
    pub lease: Option<Lease>,
    pub configmap: Option<ConfigMap>,
}

impl LockObjects {
    pub(crate) fn record(&self, copy: LockCopy) -> Option<LockRecord> {
        match copy {
            LockCopy::Lease => self.lease.as_ref().map(LockRecord::from_lease),
            LockCopy::ConfigMap => self.configmap.as_ref().and_then(configmap_record),
        }
    }

    pub(crate) fn resource_version(&self, copy: LockCopy) -> Option<String> {
        match copy {
            LockCopy::Lease => self.lease.as_ref()?.metadata.resource_version.clone(),
            LockCopy::ConfigMap => self.configmap.as_ref()?.metadata.resource_version.clone(),
        }
    }
}

/// A write that went through.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WrittenCopy {
    pub object: String,
    pub resource_version: String,
    /// `renewTime` in what we wrote; the target must renew past it.
    pub renew_time: Option<Timestamp>,
}

/// What verification saw.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Verification {
    pub verified: bool,
    /// Seconds from the write until the target's own renewal was seen.
    pub seconds: Option<f64>,
    /// Distinct holders in the order they were seen, starting with the one we replaced.
    pub observed_holders: Vec<String>,
    pub message: String,
}
