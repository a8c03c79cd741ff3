//! The certificates the servers presented to handshakes of our own: the connection's
//! address and each server's, with the chain each sent and whether it is the cluster's.

use super::certificate::CertificateFacts;
use super::certificate_chain::ChainTrust;

/// A chain's verdict until `chain_trust::verify_chains` gives the real one.
pub(crate) const NOT_YET_VERIFIED: &str = "not verified yet";

/// What one server's address presented.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ServerCertificate {
    /// `host:port` as dialled (`[v6]:port` for IPv6).
    pub address: String,
    /// The Node that reports this address, when one does.
    pub node: Option<String>,
    pub serving: Result<CertificateFacts, String>,
    /// The chain presented (DER, end entity first); empty when none was read.
    pub chain: Vec<Vec<u8>>,
    /// Whether that chain is the cluster's.
    pub trust: ChainTrust,
}

impl ServerCertificate {
    /// `10.0.0.11:6443 (Node server-1)`.
    pub(crate) fn shown(&self) -> String {
        match &self.node {
            Some(node) => format!("{} (Node {node})", self.address),
            None => self.address.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ConnectionCertificates {
    /// The address the requests go to.
    pub server: String,
    /// The kubeconfig user's client certificate; `None` when it authenticates otherwise.
    pub client: Option<Result<CertificateFacts, String>>,
    /// What the address presented, or why it was not read.
    pub serving: Result<CertificateFacts, String>,
    /// The chain the address presented (DER, end entity first); empty when none was read.
    pub serving_chain: Vec<Vec<u8>>,
    /// Whether that chain is the cluster's (not judged behind Rancher, whose own it is).
    pub serving_trust: ChainTrust,
    /// Who presents it when that is not the API server itself (Rancher's proxy).
    pub presented_by: Option<String>,
    /// What each server's own address presented, or why they were not read.
    pub servers: Result<Vec<ServerCertificate>, String>,
}

/// What one handshake showed: the end entity's facts and the chain as sent (DER, end entity
/// first), for the verdict against the cluster's CA.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Presented {
    pub facts: super::certificate::CertificateFacts,
    pub chain: Vec<Vec<u8>>,
}
