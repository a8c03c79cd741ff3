//! What failed under a request that got no answer from the API server, found from the types
//! in its error's source chain (io error kinds, hyper's error, rustls's error, the credential
//! plugin's error), never from the words of the chain.
//!
//! Three causes can only be told by text, because the library that raises them keeps the
//! type private; each match is on the exact words that one type writes, on that one link of
//! the chain:
//! - a proxy: hyper-util's `TunnelError` and `SocksError` (client/legacy/connect/proxy) are
//!   not exported; their `Display` starts with `tunnel error: ` and `SOCKS error: `;
//! - a name that does not resolve: hyper-util's `ConnectError` (client/legacy/connect/http.rs)
//!   is private and its `Display` is exactly `dns error`; the io error under it is
//!   `ErrorKind::Uncategorized`, which stable Rust cannot name;
//! - an end of file in the TLS handshake: tokio-rustls raises a plain
//!   `io::Error::new(UnexpectedEof, "tls handshake eof")` (common/mod.rs).

use std::error::Error as StdError;
use std::io::ErrorKind;

use super::causes::{BodyTooLarge, ClusterSilent, PagingLie, PluginFailure};

use crate::model::read_failure_kind::ReadFailureKind;

/// Why a request got no answer, in the order the message prefers them: the plugin's own
/// words first, then the proxy, then the socket, then the layers above it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum TransportCause {
    /// A token refreshed inside the request: the plugin's own (redacted) words.
    Plugin(String),
    /// The proxy failed, not the API server, even when the io error under it is a refused
    /// connection; `what` is the proxy connector's own words, `under` the cause beneath it.
    Proxy {
        what: String,
        under: Box<TransportCause>,
    },
    Refused,
    TimedOut,
    /// A cluster behind Rancher that gave no first answer within `--cluster-timeout`.
    ClusterSilent(std::time::Duration),
    /// A reset is a reset even during the TLS handshake: a wrong certificate fails with a TLS
    /// alert, never with a reset.
    Reset,
    EndOfFile {
        in_tls_handshake: bool,
    },
    /// hyper's "connection closed before message completed".
    ClosedMidAnswer,
    /// The server ended an HTTP/2 request (RST_STREAM) or the whole connection (GOAWAY) with
    /// an error code, such as INTERNAL_ERROR from a proxy whose backend broke off.
    StreamReset {
        code: String,
        go_away: bool,
    },
    Tls,
    /// A body that is not the JSON the request expects.
    NotJson,
    /// A body past the bound on one answer.
    TooLarge(u64),
    /// A list whose pages never end.
    PagingLie(PagingLie),
    HostNotResolved,
    Other,
}

impl TransportCause {
    pub(super) fn of(err: &kube::Error) -> TransportCause {
        if let Some(plugin) = links(err).find_map(|e| e.downcast_ref::<PluginFailure>()) {
            return TransportCause::Plugin(plugin.to_string());
        }
        if let Some(what) = links(err).find_map(proxy_words) {
            return TransportCause::Proxy {
                what,
                under: Box::new(TransportCause::beneath_proxy(err)),
            };
        }
        TransportCause::beneath_proxy(err)
    }

