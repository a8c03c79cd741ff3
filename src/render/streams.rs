//! Where a table report goes: its rows, and the prose around them.
//!
//! kubectl prints only rows on stdout, so `awk '{print $1}'` never meets a summary line. A
//! table report here has rows and prose (the summary above the table, the notes, findings and
//! verdict under it). On a terminal both go to stdout, in reading order. With `--no-headers`,
//! or when stdout is not a terminal, stdout carries the rows alone and the prose goes to
//! stderr, where a person still sees it and a pipe does not; the exit code carries the
//! verdict either way.

use std::io::Write;

use super::style::Style;

pub(crate) struct TableOut<'a> {
    rows: &'a mut dyn Write,
    /// `None`: the prose goes with the rows.
    prose: Option<&'a mut dyn Write>,
}

impl<'a> TableOut<'a> {
    /// Rows and prose on one stream (a terminal, a repair's re-read, a test's buffer).
    pub(crate) fn together(out: &'a mut dyn Write) -> Self {
        TableOut {
            rows: out,
            prose: None,
        }
    }

    /// The rows on `rows`, the prose on `prose`, or both on `rows` when `style` says a person
    /// reads stdout ([`Style::rows_only`]).
    pub(crate) fn for_style(
        rows: &'a mut dyn Write,
        prose: &'a mut dyn Write,
        style: Style,
    ) -> Self {
        TableOut {
            rows,
            prose: style.rows_only().then_some(prose),
        }
    }

    pub(crate) fn rows(&mut self) -> &mut dyn Write {
        &mut *self.rows
    }

    pub(crate) fn prose(&mut self) -> &mut dyn Write {
        match self.prose.as_deref_mut() {
            Some(prose) => prose,
            None => &mut *self.rows,
        }
    }

    /// Whether the prose has a stream of its own: the blank lines that set the table off from
    /// the prose are then left out of both.
    pub(crate) fn split(&self) -> bool {
        self.prose.is_some()
    }

    /// A blank line between the table and the prose, when they share a stream.
    pub(crate) fn gap(&mut self) -> std::io::Result<()> {
        if self.split() {
            Ok(())
        } else {
            writeln!(self.rows)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn style(terminal: bool, no_headers: bool) -> Style {
        Style {
            terminal,
            no_headers,
            ..Style::default()
        }
    }

    fn streams(style: Style) -> (String, String) {
        let (mut rows, mut prose) = (Vec::new(), Vec::new());
        let mut out = TableOut::for_style(&mut rows, &mut prose, style);
        writeln!(out.prose(), "summary").unwrap();
        out.gap().unwrap();
        writeln!(out.rows(), "row").unwrap();
        (
            String::from_utf8(rows).unwrap(),
            String::from_utf8(prose).unwrap(),
        )
    }

    #[test]
    fn a_terminal_reads_rows_and_prose_together() {
        assert_eq!(
            streams(style(true, false)),
            ("summary\n\nrow\n".into(), "".into())
        );
    }

    #[test]
    fn a_pipe_or_no_headers_gets_rows_alone() {
        for s in [style(false, false), style(true, true), style(false, true)] {
            assert_eq!(streams(s), ("row\n".into(), "summary\n".into()));
        }
    }
}
