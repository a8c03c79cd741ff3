//! Reading a live cluster. The only module (with the apply half of repairs) that talks to
//! the network.

mod admission_webhooks;
mod apiserver_endpoints;
mod cached_list;
mod chain_trust;
pub(crate) mod cluster_identity;
pub(crate) mod connection_certificates;
pub(crate) mod contact_probe;
mod control_plane_reads;
mod kine_probe;
mod node_events;
mod node_heartbeats;
pub(crate) mod own_access_review;
mod packaged_charts;
pub(crate) mod raw_objects;
mod refusal;
mod secret_metadata;
pub(crate) mod server_certificates;
pub(crate) mod server_metrics;
pub(crate) mod serving_cert;
pub(crate) mod snapshot_file_object;
pub(crate) mod token_access_review;
mod upgrade_plans;

use std::fmt::Debug;
use std::time::Instant;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Node};
use kube::api::{Api, ListParams};
use serde::de::DeserializeOwned;

pub(crate) use self::apiserver_endpoints::{EndpointsRead, read_apiserver_endpoints};
pub(crate) use self::cached_list::list_cached;
pub(crate) use self::control_plane_reads::ControlPlaneReads;
pub(crate) use self::node_events::read_node_events;
pub(crate) use self::node_heartbeats::{fill_heartbeats, read_node_heartbeats};
use self::snapshot_file_object::SnapshotFileObject;
use super::connect::Connection;
use super::{ClusterState, Origin, ReadError};
use crate::distro::{Distro, LOCK_NAMESPACE};
use crate::input::connect::paging::{NextPage, Paging};
use crate::model::configmap::ConfigMapFacts;
use crate::model::lease::LeaseFacts;
use crate::model::node::NodeFacts;

pub(crate) use crate::input::limits::PAGE_SIZE;

/// Where request traces go (`-v`); the caller decides how to show them.
pub(crate) type Trace<'a> = &'a (dyn Fn(&str) + Sync);

/// Reads what the lease checks need: kube-system Leases, Nodes, and the lock ConfigMaps of
/// the distro (`explicit`, or detected from what was read).
pub(crate) async fn read_lease_state(
    conn: &Connection,
    explicit: Option<Distro>,
    trace: Trace<'_>,
) -> Result<(ClusterState, Option<Distro>), ReadError> {
    let leases_api: Api<Lease> = Api::namespaced(conn.client.clone(), LOCK_NAMESPACE);
    let nodes_api: Api<Node> = Api::all(conn.client.clone());
    let (leases, nodes, server_time) = tokio::join!(
        list_all(&leases_api, "list leases in kube-system", conn, trace),
        list_all(&nodes_api, "list nodes", conn, trace),
        server_time(conn, trace),
    );
    let (leases, nodes) = (leases?, nodes?);
    let mut state = ClusterState {
        server_time,
        origin: Origin::Live {
            server: conn.server.clone(),
        },
        leases: Some(leases.iter().map(LeaseFacts::from_api).collect()),
        nodes: Some(nodes.iter().map(NodeFacts::from_api).collect()),
        ..ClusterState::default()
    };
    let distro = explicit.or_else(|| state.detect_distro());
    let mut configmaps = Vec::new();
    let candidates: Vec<Distro> = match distro {
        Some(d) => vec![d],
        None => Distro::ALL.to_vec(),
    };
    let cm_api: Api<ConfigMap> = Api::namespaced(conn.client.clone(), LOCK_NAMESPACE);
    for d in candidates {
        let (core_name, etcd_name) = (d.core_lock(), d.etcd_lock());
        let (core, etcd) = tokio::try_join!(
            get_opt(&cm_api, &core_name, "configmap", conn, trace),
            get_opt(&cm_api, &etcd_name, "configmap", conn, trace),
        )?;
        configmaps.extend(core.iter().chain(etcd.iter()).map(ConfigMapFacts::from_api));
    }
    state.configmaps = Some(configmaps);
    let distro = distro.or_else(|| state.detect_distro());
    Ok((state, distro))
}

