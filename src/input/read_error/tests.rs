//! How read errors are worded and judged: the role a refusal names, the cause under a failed
//! request, the fleet's one-word reason.

use super::*;

#[test]
fn a_refusal_names_the_one_role_that_grants_it() {
    assert!(
        granting_role("list leases in kube-system")
            .starts_with("the Role k3sdoctor-read-only in kube-system")
    );
    assert!(
        granting_role("list leases in kube-node-lease")
            .starts_with("the Role k3sdoctor-read-only in kube-node-lease")
    );
    assert!(granting_role("list events in default with fieldSelector x").contains("in default"));
    assert!(granting_role("list nodes").starts_with("the read-only ClusterRole"));
    // The ConfigMaps are granted by name in the ClusterRole.
    assert!(
        granting_role("get configmap kube-system/k3s").starts_with("the read-only ClusterRole")
    );
    // The cluster's CA is granted by name in the Role in kube-system.
    assert!(
        granting_role("get configmap kube-system/kube-root-ca.crt")
            .starts_with("the Role k3sdoctor-read-only in kube-system")
    );
    assert!(
        granting_role("update lease kube-system/k3s")
            .starts_with("the Role k3sdoctor-repair in kube-system")
    );
}

/// What hyper-rustls reports when the peer resets the connection mid-handshake: layers
/// that name TLS around an io error that says reset.
#[derive(Debug, thiserror::Error)]
#[error("tls handshake failed")]
struct Handshake(#[source] std::io::Error);

#[derive(Debug, thiserror::Error)]
#[error("client error (Connect)")]
struct Connect(#[source] Handshake);

fn connect_error(kind: std::io::ErrorKind) -> kube::Error {
    kube::Error::Service(Box::new(Connect(Handshake(std::io::Error::new(
        kind,
        "Connection reset by peer (os error 104)",
    )))))
}

#[test]
fn a_reset_during_the_handshake_is_a_reset_not_a_tls_problem() {
    let error = ReadError::from_kube(
        &connect_error(std::io::ErrorKind::ConnectionReset),
        "watch leases in kube-system",
        "https://10.0.0.1:6443",
    );
    assert_eq!(
        error.message,
        "cannot watch leases in kube-system: https://10.0.0.1:6443 reset the connection before \
         answering; retry, and check the network path and any load balancer or proxy in front of \
         the API server"
    );
    assert_eq!(error.kind, ReadFailureKind::Unreachable);
}

#[derive(Debug, thiserror::Error)]
#[error("error reading a body from connection")]
struct Body(#[source] std::io::Error);

#[test]
fn a_reset_inside_a_watch_body_is_found_through_the_io_error_that_wraps_it() {
    let reset = std::io::Error::new(
        std::io::ErrorKind::ConnectionReset,
        "Connection reset by peer (os error 104)",
    );
    let error = kube::Error::ReadEvents(std::io::Error::other(Body(reset)));
    let read = ReadError::from_kube(&error, "watch nodes", "https://10.0.0.1:6443");
    assert!(
        read.message
            .starts_with("cannot watch nodes: https://10.0.0.1:6443 reset the connection"),
        "{}",
        read.message
    );
    assert_eq!(read.kind, ReadFailureKind::Unreachable);
}

/// What hyper-rustls reports when the peer hangs up mid-handshake: tokio-rustls's own
/// end of file, wrapped as `io::Error::other`.
fn handshake_eof() -> kube::Error {
    kube::Error::Service(Box::new(std::io::Error::other(std::io::Error::new(
        std::io::ErrorKind::UnexpectedEof,
        "tls handshake eof",
    ))))
}

#[test]
fn an_end_of_file_in_the_handshake_says_where_it_happened() {
    let error = ReadError::from_kube(&handshake_eof(), "list nodes", "https://10.0.0.1:6443");
    assert!(
        error
            .message
            .starts_with("cannot list nodes: https://10.0.0.1:6443 closed the connection during the TLS handshake"),
        "{}",
        error.message
    );
    assert_eq!(error.kind, ReadFailureKind::Tls);
}

#[test]
fn an_end_of_file_elsewhere_is_only_a_closed_connection() {
    let error = ReadError::from_kube(
        &connect_error(std::io::ErrorKind::UnexpectedEof),
        "list nodes",
        "https://10.0.0.1:6443",
    );
    assert!(
        error.message.starts_with(
            "cannot list nodes: https://10.0.0.1:6443 closed the connection before answering"
        ),
        "{}",
        error.message
    );
    assert_eq!(error.kind, ReadFailureKind::Unreachable);
}

#[test]
fn a_certificate_problem_is_still_a_tls_problem() {
    let error = ReadError::from_kube(
        &kube::Error::Service(Box::new(std::io::Error::other(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer),
        )))),
        "list nodes",
        "https://10.0.0.1:6443",
    );
    assert!(
        error.message.contains("TLS handshake with"),
        "{}",
        error.message
    );
    assert_eq!(error.kind, ReadFailureKind::Tls);
}

#[test]
fn words_that_name_tls_do_not_make_a_tls_problem() {
    let error = ReadError::from_kube(
        &kube::Error::Service(Box::new(Connect(Handshake(std::io::Error::other(
            "certificate handshake tls timeout elapsed",
        ))))),
        "list nodes",
        "https://10.0.0.1:6443",
    );
    assert_eq!(
        error.message,
        "cannot list nodes at https://10.0.0.1:6443: certificate handshake tls timeout elapsed"
    );
    assert_eq!(error.kind, ReadFailureKind::Other);
}

#[test]
fn a_proxy_failure_is_the_proxy_s_and_keeps_the_kind_beneath_it() {
    #[derive(Debug, thiserror::Error)]
    #[error("tunnel error: failed to create underlying connection")]
    struct Tunnel(#[source] std::io::Error);
    let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
    let error = ReadError::from_kube(
        &kube::Error::Service(Box::new(Tunnel(refused))),
        "list nodes",
        "https://10.0.0.1:6443",
    );
    assert!(
        error.message.starts_with(
            "cannot list nodes: the proxy on the way to https://10.0.0.1:6443 failed (tunnel \
             error: failed to create underlying connection)"
        ),
        "{}",
        error.message
    );
    assert_eq!(error.kind, ReadFailureKind::Unreachable);
}
