//! Reading Rancher's management cluster live: through Rancher's own proxy
//! (`https://H/k8s/clusters/local`, the downstream context's credentials) or
//! `--rancher-context`. GET and LIST only; any failure there is "not checked" with its reason,
//! never a failure of the downstream read.

use std::time::Instant;

use kube::api::{Api, ApiResource, DynamicObject};
use serde_json::Value;

use super::rancher_selection::ManagementObjects;
use super::{RancherChoice, RancherView};
use crate::input::connect::{ConnectOptions, Connection, connect};
use crate::input::live::{Trace, list_selected};
use crate::input::{ClusterState, ReadError};
use crate::model::rancher::management::ManagementCluster;
use crate::model::rancher::{BACKPOPULATE_FEATURE, DEFAULT_WORKSPACE, SERVER_VERSION_SETTING};

const PROXY_PATH: &str = "/k8s/clusters/";

/// `https://H[/prefix]/k8s/clusters/<id>` → (`https://H[/prefix]`, id).
pub fn proxy_url(server: &str) -> Option<(String, String)> {
    let at = server.rfind(PROXY_PATH)?;
    let id = server[at + PROXY_PATH.len()..].trim_end_matches('/');
    (!id.is_empty() && !id.contains('/')).then(|| (server[..at].to_string(), id.to_string()))
}

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
pub async fn read_rancher_view(
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
        Some(403) => "; `k3sdoctor rbac rancher` prints the read-only role it needs",
        Some(404) => {
            "; the token may not reach Rancher's local cluster, or the cluster is unknown there"
        }
        _ => "",
    };
    RancherView::NotChecked {
        reason: format!("{}{advice}", e.message),
    }
}

fn resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: format!("{group}/{version}"),
        kind: kind.into(),
        plural: plural.into(),
    }
}

