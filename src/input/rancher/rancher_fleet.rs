//! `--rancher-clusters`: every cluster Rancher manages, reached through Rancher's proxy with
//! one Rancher context's credentials. The management cluster is read once for all of them:
//! its clusters, and (for `check`) every workspace's records, so 200 clusters cost a handful of
//! lists there, not 200. All of them share one client (`RancherPool`): one connection pool
//! and one run of the Rancher context's credential plugin.

use futures::{StreamExt, TryStreamExt};
use regex::Regex;

use super::RancherState;
use super::rancher_reads::{
    list, management_clusters, read_globals, read_provisioning, read_workspace,
};
use super::rancher_selection::ManagementObjects;
use crate::input::ReadError;
use crate::input::connect::rancher_pool::RancherPool;
use crate::input::connect::rancher_proxy::{PROXY_PATH, proxy_url};
use crate::input::connect::{ConnectOptions, Connection, Prepared, prepare};
use crate::input::live::{Trace, server_time};
use crate::model::rancher::DEFAULT_WORKSPACE;
use crate::model::rancher::management::ManagementCluster;

/// One downstream cluster of the Rancher fleet.
#[derive(Clone)]
pub(crate) struct RancherMember {
    /// What the fleet report calls it: Rancher's display name, else the provisioning name,
    /// else the id.
    pub name: String,
    pub id: String,
    /// `https://<rancher>/k8s/clusters/<id>`.
    pub server: String,
    /// The Rancher context's credentials with this server, the kubeconfig read once for all;
    /// `Err` when the id makes no URL (the cluster is listed as unreadable, never dropped).
    pub prepared: Result<Prepared, ReadError>,
    /// The Rancher's client, which every cluster's connection shares.
    pub pool: RancherPool,
    /// Why Rancher says it cannot be reached, when it says so.
    pub disconnected: Option<String>,
    /// Rancher's side of it, when the records were read; `Err` says why not.
    pub rancher: Option<Result<RancherState, String>>,
}

/// The clusters Rancher manages whose name or id `pattern` matches, in name order, and the
/// management cluster's URL.
pub(crate) async fn rancher_members(
    base: &ConnectOptions,
    pattern: &Regex,
    with_records: bool,
    parallel: usize,
    trace: Trace<'_>,
) -> Result<(String, Vec<RancherMember>), ReadError> {
    let management = connect_management(base, parallel).await?;
    let members = members_of(&management, pattern, with_records, parallel, trace).await?;
    Ok((management.conn.server.clone(), members))
}

/// Rancher's management cluster, reached through the proxy of `base`'s context.
pub(crate) struct Management {
    pub conn: Connection,
    /// `https://<rancher>`, which every cluster's proxy URL starts with.
    rancher: String,
    /// The Rancher context, resolved once: each cluster is this at another URL.
    prepared: Prepared,
    /// The one client of this Rancher, `local` included.
    pool: RancherPool,
}

/// Connects to `…/k8s/clusters/local` with the credentials of `base`, whose server must be a
/// Rancher proxy URL, on the client all its clusters share (`parallel` requests at once).
pub(crate) async fn connect_management(
    base: &ConnectOptions,
    parallel: usize,
) -> Result<Management, ReadError> {
    let prepared = prepare(base).await?;
    let Some((rancher, _)) = proxy_url(&prepared.server) else {
        return Err(ReadError::new(format!(
            "--rancher-clusters reaches each cluster through Rancher's proxy, but the server {} \
             is no Rancher URL (https://<rancher>/k8s/clusters/<id>); pick a context that \
             Rancher generated with --context NAME",
            prepared.server
        )));
    };
    let pool = RancherPool::new(&prepared, parallel).await?;
    let conn = pool.connect(
        &prepared.at_server(&format!("{rancher}{PROXY_PATH}local"))?,
        None,
    )?;
    // Requests sent together before the first connection is up open one each: the pool
    // cannot know yet that Rancher speaks HTTP/2 and shares one. A request alone opens the
    // connection the management cluster's reads then share (a failure here is left to them
    // to tell).
    server_time(&conn, &|_| {}).await;
    Ok(Management {
        conn,
        rancher,
        prepared,
        pool,
    })
}

