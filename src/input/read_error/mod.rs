//! Turning what went wrong while reading into one line that says what failed, on which
//! object and verb, and what to do.

use std::error::Error as StdError;

pub(crate) mod causes;
mod transport_cause;

use self::transport_cause::TransportCause;
pub(crate) use crate::model::read_failure_kind::ReadFailureKind;

/// A failure to read the cluster or the input; exit code 3.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ReadError {
    pub message: String,
    /// The HTTP status the API server answered with, when it answered.
    pub http_status: Option<u16>,
    /// The full cause chain, shown with `-v`.
    pub detail: Option<String>,
    /// What kind of failure it was, for a fleet's one-word reason.
    pub kind: ReadFailureKind,
    /// What was being done (`list nodes`), when a request failed: a 403 names the permission.
    pub action: Option<String>,
}

impl From<&ReadError> for crate::model::read_failure_kind::ReadFailure {
    fn from(e: &ReadError) -> Self {
        crate::model::read_failure_kind::ReadFailure {
            message: e.message.clone(),
            kind: e.kind,
            action: e.action.clone(),
        }
    }
}

impl ReadError {
    pub fn new(message: impl Into<String>) -> ReadError {
        ReadError {
            message: message.into(),
            http_status: None,
            detail: None,
            kind: ReadFailureKind::Other,
            action: None,
        }
    }

    pub fn with_detail(mut self, detail: impl Into<String>) -> ReadError {
        self.detail = Some(detail.into());
        self
    }

    /// `action` says what we were doing, e.g. `list leases in kube-system`.
    pub fn from_kube(err: &kube::Error, action: &str, server: &str) -> ReadError {
        let (message, kind, http_status) = match err {
            kube::Error::Api(status) => (
                api_status_message(status, action, server),
                status_kind(status.code),
                Some(status.code),
            ),
            _ => {
                let cause = TransportCause::of(err);
                (
                    transport_message(&cause, err, action, server),
                    cause.kind(),
                    None,
                )
            }
        };
        ReadError {
            message,
            http_status,
            detail: Some(cause_chain(err)),
            kind,
            action: Some(action.to_string()),
        }
    }
}

fn status_kind(code: u16) -> ReadFailureKind {
    match code {
        401 => ReadFailureKind::Unauthorized,
        403 => ReadFailureKind::Forbidden,
        _ => ReadFailureKind::Other,
    }
}

fn api_status_message(status: &kube::core::Status, action: &str, server: &str) -> String {
    let text = status.message.lines().next().unwrap_or_default().trim();
    let text = &*crate::line_cap::cap_at(text, crate::line_cap::LONGEST_QUOTE);
    match status.code {
        401 => format!(
            "cannot {action}: the API server at {server} rejected the credentials (401 Unauthorized); \
             refresh the token or client certificate in the kubeconfig"
        ),
        403 => format!(
            "cannot {action}: forbidden (403): {text}; grant {} or use a kubeconfig with more rights",
            granting_role(action)
        ),
        404 => {
            format!(
                "cannot {action}: the API server at {server} does not serve this resource (404 {text}); \
             check that the kubeconfig points at the k3s/RKE2 API server"
            )
        }
        408 | 504 => format!(
            "cannot {action}: the API server timed out ({} {text}); retry, or raise --request-timeout",
            status.code
        ),
        code @ 500..=599 => format!(
            "cannot {action}: the API server at {server} failed ({code} {}); retry when the control plane is healthy",
            if text.is_empty() {
                status.reason.as_str()
            } else {
                text
            }
        ),
        code => format!(
            "cannot {action}: the API server answered {code} {}: {text}",
            status.reason
        ),
    }
}

/// The one role that grants `action` (`list leases in kube-system`, `update lease
/// kube-system/k3s`), and the command that prints it.
fn granting_role(action: &str) -> String {
    if ["update", "create", "patch", "delete", "dry-run"]
        .iter()
        .any(|w| action.starts_with(w))
    {
        return "the Role k3sdoctor-repair in kube-system (`k3sdoctor rbac repair` prints it)"
            .into();
    }
    // The cluster's CA is the one ConfigMap the Role in kube-system grants by name; the
    // snapshot and lock ConfigMaps are granted by name in the ClusterRole.
    let namespaced = ["kube-system", "default", "kube-node-lease"]
        .into_iter()
        .find(|ns| action.contains(&format!(" in {ns}")))
        .or_else(|| {
            action
                .ends_with("kube-system/kube-root-ca.crt")
                .then_some("kube-system")
        });
    match namespaced {
        Some(ns) => format!(
            "the Role k3sdoctor-read-only in {ns} (`k3sdoctor rbac read-only` prints it, with its binding)"
        ),
        None => "the read-only ClusterRole (`k3sdoctor rbac read-only` prints it)".into(),
    }
}

