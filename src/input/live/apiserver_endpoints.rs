//! The `kubernetes` Service's addresses in `default`: what `apiserver-endpoint-stale` judges
//! and where each server's serving certificate is read. It returns what it read instead of
//! filling a `ClusterState`, so callers run it beside reads that fill one.

use k8s_openapi::api::core::v1::Endpoints;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::{Api, ListParams};

use super::refusal::{first_refusal, refusal};
use super::{Connection, PAGE_SIZE, ReadError, Trace};
use crate::model::apiserver_endpoints::{
    ApiserverEndpoints, PublishedAddresses, SERVICE_NAME, SERVICE_NAME_LABEL, SERVICE_NAMESPACE,
};
use crate::model::cluster_state::ClusterState;
use crate::model::collected::Collected;

/// `Endpoints default/kubernetes` and the Service's EndpointSlices, or why they were refused.
#[derive(Debug, Default, Clone)]
pub(crate) struct EndpointsRead {
    pub endpoints: Option<Vec<ApiserverEndpoints>>,
    pub slices: Option<Vec<ApiserverEndpoints>>,
    pub not_read: Option<String>,
}

impl EndpointsRead {
    pub(crate) fn fill(self, state: &mut ClusterState) {
        state.apiserver_addresses = match self.not_read {
            Some(why) => Collected::Refused(why),
            None => Collected::Read(PublishedAddresses {
                endpoints: self.endpoints,
                slices: self.slices,
            }),
        };
    }

    /// Every published address with its port, Endpoints first.
    pub(crate) fn addresses(&self) -> impl Iterator<Item = (&str, Option<i32>)> {
        self.endpoints
            .iter()
            .chain(self.slices.iter())
            .flatten()
            .flat_map(|e| e.addresses.iter().map(move |a| (a.ip.as_str(), e.port)))
    }
}

/// A 403 is an answer, not a failure: a role granted before these checks existed lacks the
/// rights, and the check says "not checked" while every other check runs.
pub(crate) async fn read_apiserver_endpoints(
    conn: &Connection,
    trace: Trace<'_>,
) -> Result<EndpointsRead, ReadError> {
    let endpoints_api: Api<Endpoints> = Api::namespaced(conn.client.clone(), SERVICE_NAMESPACE);
    let slices_api: Api<EndpointSlice> = Api::namespaced(conn.client.clone(), SERVICE_NAMESPACE);
    let get_action = format!("get endpoints {SERVICE_NAMESPACE}/{SERVICE_NAME}");
    let list_action = format!(
        "list endpointslices.discovery.k8s.io in {SERVICE_NAMESPACE} labelled \
         {SERVICE_NAME_LABEL}={SERVICE_NAME}"
    );
    let get_endpoints = async {
        let _in_flight = conn.activity.begin(&get_action);
        let found = endpoints_api
            .get_opt(SERVICE_NAME)
            .await
            .map_err(|e| ReadError::from_kube(&e, &get_action, &conn.server))?;
        trace(&format!(
            "{get_action}: {}",
            if found.is_some() {
                "found"
            } else {
                "not found"
            }
        ));
        Ok::<_, ReadError>(found)
    };
    let list_slices = async {
        let _in_flight = conn.activity.begin(&list_action);
        let params = ListParams::default()
            .labels(&format!("{SERVICE_NAME_LABEL}={SERVICE_NAME}"))
            .limit(PAGE_SIZE);
        let page = slices_api
            .list(&params)
            .await
            .map_err(|e| ReadError::from_kube(&e, &list_action, &conn.server))?;
        trace(&format!("{list_action}: {} items", page.items.len()));
        Ok::<_, ReadError>(page.items)
    };
    let (endpoints, slices) = tokio::join!(get_endpoints, list_slices);
    let refused = first_refusal([endpoints.as_ref().err(), slices.as_ref().err()]).and_then(|e| {
        refusal(e, trace, "apiserver-endpoint-stale not checked", |action| {
            format!(
                "this user may not {action} (grant the Role k3sdoctor-read-only in {SERVICE_NAMESPACE}: `k3sdoctor rbac read-only` prints it)"
            )
        })
    });
    if let Some(why) = refused {
        return Ok(EndpointsRead {
            not_read: Some(why),
            ..EndpointsRead::default()
        });
    }
    Ok(EndpointsRead {
        endpoints: Some(
            endpoints?
                .iter()
                .map(ApiserverEndpoints::from_endpoints)
                .collect(),
        ),
        slices: Some(match slices {
            Ok(slices) => slices.iter().map(ApiserverEndpoints::from_slice).collect(),
            // discovery.k8s.io/v1 is served from Kubernetes 1.21; older servers have Endpoints only.
            Err(e) if e.http_status == Some(404) => Vec::new(),
            Err(e) => return Err(e),
        }),
        not_read: None,
    })
}
