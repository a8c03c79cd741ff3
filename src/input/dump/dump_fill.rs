//! How each kind of object a dump holds fills the state, what a kind listed and found empty
//! means, and what the dump lacks.

use std::sync::Arc;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Endpoints, Event, Node};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Found;
use crate::input::ReadError;
use crate::model::admission_webhook::{ConfigurationKind, WebhookFacts};
use crate::model::apiserver_endpoints::ApiserverEndpoints;
use crate::model::cluster_state::ClusterState;
use crate::model::configmap::ConfigMapFacts;
use crate::model::helm_chart::HelmChartFacts;
use crate::model::helm_job::HelmJobFacts;
use crate::model::kinds::{Kind, SERVICE_NAME, SERVICE_NAMESPACE, dump_command};
use crate::model::lease::LeaseFacts;
use crate::model::node::NodeFacts;
use crate::model::node_event::NodeEvent;
use crate::model::secret_metadata::SecretMeta;
use crate::model::snapshot_file::SnapshotFile;
use crate::model::upgrade_job::UpgradeJobFacts;
use crate::model::upgrade_plan::PlanFacts;
use crate::model::upgrade_plans::ControllerEnv;
use crate::model::webhook_backends::{endpoints_ready, slice_ready, slice_service};

/// One object of `kind` into `state`.
pub(super) fn add_object(
    state: &mut ClusterState,
    kind: &str,
    found: &Found,
) -> Result<(), ReadError> {
    let Some(kind) = Kind::named(kind) else {
        return Ok(());
    };
    match kind {
        Kind::Node => push(
            &mut state.nodes,
            NodeFacts::from_api(&typed::<Node>(found)?),
        ),
        Kind::Lease => push(
            &mut state.leases,
            LeaseFacts::from_api(&typed::<Lease>(found)?),
        ),
        Kind::ConfigMap => add_configmap(state, found)?,
        Kind::SnapshotFile => push(
            &mut state.snapshot_files,
            Arc::new(SnapshotFile::from_json(&found.value)),
        ),
        Kind::Endpoints => add_endpoints(state, found)?,
        Kind::EndpointSlice => add_slice(state, found)?,
        Kind::Service => {
            let (namespace, name) = namespace_and_name(found);
            state
                .webhook_backends
                .services
                .add(Default::default, |b| b.add(namespace, name, 0));
        }
        Kind::ValidatingWebhookConfiguration | Kind::MutatingWebhookConfiguration => {
            add_webhooks(state, kind, found)
        }
        Kind::Secret => {
            let secret = secret_metadata(found)?;
            state.secret_metadata.add(Vec::new, |s| s.push(secret));
        }
        Kind::Event => {
            // Any Event says the kind was dumped; only those about Nodes are kept.
            let about_nodes = NodeEvent::from_api(&typed::<Event>(found)?);
            state.node_events.add(Vec::new, |e| e.extend(about_nodes));
        }
        // Parsed as live reads parse them: an odd object is skipped with a note.
        Kind::HelmChart => match HelmChartFacts::from_json(&found.value) {
            Ok(chart) => state.packaged_charts.add(Default::default, |p| {
                p.charts.get_or_insert_with(Vec::new).push(chart)
            }),
            Err(why) => state
                .notes
                .push(format!("skipped a HelmChart in {}: {why}", found.file)),
        },
        Kind::Job if found.value.pointer(UPGRADE_JOB_LABEL).is_some() => {
            add_upgrade_object(state, kind, found)
        }
        Kind::Plan => add_upgrade_object(state, kind, found),
        Kind::Job => {
            let job = HelmJobFacts::from_json(&found.value);
            state.packaged_charts.add(Default::default, |p| {
                let jobs = p.jobs.get_or_insert_with(Vec::new);
                if let Ok(job) = &job {
                    jobs.extend(job.clone());
                }
            });
            if let Err(why) = job {
                state
                    .notes
                    .push(format!("skipped a Job in {}: {why}", found.file));
            }
        }
    }
    Ok(())
}

