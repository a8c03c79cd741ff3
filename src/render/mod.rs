//! Writers for reports: tables for people, JSON/YAML for programs. Each takes `impl Write`
//! so a report is built once and rendered anywhere, including into a test's buffer.

pub(crate) mod check;
pub(crate) mod closed_pipe;
pub(crate) mod control_chars;
pub(crate) mod findings;
pub(crate) mod fleet;
pub(crate) mod follow;
pub(crate) mod json_escape;
pub(crate) mod lease_changes;
pub(crate) mod leases;
pub(crate) mod man_page;
pub(crate) mod rerun;
pub(crate) mod restore;
pub(crate) mod snapshots;
pub(crate) mod streams;
pub(crate) mod style;
mod table;
pub(crate) mod wrap;
pub(crate) mod yaml_timestamps;

use std::io::Write;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
pub(crate) fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// JSON (pretty, newline-terminated) or YAML of a report.
pub(crate) fn write_structured<T: Serialize>(
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
            // 50,000 snapshot rows were 1.5 million writes.
            let mut out = std::io::BufWriter::with_capacity(64 * 1024, out);
            json_escape::to_writer_pretty(&mut out, report)?;
            out.write_all(b"\n")?;
            out.flush()?;
        }
    }
    Ok(())
}

/// The JSON `write_structured` writes, as a string allocated once at its exact size: the
/// report is serialized twice, first only to count its bytes. A growing buffer peaks at up to
/// twice the text, and `serve`'s report naming 50,000 missing snapshots is tens of MiB.
pub(crate) fn json_exactly_sized<T: Serialize>(report: &T) -> anyhow::Result<String> {
    struct ByteCount(usize);
    impl Write for ByteCount {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = ByteCount(0);
    json_escape::to_writer_pretty(&mut count, report)?;
    let mut json = Vec::with_capacity(count.0 + 1);
    json_escape::to_writer_pretty(&mut json, report)?;
    json.push(b'\n');
    // serde_json writes UTF-8.
    Ok(String::from_utf8(json)?)
}

/// `k3sdoctor ... | head` closes stdout early; that is the reader's choice, not an error,
/// and the exit code still reports what was found.
pub(crate) fn tolerate_closed_pipe(result: anyhow::Result<()>) -> anyhow::Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exactly_sized_json_is_what_write_structured_writes() {
        let report =
            serde_json::json!({"kind": "CheckReport", "names": ["a", "b\u{2028}"], "n": 3});
        let mut written = Vec::new();
        write_structured(&mut written, OutputFormat::Json, &report).unwrap();
        let exact = json_exactly_sized(&report).unwrap();
        assert_eq!(exact.as_bytes(), written);
        assert_eq!(exact.capacity(), exact.len());
    }
}
