//! How this run prints: colour, width, headers, and the program name in suggested commands.

use super::rerun::RerunFlags;
use super::wrap::DEFAULT_WIDTH;
use crate::diagnose::finding::Severity;

#[derive(Debug, Clone, Copy)]
pub(crate) struct Style {
    pub color: bool,
    /// How the user invoked the tool when it is not `k3sdoctor` (`kubectl k3s-doctor`).
    pub program: Option<&'static str>,
    /// The connection flags of this run, for the commands it suggests.
    pub rerun: Option<&'static RerunFlags>,
    /// Columns that tables and wrapped text fit into: the terminal's on a TTY, else 80.
    pub width: usize,
    /// Whether stdout is a terminal: only there do table cells wrap to fit `width`. A pipe
    /// gets one line per row, so `awk '{print $2}'` sees whole cells.
    pub terminal: bool,
    /// `--no-headers`: tables without their header line, as kubectl's flag does.
    pub no_headers: bool,
    /// `-v`: the k3s mechanics behind a note said in plain words (JSON always has them).
    pub detail: bool,
}

impl Default for Style {
    fn default() -> Self {
        Style {
            color: false,
            program: None,
            rerun: None,
            width: DEFAULT_WIDTH,
            terminal: false,
            no_headers: false,
            detail: false,
        }
    }
}

impl Style {
    /// The width a table's cells wrap to: `None` (one line per row) for `-o wide`, which is
    /// wide by request as kubectl's is, and off a terminal, where a wrapped cell would be
    /// split across lines that `awk`, `cut` and `grep` read as separate rows.
    pub(crate) fn table_width(self, wide: bool) -> Option<usize> {
        (!wide && self.terminal).then_some(self.width)
    }

    /// Whether a table report's stdout carries its rows alone, as kubectl's does: with
    /// `--no-headers`, and whenever stdout is not a terminal (`render::streams`).
    pub(crate) fn rows_only(self) -> bool {
        self.no_headers || !self.terminal
    }

    /// A remediation as the user would type it: `k3sdoctor ...` becomes `kubectl k3s-doctor ...`
    /// when run as a kubectl plugin. JSON keeps the canonical name.
    pub(crate) fn command(self, text: &str) -> String {
        let text = self.with_flags(text);
        match self.program {
            Some(program) => text.replace("k3sdoctor ", &format!("{program} ")),
            None => text,
        }
    }

    /// The suggested commands in `text` with this run's `--kubeconfig`, `--context` and
    /// `--distro`, so a pasted command targets the same cluster.
    pub(crate) fn with_flags(self, text: &str) -> String {
        match self.rerun {
            Some(flags) => flags.apply(text),
            None => text.to_string(),
        }
    }

    /// The severity padded to one width, so that codes line up.
    pub(crate) fn severity(self, severity: Severity) -> String {
        self.paint(severity, &format!("{:<7}", severity.label()))
    }

    /// `text` in the colour of `severity`.
    pub(crate) fn paint(self, severity: Severity, text: &str) -> String {
        if !self.color {
            return text.to_string();
        }
        let code = match severity {
            Severity::Error => "1;31",
            Severity::Warning => "1;33",
            Severity::Info => "36",
        };
        format!("\x1b[{code}m{text}\x1b[0m")
    }

    pub(crate) fn bold(self, text: &str) -> String {
        if self.color {
            format!("\x1b[1m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
}
