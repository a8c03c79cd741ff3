//! The requests k3sdoctor sends to Rancher's management cluster, all GET or LIST, and what a
//! workspace's reads add to [`ManagementObjects`]. The records are the comparison; the other
//! kinds only explain it, so one this user may not read is a gap, not a failure.

use std::time::Instant;

use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use serde_json::Value;

use super::machine_plans::{NEEDS_ROLE, read_machine_plans};
use super::rancher_selection::ManagementObjects;
use crate::input::ReadError;
use crate::input::connect::Connection;
use crate::input::live::{Trace, list_cached};
use crate::model::rancher::{BACKPOPULATE_FEATURE, SERVER_VERSION_SETTING};

fn resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: format!("{group}/{version}"),
        kind: kind.into(),
        plural: plural.into(),
    }
}

pub(super) fn management_clusters() -> ApiResource {
    resource("management.cattle.io", "v3", "Cluster", "clusters")
}

/// A 403 from Rancher's management cluster names what was refused there (the verb, the
/// resource and the namespace) and the one object of `k3sdoctor rbac rancher` that grants it:
/// the Role in that namespace for the workspace's objects, the ClusterRole for the
/// cluster-scoped ones. The downstream roles do not apply there.
fn refused_on_rancher(mut e: ReadError, namespace: Option<&str>) -> ReadError {
    if e.http_status != Some(403) {
        return e;
    }
    let Some(action) = e.action.as_deref() else {
        return e;
    };
    e.message = forbidden_message(action, namespace);
    e
}

fn forbidden_message(action: &str, namespace: Option<&str>) -> String {
    let role = match namespace {
        Some(ns) => format!("the Role k3sdoctor-rancher-read-only in namespace {ns}"),
        None => "the ClusterRole k3sdoctor-rancher-read-only".to_string(),
    };
    format!(
        "Rancher's management cluster refused to {action} (403 Forbidden); grant {role} \
         there (`k3sdoctor rbac rancher` prints it, with its binding)"
    )
}

/// Every object of `resource` in `namespace` (all namespaces or cluster-scoped: `None`) that
/// `selector` matches, as JSON with its kind and apiVersion, from the watch cache.
pub(super) async fn list(
    conn: &Connection,
    resource: &ApiResource,
    namespace: Option<&str>,
    selector: Option<&str>,
    shown: &str,
    trace: Trace<'_>,
) -> Result<Vec<Value>, ReadError> {
    let api: Api<DynamicObject> = match namespace {
        Some(ns) => Api::namespaced_with(conn.client.clone(), ns, resource),
        None => Api::all_with(conn.client.clone(), resource),
    };
    let mut action = format!("list {shown}");
    if let Some(ns) = namespace {
        action.push_str(&format!(" in {ns}"));
    }
    if let Some(s) = selector {
        action.push_str(&format!(" labelled {s}"));
    }
    let keep = |object: DynamicObject| typed_json(&object, resource);
    let mut selectors = ListParams::default();
    if let Some(selector) = selector {
        selectors = selectors.labels(selector);
    }
    list_cached(&api, &action, conn, trace, keep, selectors)
        .await
        .map_err(|e| refused_on_rancher(e, namespace))
}

/// GET of a cluster-scoped object; `None` when it does not exist.
pub(super) async fn get(
    conn: &Connection,
    resource: &ApiResource,
    name: &str,
    shown: &str,
    trace: Trace<'_>,
) -> Result<Option<Value>, ReadError> {
    let api: Api<DynamicObject> = Api::all_with(conn.client.clone(), resource);
    let action = format!("get {shown} {name}");
    let started = Instant::now();
    let _in_flight = conn.activity.begin(&action);
    let found = api
        .get_opt(name)
        .await
        .map_err(|e| refused_on_rancher(ReadError::from_kube(&e, &action, &conn.server), None))?;
    trace(&format!(
        "{action}: {} in {} ms",
        if found.is_some() {
            "found"
        } else {
            "not found"
        },
        started.elapsed().as_millis()
    ));
    Ok(found.map(|o| typed_json(&o, resource)))
}

/// `object` as JSON with its apiVersion and kind: a list's items come without them, and
/// [`ManagementObjects::add`] tells the kinds apart by them.
fn typed_json(object: &DynamicObject, resource: &ApiResource) -> Value {
    let mut value = serde_json::to_value(object).unwrap_or(Value::Null);
    if let Some(map) = value.as_object_mut() {
        map.entry("apiVersion")
            .or_insert_with(|| resource.api_version.clone().into());
        map.entry("kind")
            .or_insert_with(|| resource.kind.clone().into());
    }
    value
}

