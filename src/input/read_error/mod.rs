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

/// Whether `err` is an answer past the bound on one answer
/// ([`MOST_BODY_BYTES`](crate::input::limits::MOST_BODY_BYTES)).
pub(crate) fn answer_too_large(err: &kube::Error) -> bool {
    matches!(TransportCause::of(err), TransportCause::TooLarge(_))
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
mod tests;
