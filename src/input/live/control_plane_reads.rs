//! What `check` reads beyond the locks and the snapshots, for one cluster or each member of a
//! fleet alike: the `kubernetes` Service's addresses, the Node Events, and the certificates the
//! connection and every server present, the metadata of the Secrets in kube-system, and the
//! HelmCharts and their Jobs there. Returned as a value so that it runs beside the
//! snapshot reads, which fill the `ClusterState` themselves.

use super::connection_certificates::{ConnectionCertificates, read_connection_certificates};
use super::node_events::NodeEventsRead;
use super::packaged_charts::{PackagedChartsRead, read_packaged_charts};
use super::secret_metadata::{SecretMetadataRead, read_secret_metadata};
use super::server_certificates::{handshake_targets, read_server_certificates};
use super::{
    Connection, EndpointsRead, ReadError, Trace, read_apiserver_endpoints, read_node_events,
};
use crate::input::ClusterState;
use crate::model::node::NodeFacts;

#[derive(Clone)]
pub struct ControlPlaneReads {
    endpoints: EndpointsRead,
    events: NodeEventsRead,
    certificates: ConnectionCertificates,
    secrets: SecretMetadataRead,
    charts: PackagedChartsRead,
}

impl ControlPlaneReads {
    /// The lists at once; the servers' handshakes follow the addresses the Endpoints publish
    /// (`nodes`: the Nodes already read, for the addresses nothing publishes).
    pub async fn read(
        conn: &Connection,
        nodes: &[NodeFacts],
        trace: Trace<'_>,
    ) -> Result<ControlPlaneReads, ReadError> {
        let endpoints_then_servers = async {
            let endpoints = read_apiserver_endpoints(conn, trace).await;
            let published = endpoints.iter().flat_map(EndpointsRead::addresses);
            let targets = handshake_targets(nodes, published, &conn.server);
            let servers = read_server_certificates(conn, targets).await;
            (endpoints, servers)
        };
        let ((endpoints, servers), events, mut certificates, secrets, charts) = tokio::join!(
            endpoints_then_servers,
            read_node_events(conn, trace),
            read_connection_certificates(conn),
            read_secret_metadata(conn, trace),
            read_packaged_charts(conn, trace),
        );
        certificates.servers = servers;
        Ok(ControlPlaneReads {
            endpoints: endpoints?,
            events: events?,
            certificates,
            secrets: secrets?,
            charts: charts?,
        })
    }

    pub fn fill(mut self, state: &mut ClusterState) {
        std::mem::take(&mut self.endpoints).fill(state);
        self.fill_polled(state);
    }

    /// Everything but the Endpoints, which `serve` watches: what its minute-by-minute reads
    /// add to the watched state of each evaluation.
    pub fn fill_polled(self, state: &mut ClusterState) {
        self.events.fill(state);
        state.certificates = Some(self.certificates);
        self.secrets.fill(state);
        self.charts.fill(state);
    }
}