/// The provisioning Clusters of `workspace`, from the watch cache.
pub(super) async fn read_provisioning(
    conn: &Connection,
    workspace: &str,
    objects: &mut ManagementObjects,
    trace: Trace<'_>,
) -> Result<(), ReadError> {
    let provisioning = resource("provisioning.cattle.io", "v1", "Cluster", "clusters");
    let found = list(
        conn,
        &provisioning,
        Some(workspace),
        None,
        "clusters.provisioning.cattle.io",
        trace,
    )
    .await?;
    objects.mark_read("clusters.provisioning.cattle.io");
    for cluster in &found {
        objects.add(cluster);
    }
    Ok(())
}

/// The records, Machines and control planes of `workspace` (of one cluster when `cluster`
/// names it), from the watch cache. Only the records must be read.
pub(super) async fn read_workspace(
    conn: &Connection,
    workspace: &str,
    cluster: Option<&str>,
    trace: Trace<'_>,
) -> Result<ManagementObjects, ReadError> {
    let mut objects = ManagementObjects::default();
    let by_cluster = |label: &str| cluster.map(|n| format!("{label}={n}"));
    let (records_selector, machines_selector) = (
        by_cluster("rke.cattle.io/cluster-name"),
        by_cluster("cluster.x-k8s.io/cluster-name"),
    );
    let records = resource("rke.cattle.io", "v1", "ETCDSnapshot", "etcdsnapshots");
    let machines = resource("cluster.x-k8s.io", "v1beta1", "Machine", "machines");
    let planes = resource("rke.cattle.io", "v1", "RKEControlPlane", "rkecontrolplanes");
    let ws = Some(workspace);
    let (records, machines, planes, plans) = tokio::join!(
        list(
            conn,
            &records,
            ws,
            records_selector.as_deref(),
            "etcdsnapshots.rke.cattle.io",
            trace
        ),
        list(
            conn,
            &machines,
            ws,
            machines_selector.as_deref(),
            "machines.cluster.x-k8s.io",
            trace
        ),
        list(
            conn,
            &planes,
            ws,
            None,
            "rkecontrolplanes.rke.cattle.io",
            trace
        ),
        read_machine_plans(conn, workspace, cluster, trace),
    );
    for record in records? {
        objects.add(&record);
    }
    objects.mark_read("etcdsnapshots.rke.cattle.io");
    for (found, kind) in [
        (machines, "machines.cluster.x-k8s.io"),
        (planes, "rkecontrolplanes.rke.cattle.io"),
    ] {
        match found {
            Ok(items) => {
                objects.mark_read(kind);
                for item in &items {
                    objects.add(item);
                }
            }
            Err(e) => trace(&format!("{}: not read, its checks are skipped", e.message)),
        }
    }
    match plans {
        Ok(plans) => {
            objects.mark_read("secrets");
            objects
                .machine_plans
                .get_or_insert_with(Vec::new)
                .extend(plans);
        }
        // Opt-in: without the Role the plan check says so; the rest stands.
        Err(e) => trace(&format!(
            "{}: machine plans not checked ({NEEDS_ROLE})",
            e.message
        )),
    }
    Ok(objects)
}

/// The backpopulate Feature and Rancher's version, those this user may read.
pub(super) async fn read_globals(conn: &Connection, trace: Trace<'_>) -> Vec<Value> {
    let features = resource("management.cattle.io", "v3", "Feature", "features");
    let settings = resource("management.cattle.io", "v3", "Setting", "settings");
    let (feature, setting) = tokio::join!(
        get(
            conn,
            &features,
            BACKPOPULATE_FEATURE,
            "features.management.cattle.io",
            trace
        ),
        get(
            conn,
            &settings,
            SERVER_VERSION_SETTING,
            "settings.management.cattle.io",
            trace
        ),
    );
    let mut out = Vec::new();
    for found in [feature, setting] {
        match found {
            Ok(found) => out.extend(found),
            Err(e) => trace(&format!("{}: not read", e.message)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_the_request_and_the_one_role_that_grants_it() {
        let mut e = ReadError::new("cannot list …: grant the read-only ClusterRole");
        e.http_status = Some(403);
        e.action = Some("list etcdsnapshots.rke.cattle.io in fleet-default".into());
        let message = refused_on_rancher(e, Some("fleet-default")).message;
        assert_eq!(
            message,
            "Rancher's management cluster refused to list etcdsnapshots.rke.cattle.io in \
             fleet-default (403 Forbidden); grant the Role k3sdoctor-rancher-read-only in namespace \
             fleet-default there (`k3sdoctor rbac rancher` prints it, with its binding)"
        );
        assert!(!message.contains("read-only ClusterRole"));
        let mut e = ReadError::new("x");
        e.http_status = Some(403);
        e.action = Some("get clusters.management.cattle.io c-m-1".into());
        assert!(
            refused_on_rancher(e, None)
                .message
                .contains("refused to get clusters.management.cattle.io c-m-1 (403 Forbidden); grant the ClusterRole k3sdoctor-rancher-read-only there")
        );
        let mut other = ReadError::new("kept");
        other.http_status = Some(500);
        other.action = Some("list x".into());
        assert_eq!(refused_on_rancher(other, None).message, "kept");
    }
}