/// The API server's clock, from the `Date` header of `GET /version`: freshness judged against
/// it does not depend on the clock of the machine k3sdoctor runs on. `None` when the server
/// sends no usable header (the caller falls back to the local clock).
pub(crate) async fn server_time(conn: &Connection, trace: Trace<'_>) -> Option<jiff::Timestamp> {
    let request = http::Request::get("/version").body(Vec::new()).ok()?;
    let _in_flight = conn.activity.begin("get /version");
    let response = conn
        .client
        .send(request.map(kube::client::Body::from))
        .await
        .ok()?;
    let (head, body) = response.into_parts();
    // Read to its end, so the connection goes back to the pool instead of being closed (the
    // clusters of a Rancher share theirs).
    let _ = http_body_util::BodyExt::collect(body).await;
    let date = head
        .headers
        .get(http::header::DATE)?
        .to_str()
        .ok()?
        .to_string();
    let time = jiff::fmt::rfc2822::DateTimeParser::new()
        .parse_timestamp(&date)
        .ok();
    trace(&format!("API server clock: {date}"));
    time
}

/// One contact probe for `serve`: `GET /version`, which any authenticated user may read,
/// answered within `limit`. `Ok` with the server's clock from the `Date` header (when it sent
/// a usable one), or why not in the words the reads use. `client`, not a `Connection`: the
/// probe runs on a task of its own.
pub(crate) async fn probe_version(
    client: &kube::Client,
    server: &str,
    limit: std::time::Duration,
) -> Result<Option<jiff::Timestamp>, String> {
    let action = "get /version";
    let request = http::Request::get("/version")
        .body(Vec::new())
        .map_err(|e| format!("cannot {action}: {e}"))?;
    // The body is read too, so the connection goes back to the pool instead of a new TLS
    // handshake every few seconds.
    let answer = async {
        let response = client
            .send(request.map(kube::client::Body::from))
            .await
            .map_err(|e| ReadError::from_kube(&e, action, server).message)?;
        let (head, body) = response.into_parts();
        http_body_util::BodyExt::collect(body)
            .await
            .map_err(|e| format!("cannot {action} at {server}: {e}"))?;
        Ok::<_, String>(head)
    };
    let head = tokio::time::timeout(limit, answer).await.map_err(|_| {
        format!(
            "cannot {action}: no answer from {server} within {} s",
            limit.as_secs()
        )
    })??;
    if !head.status.is_success() {
        return Err(format!(
            "cannot {action}: the API server at {server} answered {}",
            head.status
        ));
    }
    Ok(head
        .headers
        .get(http::header::DATE)
        .and_then(|d| d.to_str().ok())
        .and_then(|d| {
            jiff::fmt::rfc2822::DateTimeParser::new()
                .parse_timestamp(d)
                .ok()
        }))
}

/// Adds what the snapshot checks need: every ETCDSnapshotFile (paged) and the snapshot and
/// extra-metadata ConfigMaps of `distro`.
pub(crate) async fn read_snapshot_objects(
    conn: &Connection,
    distro: Distro,
    state: &mut ClusterState,
    trace: Trace<'_>,
) -> Result<(), ReadError> {
    let files_api: Api<SnapshotFileObject> = Api::all(conn.client.clone());
    let cm_api: Api<ConfigMap> = Api::namespaced(conn.client.clone(), LOCK_NAMESPACE);
    let (snapshots_name, extra_name) = (
        distro.snapshots_configmap(),
        distro.extra_metadata_configmap(),
    );
    let (files, snapshots_cm, extra_cm) = tokio::join!(
        // Each page is decoded straight into the facts and dropped before the next one is
        // asked for: the peak is one page, not the whole list.
        list_all_mapped(
            &files_api,
            "list etcdsnapshotfiles.k3s.cattle.io",
            conn,
            trace,
            SnapshotFileObject::into_file,
        ),
        get_opt(&cm_api, &snapshots_name, "configmap", conn, trace),
        get_opt(&cm_api, &extra_name, "configmap", conn, trace),
    );
    match files {
        Ok(files) => state.snapshot_files = Some(files),
        // The CRD arrived with the first affected releases (Oct 2023); older clusters answer
        // a plain 404 for the whole group.
        Err(e) if e.http_status == Some(404) => {
            trace("etcdsnapshotfiles.k3s.cattle.io is not served: the CRD is not installed");
            state.snapshot_crd_missing = true;
            state.snapshot_files = Some(Vec::new());
        }
        Err(e) => return Err(e),
    }
    let configmaps = state.configmaps.get_or_insert_with(Vec::new);
    configmaps.extend(
        snapshots_cm?
            .iter()
            .chain(extra_cm?.iter())
            .map(ConfigMapFacts::from_api),
    );
    Ok(())
}

