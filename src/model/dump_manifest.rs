//! `manifest.json`: what a dump read and what it could not, so whoever reads the dump later
//! knows a kind that is absent from one that was refused, and `--from-file` knows which kinds
//! were read whole (an empty list says nothing of its kind).

use serde::{Deserialize, Serialize};

/// The `kind` that tells a k3sdoctor dump's manifest from any other JSON file.
pub(crate) const MANIFEST_KIND: &str = "K3sdoctorDump";
pub(crate) const MANIFEST_FILE: &str = "manifest.json";

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Manifest {
    pub kind: String,
    pub k3sdoctor_version: String,
    pub server: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The local clock when the reads began (RFC 3339).
    pub taken_at: String,
    /// Every kind read whole, with its file and how many objects.
    pub read: Vec<KindRead>,
    /// Reads the API server refused (403), and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<Refusal>,
    /// Kinds the API server does not serve (their CRD is not installed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_served: Vec<String>,
    /// Each server's metrics: the files written, and why any could not be read.
    #[serde(default)]
    pub metrics: Vec<MetricsEntry>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct KindRead {
    pub kind: String,
    pub file: String,
    pub objects: usize,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Refusal {
    pub kind: String,
    pub refused: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MetricsEntry {
    /// The server's Node, or where it was read when no Node is known.
    pub server: String,
    /// `metrics/apiserver/<node>.txt`, or why it is missing.
    pub apiserver: Result<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etcd: Option<Result<String, String>>,
}

/// The file stem of the metrics of the server behind the connection when no server could be
/// read at its own address: no Node name starts with `_`.
pub(crate) const CONNECTION_STEM: &str = "_connection";
