//! The datastore under the control plane, judged from each server's metrics: etcd members
//! against their quotas (`quota`), fragmentation, kine's compaction, and latency. Pure: the
//! metrics were read live or from a dump's `metrics/` files before this runs. A server whose
//! metrics could not be read is "not checked" with the reason, never healthy.

mod etcdctl;
mod fragmentation;
mod kine_compaction;
mod members;
mod quota;
mod slowness;

use jiff::Timestamp;

pub(crate) use self::etcdctl::etcdctl;
use self::fragmentation::fragmentation_findings;
use self::kine_compaction::{kine_findings, probe_finding};
use self::members::members;
use self::quota::{FrozenLocks, quota_findings};
use self::slowness::slowness_findings;
use super::finding::{Finding, FindingCode};
use super::leases::lock_status::{LockState, LockStatus};
use crate::distro::Distro;
use crate::model::cluster_state::ClusterState;
use crate::model::collected::Collected;
use crate::model::datastore::Datastore;
use crate::model::server_metrics::ServerMetrics;

/// The findings, and the note of what was not checked; `Err` with the reason when no
/// server's metrics were read at all and the kine probe found nothing.
pub(crate) fn analyse_datastore(
    state: &ClusterState,
    datastore: &Datastore,
    distro: Distro,
    now: Timestamp,
    locks: &[LockStatus],
) -> Result<(Vec<Finding>, Vec<String>), String> {
    let judged = judge_metrics(state, datastore, distro, now, locks);
    let found = judged
        .as_ref()
        .map(|(f, _)| f.as_slice())
        .unwrap_or_default();
    let probed = probed_kine(state, datastore, distro, now, found);
    match (judged, probed) {
        (Ok((mut findings, mut notes)), probed) => {
            match probed {
                Ok(found) => findings.extend(found),
                Err(note) => notes.push(note),
            }
            Ok((findings, notes))
        }
        (Err(why), Ok(Some(found))) => Ok((vec![found], vec![why])),
        (Err(why), _) => Err(why),
    }
}

/// What the servers' metrics say.
fn judge_metrics(
    state: &ClusterState,
    datastore: &Datastore,
    distro: Distro,
    now: Timestamp,
    locks: &[LockStatus],
) -> Result<(Vec<Finding>, Vec<String>), String> {
    let reads = match &state.server_metrics {
        Collected::Read(reads) => reads,
        Collected::NotAsked => return Err("servers' metrics not read".into()),
        lacking => return Err(lacking.why_not().unwrap_or_default().to_string()),
    };
    let mut notes: Vec<String> = reads
        .iter()
        .filter_map(|r| Some(format!("{}: {}", r.name(), r.apiserver.as_ref().err()?)))
        .collect();
    if reads
        .iter()
        .all(|r| r.apiserver.is_err() && r.etcd().is_none())
    {
        return Err(if notes.is_empty() {
            "no server's metrics were read".into()
        } else {
            format!("no server's metrics were read: {}", notes.join("; "))
        });
    }
    let etcd_read = reads.iter().any(|r| r.etcd().is_some());
    let mut findings = Vec::new();
    if *datastore == Datastore::EmbeddedEtcd || etcd_read {
        let members = members(state, distro);
        notes.extend(reads.iter().filter_map(without_size));
        findings.extend(quota_findings(&members, distro, frozen(locks).as_ref()));
        findings.extend(fragmentation_findings(&members, distro));
        if !etcd_read {
            notes.push(
                "etcd's own metrics (:2381, --etcd-expose-metrics) were not read: fragmentation and disk \
                 latency not judged"
                    .into(),
            );
        }
    }
    findings.extend(kine_findings(reads, distro, now));
    findings.extend(slowness_findings(reads));
    Ok((findings, notes))
}

/// The kine probe's finding, unless kine's own metrics already raised one; `Err` with a note
/// when the probe failed. Nothing on etcd, whose compaction the apiserver runs.
fn probed_kine(
    state: &ClusterState,
    datastore: &Datastore,
    distro: Distro,
    now: Timestamp,
    found: &[Finding],
) -> Result<Option<Finding>, String> {
    let Some(probe) = &state.kine_probe else {
        return Ok(None);
    };
    if *datastore == Datastore::EmbeddedEtcd
        || found
            .iter()
            .any(|f| f.code == FindingCode::KineCompactionStalled)
    {
        return Ok(None);
    }
    probe_finding(probe, distro, now)
}

/// One server's datastore size as `check` shows it, healthy or not.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DatastoreSize {
    /// `Node s1`, or the server behind the connection.
    pub server: String,
    /// The physical size: the etcd member's file, or kine's database.
    pub bytes: f64,
    /// The metric it was read from.
    pub metric: &'static str,
    /// An etcd member's quota; none on kine, or when turned off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota_bytes: Option<f64>,
    /// Where the quota came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota_from: Option<&'static str>,
    /// etcd's in-use bytes (`:2381` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_use_bytes: Option<f64>,
}

/// Every size read: each etcd member's against its quota, or each kine server's.
pub(crate) fn datastore_sizes(
    state: &ClusterState,
    datastore: &Datastore,
    distro: Distro,
) -> Vec<DatastoreSize> {
    let Some(reads) = state.server_metrics.as_read() else {
        return Vec::new();
    };
    if *datastore == Datastore::EmbeddedEtcd || reads.iter().any(|r| r.etcd().is_some()) {
        return members(state, distro)
            .into_iter()
            .filter_map(|m| {
                let (bytes, metric) = m.size?;
                Some(DatastoreSize {
                    server: m.name,
                    bytes,
                    metric,
                    quota_bytes: m.quota.map(|(q, _)| q),
                    quota_from: m.quota.map(|(_, from)| from.says()),
                    in_use_bytes: m.in_use,
                })
            })
            .collect();
    }
    reads
        .iter()
        .filter_map(|r| {
            let size = r.apiserver()?.storage_size.as_ref()?;
            Some(DatastoreSize {
                server: r.name(),
                bytes: size.bytes,
                metric: size.metric,
                quota_bytes: None,
                quota_from: None,
                in_use_bytes: None,
            })
        })
        .collect()
}

/// Why a server whose metrics were read gives no size; `None` when it gives one.
fn without_size(read: &ServerMetrics) -> Option<String> {
    let scrape = read.apiserver()?;
    let etcd_size = read.etcd().and_then(|e| e.etcd_total_bytes);
    if scrape.storage_size.is_some() || etcd_size.is_some() {
        return None;
    }
    Some(if scrape.storage_size_failed {
        format!(
            "{}: its apiserver could not ask the datastore for its size (the size metric reads -1)",
            read.name()
        )
    } else {
        format!("{}: no datastore size in its metrics", read.name())
    })
}

/// Every held lock expired at once: the renewals all fail, as writes do under NOSPACE.
fn frozen(locks: &[LockStatus]) -> Option<FrozenLocks> {
    let held: Vec<&LockStatus> = locks
        .iter()
        .filter(|l| matches!(l.state, LockState::Held | LockState::Expired))
        .collect();
    let every = !held.is_empty() && held.iter().all(|l| l.state == LockState::Expired);
    every.then(|| FrozenLocks {
        locks: held.iter().map(|l| l.name.clone()).collect(),
    })
}

#[cfg(test)]
mod tests;