async fn list_all<K>(
    api: &Api<K>,
    action: &str,
    conn: &Connection,
    trace: Trace<'_>,
) -> Result<Vec<K>, ReadError>
where
    K: kube::Resource + Clone + DeserializeOwned + Debug,
{
    list_all_mapped(api, action, conn, trace, |k| k).await
}

/// Every page of a list, each item turned into `keep(item)` as its page arrives.
async fn list_all_mapped<K, T>(
    api: &Api<K>,
    action: &str,
    conn: &Connection,
    trace: Trace<'_>,
    keep: impl Fn(K) -> T,
) -> Result<Vec<T>, ReadError>
where
    K: kube::Resource + Clone + DeserializeOwned + Debug,
{
    list_with(
        api,
        action,
        conn,
        trace,
        keep,
        ListParams::default().limit(PAGE_SIZE),
    )
    .await
}

/// Every page of the list `params` asks for (selectors, page size).
pub(crate) async fn list_with<K, T>(
    api: &Api<K>,
    action: &str,
    conn: &Connection,
    trace: Trace<'_>,
    keep: impl Fn(K) -> T,
    mut params: ListParams,
) -> Result<Vec<T>, ReadError>
where
    K: kube::Resource + Clone + DeserializeOwned + Debug,
{
    let mut items = Vec::new();
    let mut paging = Paging::default();
    loop {
        let started = Instant::now();
        let in_flight = conn.activity.begin(action);
        let page = api
            .list(&params)
            .await
            .map_err(|e| ReadError::from_kube(&e, action, &conn.server))?;
        drop(in_flight);
        trace(&format!(
            "{action}: {} items in {} ms",
            page.items.len(),
            started.elapsed().as_millis()
        ));
        // The server says how many are left: one allocation of the right size instead of a
        // doubling Vec whose last growth briefly holds the old and the new buffer. Only a
        // hint: a server can claim billions.
        let in_page = page.items.len();
        items.reserve_exact(paging.room_for(in_page, page.metadata.remaining_item_count));
        let next = paging
            .after_page(in_page, page.metadata.continue_)
            .map_err(|lie| lie.refusal(action, &conn.server))?;
        items.extend(page.items.into_iter().map(&keep));
        match next {
            NextPage::Continue(token) => params = params.continue_token(&token),
            NextPage::Done => return Ok(items),
        }
    }
}

/// GET that treats 404 as "absent".
async fn get_opt<K>(
    api: &Api<K>,
    name: &str,
    kind: &str,
    conn: &Connection,
    trace: Trace<'_>,
) -> Result<Option<K>, ReadError>
where
    K: kube::Resource + Clone + DeserializeOwned + Debug,
{
    get_opt_in(api, LOCK_NAMESPACE, name, kind, conn, trace).await
}

/// One object of `api`'s namespace by name; `None` when there is none.
async fn get_opt_in<K>(
    api: &Api<K>,
    namespace: &str,
    name: &str,
    kind: &str,
    conn: &Connection,
    trace: Trace<'_>,
) -> Result<Option<K>, ReadError>
where
    K: kube::Resource + Clone + DeserializeOwned + Debug,
{
    let action = format!("get {kind} {namespace}/{name}");
    let started = Instant::now();
    let in_flight = conn.activity.begin(&action);
    let result = api
        .get_opt(name)
        .await
        .map_err(|e| ReadError::from_kube(&e, &action, &conn.server))?;
    drop(in_flight);
    trace(&format!(
        "{action}: {} in {} ms",
        if result.is_some() {
            "found"
        } else {
            "not found"
        },
        started.elapsed().as_millis()
    ));
    Ok(result)
}
