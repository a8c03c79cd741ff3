//! The admission webhooks `check` judges, and only the Services their fail-closed webhooks
//! name: both WebhookConfiguration lists, then for each Service a GET of it, a GET of its
//! Endpoints and a list of its EndpointSlices by `kubernetes.io/service-name` (only what the
//! apiservers of the Nodes' versions read: Endpoints before 1.33, EndpointSlices from 1.33).
//! Never a list of every Service. It takes no `ClusterState`, so callers run it concurrently
//! with reads that fill one.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{Endpoints, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};

use super::refusal::refusal;
use super::{Connection, PAGE_SIZE, ReadError, Trace, get_opt_in, list_with};
use crate::model::admission_webhook::{Backend, ConfigurationKind, WebhookFacts};
use crate::model::apiserver_endpoints::SERVICE_NAME_LABEL;
use crate::model::cluster_state::ClusterState;
use crate::model::collected::Collected;
use crate::model::kinds::Kind;
use crate::model::node::NodeFacts;
use crate::model::webhook_backends::{
    BackendObjects, WebhookBackends, endpoints_ready, slice_ready, sources_read,
};

/// What the reads came to: the webhooks (or why not) and their Services' state.
#[derive(Debug, Clone, Default)]
pub(crate) struct WebhooksRead {
    webhooks: Collected<Vec<WebhookFacts>>,
    backends: WebhookBackends,
    notes: Vec<String>,
}

impl WebhooksRead {
    pub(crate) fn fill(self, state: &mut ClusterState) {
        state.webhooks = self.webhooks;
        state.webhook_backends = self.backends;
        state.notes.extend(self.notes);
    }
}

/// What `admission-webhooks` says when the API server refuses either list.
const FORBIDDEN: &str = "needs list validatingwebhookconfigurations and \
     mutatingwebhookconfigurations: `k3sdoctor rbac read-only` prints the role";

fn needs(verb_kind: &str, namespace: &str) -> String {
    format!("needs {verb_kind} in {namespace}: `k3sdoctor rbac read-only` prints the role")
}

fn resource(kind: Kind) -> ApiResource {
    let row = kind.row();
    ApiResource {
        group: row.group().into(),
        version: row.version().into(),
        api_version: row.api_version.into(),
        kind: row.name.into(),
        plural: row.plural.into(),
    }
}

/// Both configuration lists, then the Services their fail-closed webhooks name. A 403 on
/// the lists makes the check "not checked"; on a Service's read, that namespace's webhooks
/// are not judged (the check's note says so).
pub(crate) async fn read_admission_webhooks(
    conn: &Connection,
    nodes: &[NodeFacts],
    trace: Trace<'_>,
) -> Result<WebhooksRead, ReadError> {
    // Both lists at once, then the Services: the whole read is three round trips or so.
    let (validating, mutating) = tokio::join!(
        list_configurations(conn, Kind::ValidatingWebhookConfiguration, trace),
        list_configurations(conn, Kind::MutatingWebhookConfiguration, trace),
    );
    let mut webhooks = Vec::new();
    let mut notes = Vec::new();
    for (kind, configuration, listed) in [
        (
            Kind::ValidatingWebhookConfiguration,
            ConfigurationKind::Validating,
            validating,
        ),
        (
            Kind::MutatingWebhookConfiguration,
            ConfigurationKind::Mutating,
            mutating,
        ),
    ] {
        let objects = match listed? {
            Ok(objects) => objects,
            Err(unread) => {
                return Ok(WebhooksRead {
                    webhooks: unread,
                    ..WebhooksRead::default()
                });
            }
        };
        for object in &objects {
            match WebhookFacts::from_configuration(configuration, object) {
                Ok(found) => webhooks.extend(found),
                Err(why) => notes.push(format!("skipped a {}: {why}", kind.name())),
            }
        }
    }
    let services: BTreeSet<(String, String)> = webhooks
        .iter()
        .filter(|w| w.fail_closed)
        .filter_map(|w| match &w.backend {
            Backend::Service { namespace, name } => Some((namespace.clone(), name.clone())),
            _ => None,
        })
        .collect();
    let backends = read_backends(conn, nodes, &services, trace).await?;
    Ok(WebhooksRead {
        webhooks: Collected::Read(webhooks),
        backends,
        notes,
    })
}

/// One configuration kind's objects; `Ok(Err(..))`: not read, and why (refused, not served).
async fn list_configurations(
    conn: &Connection,
    kind: Kind,
    trace: Trace<'_>,
) -> Result<Result<Vec<serde_json::Value>, Collected<Vec<WebhookFacts>>>, ReadError> {
    let api: Api<DynamicObject> = Api::all_with(conn.client.clone(), &resource(kind));
    let action = format!("list {}", kind.row().plural);
    let params = ListParams::default().limit(PAGE_SIZE);
    match list_with(&api, &action, conn, trace, to_json, params).await {
        Ok(objects) => Ok(Ok(objects)),
        // Every apiserver since 1.16 serves admissionregistration.k8s.io/v1; one that does
        // not has no webhooks of that version to call.
        Err(e) if e.http_status == Some(404) => {
            trace(&format!("{action}: not served"));
            Ok(Err(Collected::Failed(format!(
                "{} is not served",
                kind.row().api_version
            ))))
        }
        Err(e) => {
            let why = refusal(&e, trace, "admission-webhooks not checked", |_| {
                FORBIDDEN.to_string()
            })
            .ok_or(e)?;
            Ok(Err(Collected::Refused(why)))
        }
    }
}

