//! Reading Rancher's management cluster live: through Rancher's own proxy
//! (`https://H/k8s/clusters/local`, the downstream context's credentials) or
//! `--rancher-context`. GET and LIST only; any failure there is "not checked" with its reason,
//! never a failure of the downstream read.

use super::rancher_reads::{
    get, management_clusters, read_globals, read_provisioning, read_workspace,
};
use super::rancher_selection::ManagementObjects;
use super::{RancherChoice, RancherView};
use crate::input::connect::rancher_proxy::{PROXY_PATH, proxy_url};
use crate::input::connect::{ConnectOptions, Connection, connect};
use crate::input::live::Trace;
use crate::input::{ClusterState, ReadError};
use crate::model::rancher::DEFAULT_WORKSPACE;
use crate::model::rancher::management::ManagementCluster;

/// Where the management cluster is, and which downstream cluster it is asked about.
struct Target {
    options: ConnectOptions,
    cluster_id: Option<String>,
    kubectl_target: String,
    explicit: bool,
}

fn target(downstream: &ConnectOptions, server: &str, choice: &RancherChoice) -> Option<Target> {
    let proxied = proxy_url(server).filter(|(_, id)| id != "local");
    if let Some(context) = &choice.context {
        return Some(Target {
            options: ConnectOptions {
                kubeconfig: downstream.kubeconfig.clone(),
                context: Some(context.clone()),
                request_timeout: downstream.request_timeout,
                overrides: Default::default(),
            },
            cluster_id: proxied.map(|(_, id)| id),
            kubectl_target: format!("--context {context}"),
            explicit: true,
        });
    }
    let (base, id) = proxied?;
    let local = format!("{base}{PROXY_PATH}local");
    let mut options = downstream.clone();
    options.overrides.server = Some(local.clone());
    Some(Target {
        options,
        cluster_id: Some(id),
        kubectl_target: format!("--server {local}"),
        explicit: false,
    })
}

/// Rancher's side of the downstream cluster read through `conn`, when Rancher is involved.
/// `Err` only for an explicit `--rancher-context` that cannot be used at all.
pub(crate) async fn read_rancher_view(
    downstream: &ConnectOptions,
    conn: &Connection,
    choice: &RancherChoice,
    down: &ClusterState,
    trace: Trace<'_>,
) -> Result<Option<RancherView>, ReadError> {
    let Some(target) = target(downstream, &conn.server, choice) else {
        return Ok(None);
    };
    let management = match connect(&target.options).await {
        Ok(management) => management,
        Err(e) if target.explicit => return Err(e),
        Err(e) => return Ok(Some(not_checked(&e))),
    };
    trace(&format!(
        "reading Rancher's management cluster at {}",
        management.server
    ));
    let mut objects = match read_objects(&management, target.cluster_id.as_deref(), trace).await {
        Ok(objects) => objects,
        Err(e) => return Ok(Some(not_checked(&e))),
    };
    objects.source = management.server.clone();
    objects.kubectl_target = target.kubectl_target;
    let wanted = choice.cluster.as_deref().or(target.cluster_id.as_deref());
    Ok(Some(match objects.select(wanted, down) {
        Ok(state) => RancherView::Read(Box::new(state)),
        Err(why) => RancherView::NotChecked {
            reason: format!("Rancher at {} {why}", objects.source),
        },
    }))
}

fn not_checked(e: &ReadError) -> RancherView {
    let advice = match e.http_status {
        // The message already names the refused request and the role that grants it.
        Some(403) => "",
        Some(404) => {
            "; the token may not reach Rancher's local cluster, or the cluster is unknown there"
        }
        _ => "",
    };
    RancherView::NotChecked {
        reason: format!("{}{advice}", e.message),
    }
}

async fn read_objects(
    conn: &Connection,
    cluster_id: Option<&str>,
    trace: Trace<'_>,
) -> Result<ManagementObjects, ReadError> {
    let mut objects = ManagementObjects::default();
    // The workspace comes from the management Cluster; without an id (a context that is no
    // proxy URL) the default workspace is read whole and the cluster told by its snapshots.
    let workspace = match cluster_id {
        Some(id) => {
            let found = get(
                conn,
                &management_clusters(),
                id,
                "clusters.management.cattle.io",
                trace,
            )
            .await?
            .ok_or_else(|| {
                ReadError::new(format!(
                    "Rancher at {} has no management cluster {id} (clusters.management.cattle.io)",
                    conn.server
                ))
            })?;
            objects.add(&found);
            objects.mark_read("clusters.management.cattle.io");
            ManagementCluster::from_json(&found).workspace
        }
        None => DEFAULT_WORKSPACE.to_string(),
    };
    read_provisioning(conn, &workspace, &mut objects, trace).await?;
    let name = cluster_id.and_then(|id| {
        objects
            .provisioning
            .iter()
            .flatten()
            .find(|c| c.cluster_id.as_deref() == Some(id))
            .map(|c| c.name.clone())
    });
    let (read, globals) = tokio::join!(
        read_workspace(conn, &workspace, name.as_deref(), trace),
        read_globals(conn, trace),
    );
    objects.absorb(read?);
    for object in &globals {
        objects.add(object);
    }
    Ok(objects)
}
