//! What `-v`, `-vv` and `-vvv` add on stderr, each level on top of the one before:
//!
//! - `-v`: what k3sdoctor read and from where (one line per read: what, how many items, how
//!   long; the server, the proxy, the API server's clock) and the cause chain of an error
//!   (`Ui::trace`, `lib::run`);
//! - `-vv`: every HTTP request the client sends, as kube-rs traces it: method, URL (path and
//!   query; never a header, so never a credential), the response status, and the API
//!   server's `Status` of an error response;
//! - `-vvv`: also the time since start on every line, and a line when each request ends with
//!   the time it took (`time.busy`, `time.idle`); kube-rs's TRACE events (a watch's response
//!   headers) too.
//!
//! Everything at `-vv` and above passes through the same redaction as error messages
//! (`Bearer …`, JWTs, `token=…`) and control-character escaping before it reaches stderr.

use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// The request trace level of `verbose` (`-v` count): `None` below `-vv`.
pub(crate) fn request_trace_level(verbose: u8) -> Option<LevelFilter> {
    match verbose {
        0 | 1 => None,
        2 => Some(LevelFilter::DEBUG),
        _ => Some(LevelFilter::TRACE),
    }
}

/// Sends kube-rs's request traces to stderr for `-vv` and `-vvv`; nothing below.
pub(crate) fn init_request_trace(verbose: u8) {
    let Some(level) = request_trace_level(verbose) else {
        return;
    };
    let targets = Targets::new()
        .with_default(LevelFilter::OFF)
        .with_target("kube_client", level);
    let registry = tracing_subscriber::registry().with(targets);
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(|| crate::monitor::log::RedactedStderr)
        .with_ansi(false)
        .with_target(false);
    // A second initialisation (never in the binary) keeps the first subscriber.
    let _ = if level == LevelFilter::TRACE {
        registry
            .with(
                layer
                    .with_timer(tracing_subscriber::fmt::time::Uptime::default())
                    .with_span_events(FmtSpan::CLOSE),
            )
            .try_init()
    } else {
        registry.with(layer.without_time()).try_init()
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_level_adds_one_thing() {
        assert_eq!(request_trace_level(0), None);
        assert_eq!(request_trace_level(1), None);
        assert_eq!(request_trace_level(2), Some(LevelFilter::DEBUG));
        assert_eq!(request_trace_level(3), Some(LevelFilter::TRACE));
        assert_eq!(request_trace_level(7), Some(LevelFilter::TRACE));
    }
}
