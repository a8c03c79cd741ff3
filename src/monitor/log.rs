//! `serve`'s log on stderr: one line per event, as text for a person or one JSON object per
//! line (`--log-format json`) for a log pipeline. Only k3sdoctor's own events at info and
//! above, and the libraries' errors except kube's: its client logs an ERROR for every failed
//! request (`failed with error client error (Connect)`, dozens a minute while the API server is
//! down, naming nothing) and its watcher warns about every failed attempt, which k3sdoctor
//! already reports once per failure episode, naming the resource and the cause.

use std::io::Write;

use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// How serve writes its log on stderr (`--log-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

/// `kube_requests` (`-vv`, `-vvv`: `commands::verbosity`) lets kube's request traces in, as
/// the one-shot commands print them; below that its failure ERRORs stay out too.
pub(crate) fn init(format: LogFormat, kube_requests: Option<LevelFilter>) {
    let kube_client = kube_requests.unwrap_or(LevelFilter::OFF);
    let targets = Targets::new()
        .with_default(LevelFilter::ERROR)
        .with_target("k3sdoctor", LevelFilter::INFO)
        .with_target("kube_client", kube_client)
        .with_target("kube_runtime", LevelFilter::OFF);
    let registry = tracing_subscriber::registry().with(targets);
    let layer = tracing_subscriber::fmt::layer()
        // Request traces (`-vv`) name URLs and errors: redacted as the one-shot commands' are.
        .with_writer(|| RedactedStderr)
        .with_ansi(false)
        .with_target(false);
    // A second initialisation (never in the binary) keeps the first subscriber.
    let _ = match format {
        LogFormat::Text => registry.with(layer).try_init(),
        LogFormat::Json => registry
            .with(layer.json().flatten_event(true).with_current_span(false))
            .try_init(),
    };
}

/// stderr, each write redacted and with its control characters escaped (the fmt layer writes
/// one event per call).
pub(crate) struct RedactedStderr;

impl Write for RedactedStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let mut lines = String::new();
        for line in text.lines() {
            let safe = crate::input::connect::redact::redact_patterns(line);
            lines.push_str(&crate::render::control_chars::escape_controls(&safe));
            lines.push('\n');
        }
        // stderr going away is no reason to fail the command.
        let _ = std::io::stderr().write_all(lines.as_bytes());
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}
