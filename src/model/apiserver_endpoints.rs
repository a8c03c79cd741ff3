//! The addresses the `kubernetes` Service in `default` publishes: its v1 Endpoints and its
//! EndpointSlices. kube-apiserver's lease endpoint reconciler writes both from the
//! `/registry/masterleases/<ip>` keys of the running apiservers, and k3s's `apiaddresses`
//! controller copies them into the `<prog>/apiaddresses` etcd key that agents' load balancers
//! follow (k3s `pkg/etcd/apiaddresses_controller.go`).

use k8s_openapi::api::core::v1::Endpoints;
use k8s_openapi::api::discovery::v1::EndpointSlice;

use crate::model::kinds::Kind;

pub(crate) use crate::model::kinds::{SERVICE_NAME, SERVICE_NAMESPACE};
/// The label that ties an EndpointSlice to its Service.
pub(crate) const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

pub(crate) use crate::version::shapes::EndpointsKind;

/// One published address, as k3s's apiaddresses controller sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PublishedAddress {
    pub ip: String,
    /// Endpoints: `addresses` (ready) vs `notReadyAddresses`; EndpointSlice:
    /// `conditions.ready`, where absent means ready (k3s counts `ready == nil || *ready`,
    /// `pkg/util/api.go`).
    pub ready: bool,
}

/// `Endpoints default/kubernetes`, or one EndpointSlice of the `kubernetes` Service.
/// What the `kubernetes` Service publishes: `Endpoints default/kubernetes` (none or one) and
/// its EndpointSlices; either is `None` when that kind was not read (a dump with only one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PublishedAddresses {
    pub endpoints: Option<Vec<ApiserverEndpoints>>,
    pub slices: Option<Vec<ApiserverEndpoints>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ApiserverEndpoints {
    pub kind: EndpointsKind,
    pub name: String,
    pub addresses: Vec<PublishedAddress>,
    /// The first port (6443 by default on k3s); `None` when the object lists none.
    pub port: Option<i32>,
}

impl ApiserverEndpoints {
    pub(crate) fn from_endpoints(endpoints: &Endpoints) -> ApiserverEndpoints {
        let subsets = endpoints.subsets.as_deref().unwrap_or_default();
        let addresses = subsets
            .iter()
            .flat_map(|s| {
                let ready = s.addresses.iter().flatten().map(|a| (a, true));
                let not_ready = s.not_ready_addresses.iter().flatten().map(|a| (a, false));
                ready.chain(not_ready)
            })
            .map(|(a, ready)| PublishedAddress {
                ip: a.ip.clone(),
                ready,
            })
            .collect();
        ApiserverEndpoints {
            kind: EndpointsKind::Endpoints,
            name: endpoints.metadata.name.clone().unwrap_or_default(),
            addresses,
            port: subsets
                .iter()
                .flat_map(|s| s.ports.iter().flatten())
                .map(|p| p.port)
                .next(),
        }
    }

    pub(crate) fn from_slice(slice: &EndpointSlice) -> ApiserverEndpoints {
        let addresses = slice
            .endpoints
            .iter()
            .flat_map(|e| {
                let ready = e.conditions.as_ref().and_then(|c| c.ready).unwrap_or(true);
                e.addresses.iter().map(move |ip| PublishedAddress {
                    ip: ip.clone(),
                    ready,
                })
            })
            .collect();
        ApiserverEndpoints {
            kind: EndpointsKind::EndpointSlice,
            name: slice.metadata.name.clone().unwrap_or_default(),
            addresses,
            port: slice.ports.iter().flatten().find_map(|p| p.port),
        }
    }

    /// `Endpoints default/kubernetes`, as findings name objects.
    pub(crate) fn shown(&self) -> String {
        format!(
            "{} {SERVICE_NAMESPACE}/{}",
            Kind::from(self.kind).name(),
            self.name
        )
    }

    /// The ready addresses: what the apiaddresses controller passes on to agents.
    pub(crate) fn ready_ips(&self) -> impl Iterator<Item = &str> {
        self.addresses
            .iter()
            .filter(|a| a.ready)
            .map(|a| a.ip.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn endpoints_keep_ready_and_not_ready_addresses_apart() {
        let e: Endpoints = serde_json::from_value(json!({
            "metadata": {"name": "kubernetes", "namespace": "default"},
            "subsets": [{"addresses": [{"ip": "10.0.0.1"}], "notReadyAddresses": [{"ip": "10.0.0.9"}],
                         "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}]
        }))
        .unwrap();
        let facts = ApiserverEndpoints::from_endpoints(&e);
        assert_eq!(facts.ready_ips().collect::<Vec<_>>(), ["10.0.0.1"]);
        assert_eq!(facts.addresses.len(), 2);
        assert_eq!(facts.port, Some(6443));
        assert_eq!(facts.shown(), "Endpoints default/kubernetes");
    }

    #[test]
    fn a_slice_endpoint_without_a_ready_condition_counts_as_ready() {
        let s: EndpointSlice = serde_json::from_value(json!({
            "metadata": {"name": "kubernetes", "namespace": "default",
                         "labels": {"kubernetes.io/service-name": "kubernetes"}},
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.1"]},
                          {"addresses": ["10.0.0.2"], "conditions": {"ready": true}},
                          {"addresses": ["10.0.0.3"], "conditions": {"ready": false}}],
            "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]
        }))
        .unwrap();
        let facts = ApiserverEndpoints::from_slice(&s);
        assert_eq!(
            facts.ready_ips().collect::<Vec<_>>(),
            ["10.0.0.1", "10.0.0.2"]
        );
        assert_eq!(facts.kind, EndpointsKind::EndpointSlice);
    }
}
