//! Leader-election records as client-go's resourcelocks read and write them: a Lease, a
//! ConfigMap annotation, or both (MultiLock, ConfigMap primary).

use std::time::SystemTime;

use serde_json::{Value, json};

use super::LockStyle;
use crate::support::fake_api::FakeApi;

pub(crate) const LEADER_ANNOTATION: &str = "control-plane.alpha.kubernetes.io/leader";
/// client-go `resourcelock.UnknownLeader`: what a MultiLock reports when its copies disagree.
pub(crate) const UNKNOWN_LEADER: &str = "leaderelection.k8s.io/unknown";

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Record {
    pub holder: String,
    pub lease_seconds: i64,
    pub acquire: SystemTime,
    pub renew: SystemTime,
    pub transitions: i64,
}

/// The objects behind one lock, with their resourceVersions for the compare-and-swap.
pub(crate) struct Objects {
    pub lease: Option<Value>,
    pub configmap: Option<Value>,
}

pub(crate) fn read(fake: &FakeApi, style: LockStyle, name: &str) -> Objects {
    Objects {
        lease: style
            .uses_lease()
            .then(|| fake.get("Lease", Some("kube-system"), name))
            .flatten(),
        configmap: style
            .uses_configmap()
            .then(|| fake.get("ConfigMap", Some("kube-system"), name))
            .flatten(),
    }
}

impl Objects {
    /// The merged record and its raw form (what client-go compares to notice a change).
    pub(crate) fn record(&self, style: LockStyle) -> Option<(Record, String)> {
        let lease = self.lease.as_ref().and_then(from_lease);
        let cm = self.configmap.as_ref().and_then(from_configmap);
        match style {
            LockStyle::Lease => lease,
            LockStyle::ConfigMap => cm,
            LockStyle::MultiLock => match (cm, lease) {
                (Some((c, raw_c)), Some((l, raw_l))) => {
                    if c.holder == l.holder {
                        Some((c, format!("{raw_c}|{raw_l}")))
                    } else {
                        let mut merged = c;
                        merged.holder = UNKNOWN_LEADER.to_string();
                        Some((merged, format!("{raw_c}|{raw_l}")))
                    }
                }
                (Some(c), None) => Some(c),
                (None, Some(l)) => Some(l),
                (None, None) => None,
            },
        }
    }

    /// Writes `record` to every copy the style keeps, primary (ConfigMap) first. Returns false
    /// when a copy changed under us (a 409 for a real client).
    pub(crate) fn write(
        &self,
        fake: &FakeApi,
        style: LockStyle,
        name: &str,
        record: &Record,
    ) -> bool {
        if style.uses_configmap() {
            let mut cm = self.configmap.clone().unwrap_or_else(|| {
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "kube-system"}})
            });
            cm["metadata"]["annotations"][LEADER_ANNOTATION] = json!(annotation(record));
            if fake.replace(cm).is_err() {
                return false;
            }
        }
        if style.uses_lease() {
            let mut lease = self.lease.clone().unwrap_or_else(|| {
                json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                       "metadata": {"name": name, "namespace": "kube-system"}})
            });
            lease["spec"] = json!({
                "holderIdentity": record.holder,
                "leaseDurationSeconds": record.lease_seconds,
                "acquireTime": micro(record.acquire),
                "renewTime": micro(record.renew),
                "leaseTransitions": record.transitions,
            });
            if fake.replace(lease).is_err() {
                return false;
            }
        }
        true
    }
}

fn from_lease(lease: &Value) -> Option<(Record, String)> {
    let spec = lease.get("spec")?;
    let record = Record {
        holder: spec["holderIdentity"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        lease_seconds: spec["leaseDurationSeconds"].as_i64().unwrap_or(0),
        acquire: parse(spec["acquireTime"].as_str()),
        renew: parse(spec["renewTime"].as_str()),
        transitions: spec["leaseTransitions"].as_i64().unwrap_or(0),
    };
    Some((record, spec.to_string()))
}

fn from_configmap(cm: &Value) -> Option<(Record, String)> {
    let raw = cm["metadata"]["annotations"][LEADER_ANNOTATION].as_str()?;
    let v: Value = serde_json::from_str(raw).ok()?;
    let record = Record {
        holder: v["holderIdentity"].as_str().unwrap_or_default().to_string(),
        lease_seconds: v["leaseDurationSeconds"].as_i64().unwrap_or(0),
        acquire: parse(v["acquireTime"].as_str()),
        renew: parse(v["renewTime"].as_str()),
        transitions: v["leaderTransitions"].as_i64().unwrap_or(0),
    };
    Some((record, raw.to_string()))
}

fn annotation(r: &Record) -> String {
    json!({
        "holderIdentity": r.holder,
        "leaseDurationSeconds": r.lease_seconds,
        "acquireTime": seconds(r.acquire),
        "renewTime": seconds(r.renew),
        "leaderTransitions": r.transitions,
    })
    .to_string()
}

fn parse(text: Option<&str>) -> SystemTime {
    text.and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map(SystemTime::from)
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

pub(crate) fn micro(t: SystemTime) -> String {
    jiff::Timestamp::try_from(t)
        .unwrap()
        .strftime("%Y-%m-%dT%H:%M:%S.%6fZ")
        .to_string()
}

fn seconds(t: SystemTime) -> String {
    jiff::Timestamp::try_from(t)
        .unwrap()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}
