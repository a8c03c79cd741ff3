//! The Services the admission webhooks name and their ready endpoints, as the apiserver
//! resolves them (with `--enable-aggregator-routing`, which k3s and RKE2 set): the Service,
//! then its Endpoints before Kubernetes 1.33 and its EndpointSlices from 1.33
//! (kubernetes#129837). Live, only the Services the webhooks name are read; a dump keeps
//! every one it holds, since its webhook configurations may come after them.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::model::apiserver_endpoints::SERVICE_NAME_LABEL;
use crate::model::collected::Collected;
use crate::model::node::NodeFacts;

/// The first minor whose apiserver resolves a webhook's Service through EndpointSlices
/// (kubernetes#129837); earlier ones read Endpoints.
pub(crate) const SLICES_FROM_MINOR: u64 = 33;

/// Which of Endpoints and EndpointSlices the apiservers resolve Services through, by the
/// versions of the control-plane Nodes (each runs its own apiserver): `(endpoints, slices)`,
/// both when no version is known, and whether one is.
pub(crate) fn sources_read(nodes: &[NodeFacts]) -> (bool, bool, bool) {
    let minors: BTreeSet<u64> = nodes
        .iter()
        .filter(|n| n.runs_control_plane())
        .filter_map(|n| n.version.as_ref().map(|v| v.minor))
        .collect();
    let known = !minors.is_empty();
    (
        !known || minors.iter().any(|m| *m < SLICES_FROM_MINOR),
        !known || minors.iter().any(|m| *m >= SLICES_FROM_MINOR),
        known,
    )
}

/// `namespace/name` of a Service.
pub(crate) type ServiceKey = (String, String);

/// What was read of one kind (Services, Endpoints or EndpointSlices).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct BackendObjects {
    /// The namespaces read: live, those of the Services the webhooks name; in a dump, every
    /// namespace that holds one of the kind (a dump of one namespace says nothing of others).
    pub namespaces: BTreeSet<String>,
    /// Ready endpoints per Service (a Service itself counts 0: present).
    pub ready: BTreeMap<ServiceKey, usize>,
    /// Namespaces whose read was refused, with the reason.
    pub refused: BTreeMap<String, String>,
}

/// What one kind shows of one Service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seen {
    /// Present, with this many ready endpoints.
    Present(usize),
    Absent,
    /// Not read for that namespace, and why.
    NotRead(String),
}

impl BackendObjects {
    /// One object of a namespace read (its ready endpoints add up: a Service's EndpointSlices).
    pub(crate) fn add(&mut self, namespace: &str, service: &str, ready: usize) {
        self.namespaces.insert(namespace.to_string());
        *self
            .ready
            .entry((namespace.to_string(), service.to_string()))
            .or_default() += ready;
    }

    /// A namespace read and found without the object.
    pub(crate) fn read_namespace(&mut self, namespace: &str) {
        self.namespaces.insert(namespace.to_string());
    }
}

/// Services, Endpoints and EndpointSlices as read, each kind on its own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct WebhookBackends {
    pub services: Collected<BackendObjects>,
    pub endpoints: Collected<BackendObjects>,
    pub slices: Collected<BackendObjects>,
}

impl WebhookBackends {
    pub(crate) fn service(&self, namespace: &str, name: &str) -> Seen {
        seen(&self.services, "Services", namespace, name)
    }

    pub(crate) fn endpoints(&self, namespace: &str, name: &str) -> Seen {
        seen(&self.endpoints, "Endpoints", namespace, name)
    }

    pub(crate) fn slices(&self, namespace: &str, name: &str) -> Seen {
        seen(&self.slices, "EndpointSlices", namespace, name)
    }
}

fn seen(read: &Collected<BackendObjects>, kind: &str, namespace: &str, name: &str) -> Seen {
    let objects = match read {
        Collected::Read(objects) => objects,
        Collected::NotAsked => return Seen::NotRead(format!("{kind} not read")),
        lacking => return Seen::NotRead(lacking.why_not().unwrap_or_default().to_string()),
    };
    if let Some(why) = objects.refused.get(namespace) {
        return Seen::NotRead(why.clone());
    }
    if !objects.namespaces.contains(namespace) {
        return Seen::NotRead(format!("no {kind} of {namespace} read"));
    }
    match objects
        .ready
        .get(&(namespace.to_string(), name.to_string()))
    {
        Some(ready) => Seen::Present(*ready),
        None => Seen::Absent,
    }
}

/// The ready addresses of an Endpoints object (`subsets[].addresses`; `notReadyAddresses`
/// do not count).
pub(crate) fn endpoints_ready(object: &Value) -> usize {
    object
        .get("subsets")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| s.get("addresses").and_then(Value::as_array))
        .map(Vec::len)
        .sum()
}

/// The ready endpoints of an EndpointSlice: `conditions.ready` true or unset (nil means
/// ready, discovery/v1 `EndpointConditions`).
pub(crate) fn slice_ready(object: &Value) -> usize {
    object
        .get("endpoints")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|e| e.pointer("/conditions/ready").and_then(Value::as_bool) != Some(false))
        .count()
}

/// The Service an EndpointSlice belongs to, by its label.
pub(crate) fn slice_service(object: &Value) -> Option<&str> {
    object
        .pointer("/metadata/labels")?
        .get(SERVICE_NAME_LABEL)?
        .as_str()
}

#[cfg(test)]
mod tests;
