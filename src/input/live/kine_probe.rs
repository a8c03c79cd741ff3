//! The live half of the kine compaction probe (model/kine_probe.rs): on a cluster whose
//! servers show no etcd, one LIST of a single Node for the current revision, then one at the
//! oldest revision the HelmCharts and helm-controller Jobs of kube-system date (objects k3s
//! writes once, at install). Two small requests, made only when that revision is far enough
//! behind to have been compacted; any failure is the probe's answer, never the run's.

use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, ListParams, VersionMatch};

use super::{Connection, Trace};
use crate::distro::Distro;
use crate::model::datastore::Datastore;
use crate::model::kine_probe::{BEHIND_ENOUGH, KineProbe, ProbeAnswer, WrittenRevision};
use crate::model::node::NodeFacts;

/// Whether the servers show embedded etcd, as the datastore check tells it (for either
/// product: the probe runs before the product is known); then the apiserver compacts etcd
/// and there is no kine to probe.
fn shows_etcd(nodes: &[NodeFacts]) -> bool {
    Distro::ALL
        .iter()
        .any(|d| Datastore::of(Some(nodes), *d) == Datastore::EmbeddedEtcd)
}

/// The probe, or `None` when there is nothing to probe: a cluster on etcd, no dated
/// revision, or one too recent to tell.
pub(super) async fn probe_kine(
    conn: &Connection,
    nodes: &[NodeFacts],
    oldest: Option<WrittenRevision>,
    trace: Trace<'_>,
) -> Option<KineProbe> {
    if nodes.is_empty() || shows_etcd(nodes) {
        return None;
    }
    let Some(written) = oldest else {
        trace("kine probe: no HelmChart or Job in kube-system dates a revision; not probed");
        return None;
    };
    let api: Api<Node> = Api::all(conn.client.clone());
    let action = "list nodes (the current revision)";
    let current = match api.list_metadata(&ListParams::default().limit(1)).await {
        Ok(list) => list.metadata.resource_version?.parse::<u64>().ok()?,
        Err(e) => {
            trace(&format!("kine probe: {action}: {e}"));
            return None;
        }
    };
    if current.saturating_sub(written.revision) < BEHIND_ENOUGH {
        trace(&format!(
            "kine probe: revision {} ({}) is {} behind the current {current}: too recent to tell",
            written.revision,
            written.object,
            current.saturating_sub(written.revision)
        ));
        return None;
    }
    let params = ListParams::default()
        .limit(1)
        .at(&written.revision.to_string())
        .matching(VersionMatch::Exact);
    let answer = match api.list_metadata(&params).await {
        Ok(_) => ProbeAnswer::Retained,
        Err(kube::Error::Api(status)) if status.code == 410 => ProbeAnswer::Compacted,
        Err(e) => {
            let action = format!("list nodes at revision {} (exact)", written.revision);
            ProbeAnswer::Failed(super::ReadError::from_kube(&e, &action, &conn.server).message)
        }
    };
    trace(&format!(
        "kine probe: revision {} ({}), current {current}: {answer:?}",
        written.revision, written.object
    ));
    Some(KineProbe {
        written,
        current,
        answer,
    })
}