    fn beneath_proxy(err: &kube::Error) -> TransportCause {
        if let Some(silent) = links(err).find_map(|e| e.downcast_ref::<ClusterSilent>()) {
            return TransportCause::ClusterSilent(silent.limit);
        }
        if let Some(cap) = links(err).find_map(|e| e.downcast_ref::<BodyTooLarge>()) {
            return TransportCause::TooLarge(cap.limit);
        }
        if let Some(lie) = links(err).find_map(|e| e.downcast_ref::<PagingLie>()) {
            return TransportCause::PagingLie(lie.clone());
        }
        if let Some(io) = telling_io_error(err) {
            match io.kind() {
                ErrorKind::ConnectionRefused => return TransportCause::Refused,
                ErrorKind::TimedOut => return TransportCause::TimedOut,
                ErrorKind::ConnectionReset
                | ErrorKind::ConnectionAborted
                | ErrorKind::BrokenPipe => {
                    return TransportCause::Reset;
                }
                ErrorKind::UnexpectedEof => {
                    return TransportCause::EndOfFile {
                        in_tls_handshake: links(err).any(is_tls),
                    };
                }
                _ => {}
            }
        }
        if let Some(h2) = links(err).find_map(|e| e.downcast_ref::<h2::Error>())
            && let Some(reason) = h2.reason().filter(|_| h2.is_remote())
        {
            return TransportCause::StreamReset {
                code: format!("{reason:?}"),
                go_away: h2.is_go_away(),
            };
        }
        let hyper = links(err).find_map(|e| e.downcast_ref::<hyper::Error>());
        if hyper.is_some_and(hyper::Error::is_incomplete_message) {
            return TransportCause::ClosedMidAnswer;
        }
        if links(err).any(is_tls) {
            return TransportCause::Tls;
        }
        let timer_ran_out = links(err).any(|e| e.is::<tokio::time::error::Elapsed>());
        if timer_ran_out || hyper.is_some_and(hyper::Error::is_timeout) {
            return TransportCause::TimedOut;
        }
        if matches!(err, kube::Error::SerdeError(_)) {
            return TransportCause::NotJson;
        }
        if links(err).any(|e| e.to_string() == "dns error") {
            return TransportCause::HostNotResolved;
        }
        TransportCause::Other
    }

    /// The same judgement as a fleet's one-word reason.
    pub(super) fn kind(&self) -> ReadFailureKind {
        match self {
            TransportCause::Plugin(_)
            | TransportCause::NotJson
            | TransportCause::TooLarge(_)
            | TransportCause::PagingLie(_)
            | TransportCause::Other => ReadFailureKind::Other,
            TransportCause::Proxy { under, .. } => under.kind(),
            TransportCause::Tls
            | TransportCause::EndOfFile {
                in_tls_handshake: true,
            } => ReadFailureKind::Tls,
            TransportCause::Refused
            | TransportCause::TimedOut
            | TransportCause::ClusterSilent(_)
            | TransportCause::Reset
            | TransportCause::EndOfFile {
                in_tls_handshake: false,
            }
            | TransportCause::ClosedMidAnswer
            | TransportCause::StreamReset { .. }
            | TransportCause::HostNotResolved => ReadFailureKind::Unreachable,
        }
    }
}

/// The links of an error's chain. A watch's body errors arrive as `io::Error::other(hyper
/// error)` around the real io error, and an io error's `source()` skips the error it wraps, so
/// wrapped errors are looked into with `get_ref`.
fn links<'a>(
    err: &'a (dyn StdError + 'static),
) -> impl Iterator<Item = &'a (dyn StdError + 'static)> {
    std::iter::successors(Some(err), |&e: &&'a (dyn StdError + 'static)| {
        match e
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            Some(inner) => Some(inner as &(dyn StdError + 'static)),
            None => e.source(),
        }
    })
}

/// The first io error in the chain with a telling kind, else the last vague one.
fn telling_io_error<'a>(err: &'a (dyn StdError + 'static)) -> Option<&'a std::io::Error> {
    let mut vague = None;
    for io in links(err).filter_map(|e| e.downcast_ref::<std::io::Error>()) {
        if io.kind() != ErrorKind::Other {
            return Some(io);
        }
        vague = Some(io);
    }
    vague
}

/// kube's own TLS setup errors, rustls's errors (certificates, alerts, a server that does not
/// speak TLS), and tokio-rustls's end of file in the handshake (only text: see the module).
fn is_tls(e: &(dyn StdError + 'static)) -> bool {
    e.is::<rustls::Error>()
        || matches!(
            e.downcast_ref::<kube::Error>(),
            Some(kube::Error::RustlsTls(_) | kube::Error::TlsRequired)
        )
        || e.downcast_ref::<std::io::Error>().is_some_and(|io| {
            io.kind() == ErrorKind::UnexpectedEof
                && io
                    .get_ref()
                    .is_some_and(|m| m.to_string() == "tls handshake eof")
        })
}

/// The proxy connector's words, up to its first cause (`tunnel error: unsuccessful`): only
/// text, since hyper-util keeps these types private (see the module).
fn proxy_words(e: &(dyn StdError + 'static)) -> Option<String> {
    let text = e.to_string();
    (text.starts_with("tunnel error: ") || text.starts_with("SOCKS error: "))
        .then(|| text.splitn(3, ": ").take(2).collect::<Vec<_>>().join(": "))
}