/// A collector that listed a kind and found none of it in kube-system did read it: empty,
/// not unknown.
pub(super) fn collected_empty(state: &mut ClusterState, kind: &str) {
    let Some(kind) = Kind::named(kind) else {
        return;
    };
    match kind {
        Kind::Node => _ = state.nodes.get_or_insert_with(Vec::new),
        Kind::Lease => _ = state.leases.get_or_insert_with(Vec::new),
        Kind::ConfigMap => _ = state.configmaps.get_or_insert_with(Vec::new),
        Kind::SnapshotFile => _ = state.snapshot_files.get_or_insert_with(Vec::new),
        Kind::Endpoints => state.apiserver_addresses.add(Default::default, |a| {
            _ = a.endpoints.get_or_insert_with(Vec::new)
        }),
        Kind::EndpointSlice => state.apiserver_addresses.add(Default::default, |a| {
            _ = a.slices.get_or_insert_with(Vec::new)
        }),
        Kind::Event => state.node_events.add(Vec::new, |_| {}),
        Kind::Secret => state.secret_metadata.add(Vec::new, |_| {}),
        Kind::HelmChart => state.packaged_charts.add(Default::default, |p| {
            _ = p.charts.get_or_insert_with(Vec::new)
        }),
        Kind::Job => state.packaged_charts.add(Default::default, |p| {
            _ = p.jobs.get_or_insert_with(Vec::new)
        }),
        Kind::Plan => state.upgrade_plans.add(Default::default, |u| {
            _ = u.plans.get_or_insert_with(Vec::new)
        }),
        Kind::ValidatingWebhookConfiguration | Kind::MutatingWebhookConfiguration => {
            state.webhooks.add(Vec::new, |_| {})
        }
        // No namespace is known read: every Service stays "not read".
        Kind::Service => state
            .webhook_backends
            .services
            .add(Default::default, |_| {}),
    }
}

/// What a dump lacks of each optional read, and the kubectl command that adds it.
pub(super) fn mark_not_in_dump(state: &mut ClusterState) {
    use crate::model::collected::Collected as Read;
    fn lacking<T>(read: &mut Read<T>, kinds: &[Kind], also: &str) {
        if matches!(read, Read::NotAsked) {
            *read = Read::NotInDump(format!("not in dump (add `{}`{also})", dump_command(kinds)));
        }
    }
    lacking(
        &mut state.apiserver_addresses,
        &[Kind::Endpoints, Kind::EndpointSlice],
        "",
    );
    lacking(&mut state.node_events, &[Kind::Event], "");
    lacking(
        &mut state.secret_metadata,
        &[Kind::Secret],
        "; k3sdoctor drops their data when it reads them",
    );
    lacking(&mut state.upgrade_plans, &[Kind::Plan], "");
    // SUC's Jobs without its Plans: the check says the Plans are not in the dump.
    if let Read::Read(upgrades) = &state.upgrade_plans
        && upgrades.plans.is_none()
    {
        state.upgrade_plans = Read::NotInDump(format!(
            "Plans not in dump (add `{}`)",
            dump_command(&[Kind::Plan])
        ));
    }
    lacking(
        &mut state.webhooks,
        &[
            Kind::ValidatingWebhookConfiguration,
            Kind::MutatingWebhookConfiguration,
        ],
        "",
    );
    // The webhooks may name a Service in any namespace.
    let backends = format!(
        "not in dump (add `kubectl get {} -A -o yaml`)",
        [Kind::Service, Kind::Endpoints, Kind::EndpointSlice]
            .map(|k| k.row().plural)
            .join(",")
    );
    let backends_read = &mut state.webhook_backends;
    for read in [
        &mut backends_read.services,
        &mut backends_read.endpoints,
        &mut backends_read.slices,
    ] {
        if matches!(read, Read::NotAsked) {
            *read = Read::NotInDump(backends.clone());
        }
    }
    // packaged-charts words its own "not in dump" (analysers.rs), naming neither kind.
    if matches!(state.packaged_charts, Read::NotAsked) {
        state.packaged_charts = Read::NotInDump("not in dump".into());
    }
}

/// A kube-system ConfigMap into the state's, and SUC's `default-controller-env` (in any
/// namespace) into the upgrade plans'.
fn add_configmap(state: &mut ClusterState, found: &Found) -> Result<(), ReadError> {
    if let Some(env) = ControllerEnv::from_json(&found.value) {
        state.upgrade_plans.add(Default::default, |u| {
            u.controller_env.get_or_insert_with(Vec::new).push(env)
        });
    }
    // SUC's ConfigMap elsewhere is not one of kube-system's.
    if Kind::ConfigMap.row().namespace() == namespace_of(found) {
        push(
            &mut state.configmaps,
            ConfigMapFacts::from_api(&typed::<ConfigMap>(found)?),
        );
    }
    Ok(())
}