fn to_json(object: DynamicObject) -> serde_json::Value {
    serde_json::to_value(object).unwrap_or_default()
}

/// Each Service by name, and what the apiservers resolve it through.
async fn read_backends(
    conn: &Connection,
    nodes: &[NodeFacts],
    services: &BTreeSet<(String, String)>,
    trace: Trace<'_>,
) -> Result<WebhookBackends, ReadError> {
    let (endpoints_read, slices_read, _) = sources_read(nodes);
    let asked = |read: bool| {
        if read {
            Collected::Read(BackendObjects::default())
        } else {
            Collected::NotAsked
        }
    };
    let mut backends = WebhookBackends {
        services: Collected::Read(BackendObjects::default()),
        endpoints: asked(endpoints_read),
        slices: asked(slices_read),
    };
    // A Service's reads at once, two Services at a time: a few round trips, a few connections.
    let services: Vec<&(String, String)> = services.iter().collect();
    let mut reads = Vec::new();
    for pair in services.chunks(2) {
        let mut batch = Vec::new();
        for (namespace, name) in pair.iter().copied() {
            batch.push(read_service(
                conn,
                namespace,
                name,
                (endpoints_read, slices_read),
                trace,
            ));
        }
        reads.extend(futures::future::join_all(batch).await);
    }
    for read in reads {
        let (namespace, name) = (read.namespace, read.name);
        record(
            &mut backends.services,
            namespace,
            name,
            read.service,
            "get services",
            trace,
        )?;
        if let Some(endpoints) = read.endpoints {
            record(
                &mut backends.endpoints,
                namespace,
                name,
                endpoints,
                "get endpoints",
                trace,
            )?;
        }
        if let Some(slices) = read.slices {
            record(
                &mut backends.slices,
                namespace,
                name,
                slices,
                "list endpointslices",
                trace,
            )?;
        }
    }
    Ok(backends)
}

/// What was read of one Service: present with its ready endpoints (`Some`), absent (`None`).
struct ServiceReads<'s> {
    namespace: &'s str,
    name: &'s str,
    service: Result<Option<usize>, ReadError>,
    endpoints: Option<Result<Option<usize>, ReadError>>,
    slices: Option<Result<Option<usize>, ReadError>>,
}

/// The Service by name, and its Endpoints and EndpointSlices where `(endpoints, slices)` asks,
/// all at once.
async fn read_service<'s>(
    conn: &Connection,
    namespace: &'s str,
    name: &'s str,
    (endpoints_read, slices_read): (bool, bool),
    trace: Trace<'_>,
) -> ServiceReads<'s> {
    let client = conn.client.clone();
    let service = async {
        get_opt_in(
            &Api::<Service>::namespaced(client.clone(), namespace),
            namespace,
            name,
            "Service",
            conn,
            trace,
        )
        .await
        .map(|found| found.map(|_| 0))
    };
    let endpoints = async {
        if !endpoints_read {
            return None;
        }
        let found = get_opt_in(
            &Api::<Endpoints>::namespaced(client.clone(), namespace),
            namespace,
            name,
            "Endpoints",
            conn,
            trace,
        )
        .await;
        Some(found.map(|found| {
            found.map(|e| endpoints_ready(&serde_json::to_value(e).unwrap_or_default()))
        }))
    };
    let slices = async {
        if !slices_read {
            return None;
        }
        let selector = format!("{SERVICE_NAME_LABEL}={name}");
        let action = format!("list endpointslices in {namespace} labelled {selector}");
        let listed = list_with(
            &Api::<EndpointSlice>::namespaced(client.clone(), namespace),
            &action,
            conn,
            trace,
            |s| slice_ready(&serde_json::to_value(s).unwrap_or_default()),
            ListParams::default().labels(&selector).limit(PAGE_SIZE),
        )
        .await;
        Some(listed.map(|ready| (!ready.is_empty()).then(|| ready.iter().sum())))
    };
    let (service, endpoints, slices) = tokio::join!(service, endpoints, slices);
    ServiceReads {
        namespace,
        name,
        service,
        endpoints,
        slices,
    }
}

/// One read's answer kept: present with its ready count, absent, or refused for the namespace.
fn record(
    objects: &mut Collected<BackendObjects>,
    namespace: &str,
    name: &str,
    read: Result<Option<usize>, ReadError>,
    verb_kind: &str,
    trace: Trace<'_>,
) -> Result<(), ReadError> {
    let Collected::Read(objects) = objects else {
        return Ok(());
    };
    match read {
        Ok(Some(ready)) => objects.add(namespace, name, ready),
        Ok(None) => objects.read_namespace(namespace),
        Err(e) => {
            let why = refusal(&e, trace, "that webhook's backend is not checked", |_| {
                needs(verb_kind, namespace)
            })
            .ok_or(e)?;
            objects.refused.insert(namespace.to_string(), why);
        }
    }
    Ok(())
}
