//! The Node Events in `default` that the certificate and re-encryption checks read. It takes
//! no `ClusterState`, so callers run it concurrently with reads that fill one.

use k8s_openapi::api::core::v1::Event;
use kube::api::{Api, ListParams};

use super::refusal::read_or_refused;
use super::{Connection, PAGE_SIZE, ReadError, Trace, list_with};
use crate::model::collected::Collected;
use crate::model::node_event::{NAMESPACE, NODE_SELECTOR, NodeEvent};

/// `LIST /api/v1/namespaces/default/events?fieldSelector=involvedObject.kind=Node`, paged. A
/// 403 is an answer, as for the `kubernetes` Endpoints: a role granted before these checks
/// existed lacks the right, and only the checks that need the Events say "not checked".
pub(crate) async fn read_node_events(
    conn: &Connection,
    trace: Trace<'_>,
) -> Result<Collected<Vec<NodeEvent>>, ReadError> {
    let api: Api<Event> = Api::namespaced(conn.client.clone(), NAMESPACE);
    let action = format!("list events in {NAMESPACE} with fieldSelector {NODE_SELECTOR}");
    let params = ListParams::default().fields(NODE_SELECTOR).limit(PAGE_SIZE);
    // Events of every object in `default` share the namespace; the selector keeps the pages
    // small, and `from_api` drops anything not about a Node should a server ignore it.
    let events = list_with(
        &api,
        &action,
        conn,
        trace,
        |e| NodeEvent::from_api(&e),
        params,
    )
    .await
    .map(|events| events.into_iter().flatten().collect());
    read_or_refused(
        events,
        trace,
        "the certificate and re-encryption Event checks are not checked",
        |_| format!("needs list events in {NAMESPACE}: `k3sdoctor rbac read-only` prints the role"),
    )
}
