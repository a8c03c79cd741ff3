//! Every kind of the kinds table as the API server answers it, for `k3sdoctor dump`: the
//! same requests `check` makes (so the read-only role is enough), each object handed on as
//! JSON the moment its page arrives, so a dump of 50,000 snapshots never holds them all.
//! Secrets come as metadata only: their data is never asked for.

use std::cell::RefCell;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use serde_json::{Value, json};

use super::secret_metadata::each_secret_metadata;
use super::upgrade_plans::{get_controller_env, list_plans, list_upgrade_jobs};
use super::{Connection, PAGE_SIZE, ReadError, Trace, get_opt_in, list_with};
use crate::distro::{Distro, LOCK_NAMESPACE};
use crate::model::admission_webhook::{Backend, ConfigurationKind, WebhookFacts};
use crate::model::apiserver_endpoints::SERVICE_NAME_LABEL;
use crate::model::kinds::{Kind, KindRow, SERVICE_NAME, SERVICE_NAMESPACE, Used};
use crate::model::node_event::NODE_SELECTOR;
use crate::model::upgrade_plan::PlanFacts;
use crate::model::upgrade_plans::UpgradePlans;

/// The Services the fail-closed admission webhooks name, for [`read_raw`]: both
/// configuration lists, as `check` reads them. A refused or unserved list names none (the
/// configurations' own read says why).
pub(crate) async fn webhook_services(
    conn: &Connection,
    trace: Trace<'_>,
) -> Result<Vec<(String, String)>, ReadError> {
    let mut services = std::collections::BTreeSet::new();
    for (kind, configuration) in [
        (
            Kind::ValidatingWebhookConfiguration,
            ConfigurationKind::Validating,
        ),
        (
            Kind::MutatingWebhookConfiguration,
            ConfigurationKind::Mutating,
        ),
    ] {
        let row = kind.row();
        let api: Api<DynamicObject> = Api::all_with(conn.client.clone(), &resource(row));
        let action = format!("list {}", row.plural);
        let params = ListParams::default().limit(PAGE_SIZE);
        let to_json = |o: DynamicObject| serde_json::to_value(o).unwrap_or_default();
        let objects = match list_with(&api, &action, conn, trace, to_json, params).await {
            Ok(objects) => objects,
            Err(e) if matches!(e.http_status, Some(403 | 404)) => continue,
            Err(e) => return Err(e),
        };
        let webhooks = objects
            .iter()
            .filter_map(|o| WebhookFacts::from_configuration(configuration, o).ok())
            .flatten();
        services.extend(
            webhooks
                .filter(|w| w.fail_closed)
                .filter_map(|w| match w.backend {
                    Backend::Service { namespace, name } => Some((namespace, name)),
                    _ => None,
                }),
        );
    }
    Ok(services.into_iter().collect())
}

/// What reading one kind came to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RawRead {
    /// Every object asked for was handed on: how many.
    Read(usize),
    /// The API server refused it (403): the action refused.
    Refused(String),
    /// The API server does not serve the kind (its CRD is not installed).
    NotServed,
}

fn resource(row: &KindRow) -> ApiResource {
    let (group, version) = row
        .api_version
        .rsplit_once('/')
        .unwrap_or(("", row.api_version));
    ApiResource {
        group: group.to_string(),
        version: version.to_string(),
        api_version: row.api_version.to_string(),
        kind: row.name.to_string(),
        plural: row.plural.to_string(),
    }
}

/// The object as a dump holds it: with its apiVersion and kind, which list items lack. An
/// object that will not serialise stops the dump rather than becoming `null` in it.
fn typed(row: &KindRow, object: impl serde::Serialize) -> std::io::Result<Value> {
    let mut value = serde_json::to_value(object).map_err(std::io::Error::other)?;
    if let Some(map) = value.as_object_mut() {
        map.insert("apiVersion".into(), Value::String(row.api_version.into()));
        map.insert("kind".into(), Value::String(row.name.into()));
    }
    Ok(value)
}

/// The SUC objects of `kind` in the Plans' namespaces beyond `home` (whose objects the kind's
/// own read took): its labelled Jobs, its `default-controller-env`. No Plans (not served,
/// refused) means none: the Plans' own read says why.
async fn upgrade_extras(
    conn: &Connection,
    kind: Kind,
    home: &str,
    each: &mut dyn FnMut(Value),
    trace: Trace<'_>,
) -> Result<usize, ReadError> {
    let plans = match list_plans(conn, trace).await {
        Ok(plans) => plans.unwrap_or_default(),
        Err(e) if e.http_status == Some(403) => Vec::new(),
        Err(e) => return Err(e),
    };
    let plans: Vec<PlanFacts> = plans
        .iter()
        .filter_map(|p| PlanFacts::from_json(p).ok())
        .collect();
    let mut found = 0;
    for namespace in UpgradePlans::namespaces(&plans) {
        let objects = match kind {
            Kind::Job if namespace != home => list_upgrade_jobs(conn, &namespace, trace).await?,
            Kind::ConfigMap => get_controller_env(conn, &namespace, trace)
                .await?
                .into_iter()
                .collect(),
            _ => Vec::new(),
        };
        found += objects.len();
        objects.into_iter().for_each(&mut *each);
    }
    Ok(found)
}