/// A Plan or a Job of system-upgrade-controller, parsed as the live read parses them: an odd
/// object is skipped with a note.
fn add_upgrade_object(state: &mut ClusterState, kind: Kind, found: &Found) {
    let skipped = if kind == Kind::Plan {
        PlanFacts::from_json(&found.value).map(|plan| {
            state.upgrade_plans.add(Default::default, |u| {
                u.plans.get_or_insert_with(Vec::new).push(plan)
            })
        })
    } else {
        UpgradeJobFacts::from_json(&found.value).map(|job| {
            state.upgrade_plans.add(Default::default, |u| {
                u.jobs.get_or_insert_with(Vec::new).extend(job)
            })
        })
    };
    if let Err(why) = skipped {
        let name = kind.name();
        state
            .notes
            .push(format!("skipped a {name} in {}: {why}", found.file));
    }
}

/// The label path that makes a Job system-upgrade-controller's.
const UPGRADE_JOB_LABEL: &str = "/metadata/labels/upgrade.cattle.io~1plan";

fn namespace_of(found: &Found) -> &str {
    found
        .value
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Endpoints: every Service's feeds the webhooks' check; any in default says the kind was
/// dumped there, and the kubernetes Service's are the apiserver addresses.
fn add_endpoints(state: &mut ClusterState, found: &Found) -> Result<(), ReadError> {
    let endpoints = typed::<Endpoints>(found)?;
    let (namespace, name) = namespace_and_name(found);
    state.webhook_backends.endpoints.add(Default::default, |b| {
        b.add(namespace, name, endpoints_ready(&found.value))
    });
    if namespace == SERVICE_NAMESPACE {
        let ours = (name == SERVICE_NAME).then(|| ApiserverEndpoints::from_endpoints(&endpoints));
        state.apiserver_addresses.add(Default::default, |a| {
            a.endpoints.get_or_insert_with(Vec::new).extend(ours)
        });
    }
    Ok(())
}

/// EndpointSlices, by the Service their label names, likewise.
fn add_slice(state: &mut ClusterState, found: &Found) -> Result<(), ReadError> {
    let slice = typed::<EndpointSlice>(found)?;
    let (namespace, _) = namespace_and_name(found);
    let service = slice_service(&found.value);
    state
        .webhook_backends
        .slices
        .add(Default::default, |b| match service {
            Some(service) => b.add(namespace, service, slice_ready(&found.value)),
            None => b.read_namespace(namespace),
        });
    // `kubectl -n default get endpointslices` has every Service's; only the kubernetes
    // Service's count, and their presence says the kind was dumped.
    if namespace == SERVICE_NAMESPACE {
        let ours = service == Some(SERVICE_NAME);
        state.apiserver_addresses.add(Default::default, |a| {
            let slices = a.slices.get_or_insert_with(Vec::new);
            if ours {
                slices.push(ApiserverEndpoints::from_slice(&slice));
            }
        });
    }
    Ok(())
}

/// Every webhook of a configuration; an odd one is skipped with a note, as live.
fn add_webhooks(state: &mut ClusterState, kind: Kind, found: &Found) {
    let configuration = if kind == Kind::ValidatingWebhookConfiguration {
        ConfigurationKind::Validating
    } else {
        ConfigurationKind::Mutating
    };
    match WebhookFacts::from_configuration(configuration, &found.value) {
        Ok(webhooks) => state.webhooks.add(Vec::new, |w| w.extend(webhooks)),
        Err(why) => state.notes.push(format!(
            "skipped a {} in {}: {why}",
            kind.name(),
            found.file
        )),
    }
}

/// An object's namespace and name (empty when absent).
fn namespace_and_name(found: &Found) -> (&str, &str) {
    let text = |pointer: &str| {
        found
            .value
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    (text("/metadata/namespace"), text("/metadata/name"))
}

fn push<T>(collection: &mut Option<Vec<T>>, item: T) {
    collection.get_or_insert_with(Vec::new).push(item);
}

/// A Secret's metadata (its data was dropped when it was parsed); a malformed one is named by
/// what its metadata says, which holds no secret value.
fn secret_metadata(found: &Found) -> Result<SecretMeta, ReadError> {
    let metadata = found.value.get("metadata").cloned().unwrap_or_default();
    serde_json::from_value::<ObjectMeta>(metadata)
        .map(|meta| SecretMeta::from_meta(&meta))
        .map_err(|e| {
            ReadError::new(format!(
                "dump file {}: the metadata of a Secret is malformed: {e}; re-create it with \
                 kubectl get -o yaml",
                found.file
            ))
        })
}

fn typed<T: DeserializeOwned>(found: &Found) -> Result<T, ReadError> {
    serde_json::from_value(found.value.clone()).map_err(|e| {
        let kind = found
            .value
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("object");
        let name = found
            .value
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("?");
        ReadError::new(format!(
            "dump file {}: {kind} {name} is malformed: {e}; re-create it with kubectl get -o yaml",
            found.file
        ))
    })
}