async fn read_objects(
    conn: &Connection,
    cluster_id: Option<&str>,
    trace: Trace<'_>,
) -> Result<ManagementObjects, ReadError> {
    let clusters_mgmt = resource("management.cattle.io", "v3", "Cluster", "clusters");
    let mut objects = ManagementObjects::default();
    // The workspace comes from the management Cluster; without an id (a context that is no
    // proxy URL) the default workspace is read whole and the cluster told by its snapshots.
    let workspace = match cluster_id {
        Some(id) => {
            let api: Api<DynamicObject> = Api::all_with(conn.client.clone(), &clusters_mgmt);
            let found = get(conn, &api, id, "clusters.management.cattle.io", trace).await?;
            let found = found.ok_or_else(|| {
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
    let provisioning = resource("provisioning.cattle.io", "v1", "Cluster", "clusters");
    let prov = list(
        conn,
        &provisioning,
        &workspace,
        None,
        "clusters.provisioning.cattle.io",
        trace,
    )
    .await?;
    objects.mark_read("clusters.provisioning.cattle.io");
    for c in &prov {
        objects.add(c);
    }
    let name = cluster_id.and_then(|id| {
        objects
            .provisioning
            .iter()
            .flatten()
            .find(|c| c.cluster_id.as_deref() == Some(id))
            .map(|c| c.name.clone())
    });
    let by_cluster = |label: &str| name.as_ref().map(|n| format!("{label}={n}"));
    let (records_selector, machines_selector) = (
        by_cluster("rke.cattle.io/cluster-name"),
        by_cluster("cluster.x-k8s.io/cluster-name"),
    );
    let records_res = resource("rke.cattle.io", "v1", "ETCDSnapshot", "etcdsnapshots");
    let machines_res = resource("cluster.x-k8s.io", "v1beta1", "Machine", "machines");
    let planes_res = resource("rke.cattle.io", "v1", "RKEControlPlane", "rkecontrolplanes");
    let features = resource("management.cattle.io", "v3", "Feature", "features");
    let settings = resource("management.cattle.io", "v3", "Setting", "settings");
    let features_api: Api<DynamicObject> = Api::all_with(conn.client.clone(), &features);
    let settings_api: Api<DynamicObject> = Api::all_with(conn.client.clone(), &settings);
    let (records, machines, planes, feature, setting) = tokio::join!(
        list(
            conn,
            &records_res,
            &workspace,
            records_selector.as_deref(),
            "etcdsnapshots.rke.cattle.io",
            trace
        ),
        list(
            conn,
            &machines_res,
            &workspace,
            machines_selector.as_deref(),
            "machines.cluster.x-k8s.io",
            trace
        ),
        list(
            conn,
            &planes_res,
            &workspace,
            None,
            "rkecontrolplanes.rke.cattle.io",
            trace
        ),
        get(
            conn,
            &features_api,
            BACKPOPULATE_FEATURE,
            "features.management.cattle.io",
            trace
        ),
        get(
            conn,
            &settings_api,
            SERVER_VERSION_SETTING,
            "settings.management.cattle.io",
            trace
        ),
    );
    // The records are the comparison; the rest only explains it, so a kind this user may
    // not read (or a Rancher without CAPI) is a gap, not a failure.
    for record in records? {
        objects.add(&record);
    }
    objects.mark_read("etcdsnapshots.rke.cattle.io");
    for (found, resource) in [
        (machines, "machines.cluster.x-k8s.io"),
        (planes, "rkecontrolplanes.rke.cattle.io"),
    ] {
        match found {
            Ok(items) => {
                objects.mark_read(resource);
                for item in &items {
                    objects.add(item);
                }
            }
            Err(e) => trace(&format!("{}: not read, its checks are skipped", e.message)),
        }
    }
    for found in [feature, setting] {
        match found {
            Ok(Some(object)) => _ = objects.add(&object),
            Ok(None) => {}
            Err(e) => trace(&format!("{}: not read", e.message)),
        }
    }
    Ok(objects)
}

async fn list(
    conn: &Connection,
    resource: &ApiResource,
    namespace: &str,
    selector: Option<&str>,
    shown: &str,
    trace: Trace<'_>,
) -> Result<Vec<Value>, ReadError> {
    let api: Api<DynamicObject> = Api::namespaced_with(conn.client.clone(), namespace, resource);
    let action = match selector {
        Some(s) => format!("list {shown} in {namespace} labelled {s}"),
        None => format!("list {shown} in {namespace}"),
    };
    let api_version = resource.api_version.clone();
    let kind = resource.kind.clone();
    let keep = move |object: DynamicObject| {
        let mut value = serde_json::to_value(&object).unwrap_or(Value::Null);
        if let Some(map) = value.as_object_mut() {
            map.entry("apiVersion")
                .or_insert_with(|| api_version.clone().into());
            map.entry("kind").or_insert_with(|| kind.clone().into());
        }
        value
    };
    list_selected(&api, &action, conn, trace, keep, selector).await
}

async fn get(
    conn: &Connection,
    api: &Api<DynamicObject>,
    name: &str,
    shown: &str,
    trace: Trace<'_>,
) -> Result<Option<Value>, ReadError> {
    let action = format!("get {shown} {name}");
    let started = Instant::now();
    let _in_flight = conn.activity.begin(&action);
    let found = api
        .get_opt(name)
        .await
        .map_err(|e| ReadError::from_kube(&e, &action, &conn.server))?;
    trace(&format!(
        "{action}: {} in {} ms",
        if found.is_some() {
            "found"
        } else {
            "not found"
        },
        started.elapsed().as_millis()
    ));
    Ok(found.map(|o| serde_json::to_value(&o).unwrap_or(Value::Null)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_rancher_proxy_urls() {
        assert_eq!(
            proxy_url("https://rancher.example.com/k8s/clusters/c-m-abcd1234"),
            Some(("https://rancher.example.com".into(), "c-m-abcd1234".into()))
        );
        assert_eq!(
            proxy_url("https://h:8443/rancher/k8s/clusters/local/"),
            Some(("https://h:8443/rancher".into(), "local".into()))
        );
        assert_eq!(proxy_url("https://10.0.0.1:6443"), None);
        assert_eq!(proxy_url("https://h/k8s/clusters/"), None);
    }
}