/// The clusters of `management` whose name or id `pattern` matches, in name order, with
/// Rancher's side of each when `with_records`; `parallel` (`--parallel`) workspaces are read
/// at once.
pub(crate) async fn members_of(
    management: &Management,
    pattern: &Regex,
    with_records: bool,
    parallel: usize,
    trace: Trace<'_>,
) -> Result<Vec<RancherMember>, ReadError> {
    let (conn, rancher) = (&management.conn, management.rancher.as_str());
    let local_url = format!("{rancher}{PROXY_PATH}local");
    trace(&format!(
        "reading the clusters Rancher manages at {}",
        conn.server
    ));
    let mut objects = ManagementObjects {
        source: conn.server.clone(),
        kubectl_target: format!("--server {local_url}"),
        ..ManagementObjects::default()
    };
    // Which workspaces to read is known only from the clusters list, but Rancher puts every
    // downstream cluster in `fleet-default` unless told otherwise: that one is read beside
    // the list, with Rancher's Feature and version, instead of one round trip after it.
    let clusters_resource = management_clusters();
    let (clusters, early, globals) = tokio::join!(
        list(
            conn,
            &clusters_resource,
            None,
            None,
            "clusters.management.cattle.io",
            trace,
        ),
        workspace_objects(conn, DEFAULT_WORKSPACE, with_records, trace),
        async {
            if with_records {
                read_globals(conn, trace).await
            } else {
                Vec::new()
            }
        }
    );
    let clusters = clusters?;
    let managed: Vec<ManagementCluster> = clusters
        .iter()
        .map(ManagementCluster::from_json)
        .filter(|c| c.id != "local")
        .collect();
    for cluster in &clusters {
        objects.add(cluster);
    }
    objects.mark_read("clusters.management.cattle.io");
    let mut workspaces: Vec<&str> = managed.iter().map(|c| c.workspace.as_str()).collect();
    workspaces.sort_unstable();
    workspaces.dedup();
    // The other workspaces `parallel` at a time: a few round trips, not one per workspace,
    // yet not the thousands of requests at once that 3,000 workspaces would send.
    let others = workspaces
        .iter()
        .filter(|ws| **ws != DEFAULT_WORKSPACE)
        .map(|ws| workspace_objects(conn, ws, with_records, trace));
    let mut others = futures::stream::iter(others)
        .buffered(parallel.max(1))
        .try_collect::<Vec<_>>()
        .await?
        .into_iter();
    // In the workspaces' order. `fleet-default` read for nothing is dropped, and so is
    // its error: a user may read only the workspaces that hold clusters.
    let mut early = Some(early);
    for workspace in &workspaces {
        let part = match *workspace == DEFAULT_WORKSPACE {
            true => early.take(),
            false => others.next().map(Ok),
        };
        if let Some(part) = part {
            objects.absorb(part?);
        }
    }
    for object in &globals {
        objects.add(object);
    }
    let mut members: Vec<RancherMember> = managed
        .iter()
        .filter_map(|m| member(m, &objects, management, pattern, with_records))
        .collect();
    members.sort_by(|a, b| a.name.cmp(&b.name).then(a.id.cmp(&b.id)));
    Ok(members)
}

/// A workspace's provisioning Clusters and (when `with_records`) its records, Machines and
/// control planes, read at once.
async fn workspace_objects(
    conn: &Connection,
    workspace: &str,
    with_records: bool,
    trace: Trace<'_>,
) -> Result<ManagementObjects, ReadError> {
    let mut provisioning = ManagementObjects::default();
    let (listed, records) = tokio::join!(
        read_provisioning(conn, workspace, &mut provisioning, trace),
        async {
            match with_records {
                true => read_workspace(conn, workspace, None, trace).await.map(Some),
                false => Ok(None),
            }
        }
    );
    listed?;
    if let Some(records) = records? {
        provisioning.absorb(records);
    }
    Ok(provisioning)
}

fn member(
    m: &ManagementCluster,
    objects: &ManagementObjects,
    management: &Management,
    pattern: &Regex,
    with_records: bool,
) -> Option<RancherMember> {
    let provisioning = objects
        .provisioning
        .iter()
        .flatten()
        .find(|p| p.cluster_id.as_deref() == Some(m.id.as_str()));
    let name = m
        .display_name
        .clone()
        .or_else(|| provisioning.map(|p| p.name.clone()))
        .unwrap_or_else(|| m.id.clone());
    let names = [
        Some(name.as_str()),
        Some(m.id.as_str()),
        provisioning.map(|p| p.name.as_str()),
    ];
    if !names.into_iter().flatten().any(|n| pattern.is_match(n)) {
        return None;
    }
    let server = format!("{}{PROXY_PATH}{}", management.rancher, m.id);
    let prepared = management.prepared.at_server(&server);
    let rancher_side = with_records.then(|| match provisioning {
        Some(p) => Ok(objects.state_of(p)),
        None => Err(format!(
            "Rancher has no provisioning Cluster for {} in {} (an RKE1 or hosted cluster keeps \
             no etcd snapshot records)",
            m.id, m.workspace
        )),
    });
    Some(RancherMember {
        name,
        id: m.id.clone(),
        server,
        prepared,
        pool: management.pool.clone(),
        disconnected: m.disconnected().then(|| {
            m.not_ready_message
                .clone()
                .unwrap_or_else(|| "Connected is False".to_string())
        }),
        rancher: rancher_side,
    })
}
