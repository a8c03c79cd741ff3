//! Kubeconfigs with several contexts, one per cluster of a fleet, as Rancher hands them out.

use std::path::{Path, PathBuf};

use serde_json::json;

/// A context of a fleet kubeconfig: its name, the API server URL, the bearer token and, for
/// an HTTPS server, the CA certificate (PEM) to trust.
pub(crate) struct FleetContext<'a> {
    pub name: &'a str,
    pub server: &'a str,
    pub token: &'a str,
    pub ca_pem: Option<&'a str>,
}

/// Writes `dir/file` with one cluster, one user and one context per entry (each named after
/// the context, so that credentials cannot be shared by accident) and the first context as
/// current. JSON is YAML, so kubeconfig readers take it as is.
pub(crate) fn write_fleet_kubeconfig(
    dir: &Path,
    file: &str,
    contexts: &[FleetContext<'_>],
) -> PathBuf {
    let config = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": contexts.iter().map(|c| {
            let mut cluster = json!({"server": c.server});
            if let Some(pem) = c.ca_pem {
                use base64::Engine as _;
                cluster["certificate-authority-data"] =
                    json!(base64::engine::general_purpose::STANDARD.encode(pem));
            }
            json!({"name": format!("{}-cluster", c.name), "cluster": cluster})
        }).collect::<Vec<_>>(),
        "users": contexts.iter().map(|c| json!({
            "name": format!("{}-user", c.name),
            "user": {"token": c.token},
        })).collect::<Vec<_>>(),
        "contexts": contexts.iter().map(|c| json!({
            "name": c.name,
            "context": {"cluster": format!("{}-cluster", c.name), "user": format!("{}-user", c.name)},
        })).collect::<Vec<_>>(),
        "current-context": contexts.first().map(|c| c.name).unwrap_or_default(),
        "preferences": {},
    });
    let path = dir.join(file);
    std::fs::write(&path, serde_json::to_string_pretty(&config).unwrap())
        .unwrap_or_else(|e| panic!("write kubeconfig {}: {e}", path.display()));
    path
}

/// A URL on which nothing listens: the port was bound and released, so connecting is refused.
pub(crate) fn closed_port_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a port");
    let port = listener.local_addr().expect("local addr").port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}
