//! Where a command's output goes and how it looks: the two streams, the style, the verbosity,
//! and the request spinner put aside while a line goes to stderr.

use std::io::Write;
use std::sync::Mutex;

use super::request_spinner;
use crate::render::streams::TableOut;
use crate::render::style::Style;

/// Where output goes and how it should look.
pub(crate) struct Ui {
    pub out: Box<dyn Write + Send + Sync>,
    err: Mutex<Box<dyn Write + Send>>,
    /// Shown while a request is slow; put aside while a line goes to stderr.
    spinner: Mutex<Option<request_spinner::RequestSpinner>>,
    pub style: Style,
    pub verbose: u8,
    pub quiet: bool,
    /// Set when `out` is standard output: whether its reader has gone (`| head`).
    pub reader_gone: Option<crate::render::closed_pipe::ReaderGone>,
}

impl Ui {
    pub(crate) fn new(
        out: Box<dyn Write + Send + Sync>,
        err: Box<dyn Write + Send>,
        style: Style,
        verbose: u8,
        quiet: bool,
    ) -> Ui {
        Ui {
            out,
            err: Mutex::new(err),
            spinner: Mutex::new(None),
            style,
            verbose,
            quiet,
            reader_gone: None,
        }
    }

    /// Whether a person can answer a prompt: input and the prompt's output are a terminal.
    pub(crate) fn interactive(&self) -> bool {
        use std::io::IsTerminal;
        std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
    }

    /// A repair's result document, when the output is JSON or YAML (tables say it in prose).
    pub(crate) fn emit_structured<T: serde::Serialize>(
        &mut self,
        format: crate::render::OutputFormat,
        result: &T,
    ) -> anyhow::Result<()> {
        if format.is_structured() {
            crate::render::tolerate_closed_pipe(crate::render::write_structured(
                &mut self.out,
                format,
                result,
            ))?;
        }
        Ok(())
    }

    /// The cluster as read again after a repair, set off by a blank line.
    pub(crate) fn write_after(&mut self, rendered: &[u8]) -> anyhow::Result<()> {
        crate::render::tolerate_closed_pipe(
            self.out
                .write_all(b"\n")
                .and_then(|_| self.out.write_all(rendered))
                .map_err(Into::into),
        )
    }

    /// A line on stderr unless `-q`; a command it suggests carries this run's connection flags.
    pub(crate) fn note(&self, line: &str) {
        if !self.quiet {
            self.err_line(&self.style.with_flags(line));
        }
    }

    /// A line on stderr with `-v`.
    pub(crate) fn trace(&self, line: &str) {
        if self.verbose > 0 {
            self.err_line(line);
        }
    }

    /// On a terminal (and without `-q`), a spinner names the request being waited for once
    /// one takes longer than a second; never on a pipe, where it would be noise in a log.
    pub(crate) fn show_slow_requests(&self, conn: &crate::input::connect::Connection) {
        use std::io::IsTerminal;
        // From -vv on, every request has a line of its own; a spinner would only interleave.
        if self.quiet || self.verbose >= 2 || !std::io::stderr().is_terminal() {
            return;
        }
        if let Ok(mut spinner) = self.spinner.lock() {
            *spinner = Some(request_spinner::RequestSpinner::start(
                conn.activity.clone(),
                conn.server.clone(),
            ));
        }
    }

    /// Writes a table report through `write`: rows on stdout, and its prose (summary,
    /// notes, findings, verdict) on stdout too on a terminal, else on stderr
    /// (`render::streams`). The prose is written to stderr once the report is complete.
    pub(crate) fn write_table_report(
        &mut self,
        write: impl FnOnce(&mut TableOut<'_>, Style) -> std::io::Result<()>,
    ) -> anyhow::Result<()> {
        let style = self.style;
        let mut prose = Vec::new();
        let written = {
            let mut out = TableOut::for_style(&mut self.out, &mut prose, style);
            write(&mut out, style)
        };
        self.err_bytes(&prose);
        crate::render::tolerate_closed_pipe(written.map_err(Into::into))
    }

    /// Text already rendered (escaped, perhaps coloured) for stderr, as it is.
    fn err_bytes(&self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let write = || {
            if let Ok(mut err) = self.err.lock() {
                let _ = err.write_all(bytes).and_then(|_| err.flush());
            }
        };
        match self.spinner.lock().as_deref() {
            Ok(Some(spinner)) => spinner.suspend(write),
            _ => write(),
        }
    }

    pub(crate) fn err_line(&self, line: &str) {
        let write = || {
            if let Ok(mut err) = self.err.lock() {
                // stderr going away is no reason to fail the command.
                // Notes and errors quote the cluster (holders, names): never raw controls,
                // and never a line of megabytes.
                let _ = writeln!(
                    err,
                    "{}",
                    crate::line_cap::cap_line(&crate::render::control_chars::escape_controls(line))
                );
            }
        };
        match self.spinner.lock().as_deref() {
            Ok(Some(spinner)) => spinner.suspend(write),
            _ => write(),
        }
    }
}

impl crate::input::narrator::Narrator for Ui {
    fn trace(&self, line: &str) {
        Ui::trace(self, line);
    }

    fn note(&self, line: &str) {
        Ui::note(self, line);
    }

    fn watch_requests(&self, conn: &crate::input::connect::Connection) {
        self.show_slow_requests(conn);
    }
}