fn transport_message(
    cause: &TransportCause,
    err: &kube::Error,
    action: &str,
    server: &str,
) -> String {
    match cause {
        TransportCause::Plugin(words) => format!("cannot {action}: {words}"),
        TransportCause::Proxy { what, .. } => format!(
            "cannot {action}: the proxy on the way to {server} failed ({what}); check the proxy, and \
             HTTPS_PROXY, NO_PROXY or the kubeconfig's proxy-url (docs/connecting.md)"
        ),
        TransportCause::Refused => format!(
            "cannot {action}: connection refused by {server}; is the API server running, and is the \
             kubeconfig's server address right?"
        ),
        TransportCause::TimedOut => format!(
            "cannot {action}: no answer from {server} within the request timeout; check the network \
             path to the API server, or raise --request-timeout"
        ),
        TransportCause::ClusterSilent(limit) => format!(
            "cannot {action}: no answer from {server} within {} (--cluster-timeout); Rancher takes \
             20-40 s to say that a cluster's agent is disconnected: check the cluster's agent in \
             Rancher, or raise --cluster-timeout",
            crate::age::short(jiff::SignedDuration::try_from(*limit).unwrap_or_default())
        ),
        TransportCause::Reset => format!(
            "cannot {action}: {server} reset the connection before answering; retry, and check \
             the network path and any load balancer or proxy in front of the API server"
        ),
        TransportCause::EndOfFile { in_tls_handshake } => {
            let during = if *in_tls_handshake {
                " during the TLS handshake"
            } else {
                ""
            };
            format!(
                "cannot {action}: {server} closed the connection{during} before answering; retry, and \
                 check any load balancer or proxy in front of the API server"
            )
        }
        TransportCause::ClosedMidAnswer => format!(
            "cannot {action}: {server} closed the connection before answering; retry, and check any load \
             balancer or proxy in front of the API server"
        ),
        TransportCause::StreamReset { code, go_away } => {
            let frame = if *go_away { "GOAWAY" } else { "RST_STREAM" };
            format!(
                "cannot {action}: {server} broke off its answer (HTTP/2 {frame} {code}); retry, and \
                 check any load balancer or proxy in front of the API server"
            )
        }
        TransportCause::Tls => format!(
            "cannot {action}: TLS handshake with {server} failed ({}); check the kubeconfig's server address \
             (https to the right port) and certificate-authority-data",
            last_cause(err)
        ),
        TransportCause::NotJson => format!(
            "cannot {action}: {server} answered with a body that is not the expected JSON ({}); is the \
             kubeconfig pointing at a Kubernetes API server (and not a proxy's error page)?",
            last_cause(err)
        ),
        TransportCause::TooLarge(limit) => format!(
            "cannot {action}: {server} sent an answer larger than {} MiB, more than any answer \
             k3sdoctor reads; check what answers at that address (a proxy or a broken API server)",
            limit / (1024 * 1024)
        ),
        TransportCause::PagingLie(lie) => lie.refusal(action, server).message,
        TransportCause::HostNotResolved => format!(
            "cannot {action}: cannot resolve the host of {server}; check the kubeconfig's server address"
        ),
        TransportCause::Other => format!("cannot {action} at {server}: {}", last_cause(err)),
    }
}

fn last_cause(err: &(dyn StdError + 'static)) -> String {
    let mut cur: &(dyn StdError + 'static) = err;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

pub(crate) fn cause_chain(err: &(dyn StdError + 'static)) -> String {
    let mut parts = vec![err.to_string()];
    let mut cur = err.source();
    while let Some(e) = cur {
        let text = e.to_string();
        if parts.last() != Some(&text) {
            parts.push(text);
        }
        cur = e.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
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
        assert!(
            granting_role("list events in default with fieldSelector x").contains("in default")
        );
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
}
