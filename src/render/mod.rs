//! Writers for reports: tables for people, JSON/YAML for programs. Each takes `impl Write`
//! so a report is built once and rendered anywhere, including into a test's buffer.

pub mod check;
pub mod closed_pipe;
pub mod control_chars;
pub mod findings;
pub mod fleet;
pub mod follow;
pub mod lease_changes;
pub mod leases;
pub mod man_page;
pub mod rerun;
pub mod restore;
pub mod snapshots;
pub mod streams;
pub mod style;
mod table;
pub mod wrap;
pub(crate) mod yaml_timestamps;

use std::io::Write;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Table,
    Wide,
    Json,
    Yaml,
    /// One JSON object per line, written as each cluster of a fleet is read.
    Jsonl,
}

impl OutputFormat {
    pub fn is_structured(self) -> bool {
        matches!(self, OutputFormat::Json | OutputFormat::Yaml)
    }
}

/// `1 server`, `3 servers`.
pub fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// JSON (pretty, newline-terminated) or YAML of a report.
pub fn write_structured<T: Serialize>(
    out: &mut dyn Write,
    format: OutputFormat,
    report: &T,
) -> anyhow::Result<()> {
    match format {
        OutputFormat::Yaml => {
            let yaml = serde_yaml_ng::to_string(report)?;
            out.write_all(yaml_timestamps::quote_timestamps(&yaml).as_bytes())?
        }
        _ => {
            // Standard output flushes at every newline, and pretty JSON is mostly newlines:
            // 50,000 snapshot rows were 1.5 million writes (issue 24).
            let mut out = std::io::BufWriter::with_capacity(64 * 1024, out);
            serde_json::to_writer_pretty(&mut out, report)?;
            out.write_all(b"\n")?;
            out.flush()?;
        }
    }
    Ok(())
}

/// `k3sdoctor ... | head` closes stdout early; that is the reader's choice, not an error,
/// and the exit code still reports what was found.
pub fn tolerate_closed_pipe(result: anyhow::Result<()>) -> anyhow::Result<()> {
    match result {
        Err(e)
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
                    || c.downcast_ref::<serde_json::Error>()
                        .and_then(|j| j.io_error_kind())
                        == Some(std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            Ok(())
        }
        other => other,
    }
}
