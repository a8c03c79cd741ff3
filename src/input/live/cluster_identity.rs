//! Which cluster this is: the UID of its `kube-system` Namespace, the usual cluster ID (the
//! Namespace exists from the cluster's first start and keeps its UID as long as the datastore
//! lives). Backups record it, so a restore can refuse another cluster's backup.

use k8s_openapi::api::core::v1::Namespace;
use kube::api::Api;

use super::Trace;
use crate::distro::LOCK_NAMESPACE;
use crate::input::ReadError;
use crate::input::connect::Connection;

pub(crate) use crate::model::cluster_identity::ClusterIdentity;

/// Reads the `kube-system` Namespace's UID. Never fails the command: a refusal (403), an
/// absent object or a server error is an identity not known, with the reason.
pub(crate) async fn read_cluster_identity(conn: &Connection, trace: Trace<'_>) -> ClusterIdentity {
    let api: Api<Namespace> = Api::all(conn.client.clone());
    let action = format!("get namespace {LOCK_NAMESPACE}");
    let _in_flight = conn.activity.begin(&action);
    match api.get(LOCK_NAMESPACE).await {
        Ok(ns) => match ns.metadata.uid {
            Some(uid) => {
                trace(&format!("{action}: cluster ID {uid}"));
                ClusterIdentity::Known(uid)
            }
            None => ClusterIdentity::Unknown(format!("{action}: the answer has no UID")),
        },
        Err(e) => {
            let e = ReadError::from_kube(&e, &action, &conn.server);
            trace(&e.message);
            ClusterIdentity::Unknown(e.message)
        }
    }
}
