//! HTTPS with a self-signed certificate (`FakeApi::start_tls`).

use crate::client::{Req, Response, try_send_over};
use crate::support::fake_api::{FakeApi, Fault, Role};
use base64::Engine as _;
use std::io;
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};

type TlsStream = StreamOwned<ClientConnection, TcpStream>;

/// A rustls (ring) client trusting exactly `ca_pem` (nothing when `None`).
fn client_config(ca_pem: Option<&str>) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    if let Some(pem) = ca_pem {
        for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
            roots
                .add(cert.expect("PEM certificate"))
                .expect("trust anchor");
        }
        assert_eq!(roots.len(), 1);
    }
    let config = ClientConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    Arc::new(config)
}

/// Connect and complete the TLS handshake, verifying the server as `server_name`.
fn connect(api: &FakeApi, ca_pem: Option<&str>, server_name: &str) -> io::Result<TlsStream> {
    let name = ServerName::try_from(server_name.to_string()).expect("server name");
    let mut conn = ClientConnection::new(client_config(ca_pem), name).map_err(io::Error::other)?;
    let mut tcp = TcpStream::connect(api.addr())?;
    tcp.set_read_timeout(Some(Duration::from_secs(10)))?;
    while conn.is_handshaking() {
        conn.complete_io(&mut tcp)?;
    }
    Ok(StreamOwned::new(conn, tcp))
}

fn send_tls(api: &FakeApi, req: &Req) -> Result<Response, String> {
    let stream = connect(api, api.ca_pem(), "127.0.0.1").map_err(|e| e.to_string())?;
    try_send_over(stream, api.addr(), req)
}

#[test]
fn a_client_trusting_the_generated_certificate_gets_version() {
    let api = FakeApi::start_tls();
    assert!(api.url().starts_with("https://127.0.0.1:"));
    let pem = api.ca_pem().expect("TLS server has a certificate");
    assert!(pem.starts_with("-----BEGIN CERTIFICATE-----"));
    let got = send_tls(&api, &Req::new("GET", "/version")).expect("HTTPS GET /version");
    assert_eq!(got.status, 200);
    assert_eq!(got.json()["gitVersion"], "v1.29.4+k3s1");
    // The certificate also names localhost, and the connection negotiated HTTP/1.1.
    let stream = connect(&api, Some(pem), "localhost").expect("localhost is in the SAN");
    assert_eq!(
        stream.conn.alpn_protocol(),
        None,
        "the client offered no ALPN"
    );
    let log = api.requests();
    assert_eq!(log.len(), 1);
    assert_eq!((log[0].path.as_str(), log[0].status), ("/version", 200));
}

#[test]
fn a_client_not_trusting_it_fails_the_handshake() {
    let api = FakeApi::start_tls();
    let err = connect(&api, None, "127.0.0.1").expect_err("handshake must fail");
    assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{err}");
    assert!(err.to_string().contains("UnknownIssuer"), "{err}");
    // A certificate from another server is no better.
    let other = FakeApi::start_tls();
    let err = connect(&api, other.ca_pem(), "127.0.0.1").expect_err("handshake must fail");
    assert!(
        err.to_string().contains("invalid peer certificate"),
        "{err}"
    );
    // Trusted, but for a name the certificate does not carry.
    let err = connect(&api, api.ca_pem(), "example.com").expect_err("handshake must fail");
    assert!(
        err.to_string()
            .contains("not valid for name \"example.com\""),
        "{err}"
    );
    assert!(api.requests().is_empty(), "no HTTP request got through");
}