/// What is read by name: the locks' and snapshot ConfigMaps of both products; the `kubernetes`
/// Service's Endpoints and the webhooks' Services' (also whose EndpointSlices are listed); the
/// webhooks' Services.
fn by_name(kind: Kind, services: &[(String, String)]) -> Vec<(String, String)> {
    let kubernetes = (SERVICE_NAMESPACE.to_string(), SERVICE_NAME.to_string());
    match kind {
        Kind::ConfigMap => Distro::ALL
            .iter()
            .flat_map(|d| {
                [
                    d.core_lock(),
                    d.etcd_lock(),
                    d.snapshots_configmap(),
                    d.extra_metadata_configmap(),
                ]
            })
            .map(|name| (LOCK_NAMESPACE.to_string(), name))
            .collect(),
        Kind::Endpoints => std::iter::once(kubernetes.clone())
            .chain(services.iter().filter(|s| **s != kubernetes).cloned())
            .collect(),
        _ => services.to_vec(),
    }
}

/// The kubernetes Service's EndpointSlices in default, then each webhook Service's, by label.
async fn slices_by_service(
    conn: &Connection,
    ar: &ApiResource,
    services: &[(String, String)],
    hand_on: &dyn Fn(std::io::Result<Value>),
    trace: Trace<'_>,
) -> Result<usize, ReadError> {
    let row = Kind::EndpointSlice.row();
    let mut found = 0;
    for (namespace, name) in by_name(Kind::Endpoints, services) {
        let api: Api<DynamicObject> = Api::namespaced_with(conn.client.clone(), &namespace, ar);
        let selector = format!("{SERVICE_NAME_LABEL}={name}");
        let params = ListParams::default().limit(PAGE_SIZE).labels(&selector);
        let action = format!("list endpointslices in {namespace} labelled {selector}");
        let keep = |object: DynamicObject| hand_on(typed(row, object));
        found += list_with(&api, &action, conn, trace, keep, params)
            .await?
            .len();
    }
    Ok(found)
}

/// Reads `kind`'s objects as `check` asks for them, handing each to `each`; `each` failing
/// (the disk) stops the read with that error. `services`: the Services the fail-closed
/// admission webhooks name ([`webhook_services`]), whose Services, Endpoints and
/// EndpointSlices are read by name.
pub(crate) async fn read_raw(
    conn: &Connection,
    kind: Kind,
    services: &[(String, String)],
    each: &mut dyn FnMut(Value) -> std::io::Result<()>,
    trace: Trace<'_>,
) -> Result<Result<RawRead, std::io::Error>, ReadError> {
    let row = kind.row();
    let ar = resource(row);
    let api = |namespace: Option<&str>| -> Api<DynamicObject> {
        match namespace {
            Some(ns) => Api::namespaced_with(conn.client.clone(), ns, &ar),
            None => Api::all_with(conn.client.clone(), &ar),
        }
    };
    let failed: RefCell<Option<std::io::Error>> = RefCell::new(None);
    let each = RefCell::new(each);
    let hand_on = |value: std::io::Result<Value>| {
        if failed.borrow().is_none()
            && let Err(e) = value.and_then(|v| (each.borrow_mut())(v))
        {
            *failed.borrow_mut() = Some(e);
        }
    };
    let outcome = match kind {
        Kind::ConfigMap | Kind::Endpoints | Kind::Service => {
            async {
                let mut found = 0;
                for (namespace, name) in by_name(kind, services) {
                    let api = api(Some(&namespace));
                    if let Some(object) =
                        get_opt_in(&api, &namespace, &name, row.name, conn, trace).await?
                    {
                        hand_on(typed(row, object));
                        found += 1;
                    }
                }
                Ok(found)
            }
            .await
        }
        Kind::EndpointSlice => slices_by_service(conn, &ar, services, &hand_on, trace).await,
        Kind::Secret => {
            let each = |meta: &ObjectMeta| hand_on(typed(row, json!({ "metadata": meta })));
            each_secret_metadata(conn, trace, each).await
        }
        _ => {
            let namespace = match row.used {
                Used::All => None,
                Used::InNamespace(ns) | Used::Everywhere(ns) | Used::AlsoUpgrades(ns) => Some(ns),
            };
            let mut params = ListParams::default().limit(PAGE_SIZE);
            if kind == Kind::Event {
                params = params.fields(NODE_SELECTOR);
            }
            let action = match namespace {
                Some(ns) => format!("list {} in {ns}", row.plural),
                None => format!("list {}", row.plural),
            };
            let keep = |object: DynamicObject| hand_on(typed(row, object));
            list_with(&api(namespace), &action, conn, trace, keep, params)
                .await
                .map(|items| items.len())
        }
    };
    // system-upgrade-controller's Jobs and ConfigMap, in its Plans' namespaces.
    let outcome = match (outcome, row.used) {
        (Ok(n), Used::AlsoUpgrades(home)) => {
            let mut extra = |value: Value| hand_on(typed(row, value));
            upgrade_extras(conn, kind, home, &mut extra, trace)
                .await
                .map(|more| n + more)
        }
        (outcome, _) => outcome,
    };
    if let Some(e) = failed.into_inner() {
        return Ok(Err(e));
    }
    Ok(Ok(match outcome {
        Ok(n) => RawRead::Read(n),
        Err(e) if e.http_status == Some(403) => {
            RawRead::Refused(e.action.clone().unwrap_or(e.message))
        }
        Err(e) if e.http_status == Some(404) && row.custom => RawRead::NotServed,
        Err(e) => return Err(e),
    }))
}
