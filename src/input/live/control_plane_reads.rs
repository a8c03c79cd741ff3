//! What `check` reads beyond the locks and the snapshots, for one cluster or each member of a
//! fleet alike: the `kubernetes` Service's addresses, the Node Events, and the certificates the
//! connection and every server present, the metadata of the Secrets in kube-system, the
//! HelmCharts and their Jobs there, system-upgrade-controller's Plans and their Jobs, the
//! admission webhooks and the Services they name, and each
//! server's datastore metrics, read after the snapshot lists and filled in at once.

use super::admission_webhooks::{WebhooksRead, read_admission_webhooks};
use super::chain_trust::verify_chains;
use super::connection_certificates::{ConnectionCertificates, read_connection_certificates};
use super::kine_probe::probe_kine;
use super::packaged_charts::{PackagedChartsRead, read_packaged_charts};
use super::secret_metadata::read_secret_metadata;
use super::server_certificates::{
    MOST_HANDSHAKES_AT_ONCE, handshake_targets, read_server_certificates,
};
use super::server_metrics::read_server_metrics;
use super::upgrade_plans::{UpgradePlansRead, read_upgrade_plans};
use super::{
    Connection, EndpointsRead, ReadError, Trace, read_apiserver_endpoints, read_node_events,
};
use crate::model::cluster_state::ClusterState;
use crate::model::collected::Collected;
use crate::model::kine_probe::KineProbe;
use crate::model::node::NodeFacts;
use crate::model::node_event::NodeEvent;
use crate::model::secret_metadata::SecretMeta;
use crate::model::server_metrics::ServerMetrics;

#[derive(Clone)]
pub(crate) struct ControlPlaneReads {
    endpoints: EndpointsRead,
    events: Collected<Vec<NodeEvent>>,
    certificates: ConnectionCertificates,
    secrets: Collected<Vec<SecretMeta>>,
    charts: PackagedChartsRead,
    upgrades: UpgradePlansRead,
    webhooks: WebhooksRead,
    metrics: Vec<ServerMetrics>,
    kine: Option<KineProbe>,
}

impl ControlPlaneReads {
    /// The lists, three at a time; the servers' handshakes follow the addresses the Endpoints publish
    /// (`nodes`: the Nodes already read, for the addresses nothing publishes).
    pub(crate) async fn read(
        conn: &Connection,
        nodes: &[NodeFacts],
        trace: Trace<'_>,
    ) -> Result<ControlPlaneReads, ReadError> {
        // Three chains of requests after the snapshot lists: HTTP/1.1 sends one request per
        // connection at a time, so each more in flight opens a connection and a TLS handshake
        // of its own, which on the real API server cost more than the overlap saves
        // (docs/performance.md). The webhooks' reads (two lists, then two Services at a
        // time) are the exception, measured to pay for it: in a row they added a round trip
        // per request to check. The handshakes with the servers (no API request) run beside
        // the charts.
        // The handshakes and the metrics reads dial the same servers: one bound for both, so
        // thousands of published addresses cannot exhaust the open-file limit.
        let dials = tokio::sync::Semaphore::new(MOST_HANDSHAKES_AT_ONCE);
        let endpoints_then_charts = async {
            let endpoints = read_apiserver_endpoints(conn, trace).await;
            let published: Vec<(&str, Option<i32>)> = endpoints
                .iter()
                .flat_map(EndpointsRead::addresses)
                .collect();
            let targets = handshake_targets(nodes, published.iter().copied(), &conn.server);
            let (charts, servers, metrics) = tokio::join!(
                read_packaged_charts(conn, trace),
                read_server_certificates(conn, targets, &dials),
                read_server_metrics(conn, nodes, &published, &dials),
            );
            let oldest = charts
                .as_ref()
                .ok()
                .and_then(PackagedChartsRead::oldest_write);
            let kine = probe_kine(conn, nodes, oldest, trace).await;
            (endpoints, charts, servers, metrics, kine)
        };
        // The Plans' reads follow the Secrets' on the same connection: still three at a time.
        let events_then_secrets = async {
            let events = read_node_events(conn, trace).await;
            let secrets = read_secret_metadata(conn, trace).await;
            (events, secrets, read_upgrade_plans(conn, trace).await)
        };
        // The webhooks and the Services they name beside the rest, from the start: following
        // the Secrets they made that chain the slowest (tests/bench/webhooks.rs measures it).
        let (
            (endpoints, charts, servers, metrics, kine),
            (events, secrets, upgrades),
            webhooks,
            mut certificates,
        ) = tokio::join!(
            endpoints_then_charts,
            events_then_secrets,
            read_admission_webhooks(conn, nodes, trace),
            read_connection_certificates(conn),
        );
        certificates.servers = servers;
        verify_chains(conn, &mut certificates, trace).await;
        Ok(ControlPlaneReads {
            endpoints: endpoints?,
            events: events?,
            certificates,
            secrets: secrets?,
            charts: charts?,
            upgrades: upgrades?,
            webhooks: webhooks?,
            metrics,
            kine,
        })
    }

    pub(crate) fn fill(mut self, state: &mut ClusterState) {
        std::mem::take(&mut self.endpoints).fill(state);
        self.fill_polled(state);
    }

    /// Everything but the Endpoints, which `serve` watches: what its minute-by-minute reads
    /// add to the watched state of each evaluation.
    pub(crate) fn fill_polled(self, state: &mut ClusterState) {
        state.node_events = self.events;
        state.certificates = Some(self.certificates);
        state.secret_metadata = self.secrets;
        self.charts.fill(state);
        self.upgrades.fill(state);
        self.webhooks.fill(state);
        state.server_metrics = Collected::Read(self.metrics);
        state.kine_probe = self.kine;
    }
}