#[test]
fn faults_auth_and_the_request_log_work_over_tls() {
    let api = FakeApi::start_tls();
    api.put(serde_json::json!({"kind": "Node", "metadata": {"name": "server-1"}}));
    api.inject(Fault::status("GET", "/nodes", 503).times(1));
    api.inject(Fault::drop_connection("GET", "/leases").times(1));
    let admin = |target: &str| Req::new("GET", target).token(FakeApi::token(Role::Admin));
    let first = send_tls(&api, &admin("/api/v1/nodes")).expect("answered");
    assert_eq!(first.status, 503);
    assert_eq!(first.json()["reason"], "ServiceUnavailable");
    let second = send_tls(&api, &admin("/api/v1/nodes")).expect("answered");
    assert_eq!(second.status, 200);
    assert_eq!(second.json()["items"][0]["metadata"]["name"], "server-1");
    let leases = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";
    assert!(
        send_tls(&api, &admin(leases)).is_err(),
        "connection dropped"
    );
    assert_eq!(
        send_tls(&api, &admin(leases)).expect("answered").status,
        200
    );
    let nobody = Req::new("GET", "/api/v1/nodes").token(FakeApi::token(Role::Nobody));
    assert_eq!(send_tls(&api, &nobody).expect("answered").status, 403);
    assert_eq!(
        send_tls(&api, &Req::new("GET", "/api").token("bad"))
            .expect("answered")
            .status,
        401
    );
    let statuses: Vec<u16> = api.requests().iter().map(|r| r.status).collect();
    assert_eq!(statuses, [503, 200, 0, 200, 403, 401]);
}

fn cluster_of(kubeconfig: &std::path::Path) -> serde_yaml_ng::Value {
    let text = std::fs::read_to_string(kubeconfig).expect("kubeconfig");
    let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).expect("kubeconfig is YAML");
    doc["clusters"][0]["cluster"].clone()
}

#[test]
fn kubeconfigs_trust_the_certificate_only_when_asked() {
    let api = FakeApi::start_tls();
    let dir = tempfile::tempdir().expect("tempdir");
    let plain = cluster_of(&api.write_kubeconfig(dir.path(), Role::Admin));
    assert_eq!(plain["server"].as_str(), Some(api.url().as_str()));
    assert!(plain.get("certificate-authority-data").is_none());
    assert!(plain.get("certificate-authority").is_none());
    assert!(plain.get("insecure-skip-tls-verify").is_none());

    let path = api.write_kubeconfig_trusting(dir.path(), Role::ReadOnly);
    assert!(path.ends_with("kubeconfig-viewer-trusting.yaml"));
    let trusting = cluster_of(&path);
    assert_eq!(trusting["server"].as_str(), Some(api.url().as_str()));
    let data = trusting["certificate-authority-data"]
        .as_str()
        .expect("certificate-authority-data");
    let pem = base64::engine::general_purpose::STANDARD
        .decode(data)
        .expect("base64");
    assert_eq!(Some(String::from_utf8(pem).unwrap().as_str()), api.ca_pem());
}

/// What the CLI does with a kubeconfig: kube's rustls (ring) client.
fn kube_version(kubeconfig: &std::path::Path) -> Result<String, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let kubeconfig =
            kube::config::Kubeconfig::read_from(kubeconfig).map_err(|e| e.to_string())?;
        let options = kube::config::KubeConfigOptions::default();
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
            .await
            .map_err(|e| e.to_string())?;
        let client = kube::Client::try_from(config).map_err(|e| e.to_string())?;
        let info = client
            .apiserver_version()
            .await
            .map_err(|e| format!("{e:?}"))?;
        Ok(info.git_version)
    })
}

#[test]
fn kube_connects_with_the_trusting_kubeconfig_only() {
    let api = FakeApi::start_tls();
    let dir = tempfile::tempdir().expect("tempdir");
    let trusting = api.write_kubeconfig_trusting(dir.path(), Role::Admin);
    assert_eq!(kube_version(&trusting).as_deref(), Ok("v1.29.4+k3s1"));
    let err = kube_version(&api.write_kubeconfig(dir.path(), Role::Admin))
        .expect_err("the certificate is not trusted");
    assert!(err.contains("InvalidCertificate(UnknownIssuer)"), "{err}");
}

#[test]
fn plain_servers_have_no_certificate() {
    let api = FakeApi::start();
    assert!(api.url().starts_with("http://"));
    assert!(api.ca_pem().is_none());
}

#[test]
#[should_panic(expected = "start_tls")]
fn a_trusting_kubeconfig_needs_a_tls_server() {
    let dir = tempfile::tempdir().expect("tempdir");
    FakeApi::start().write_kubeconfig_trusting(dir.path(), Role::Admin);
}
