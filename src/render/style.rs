//! Colour, only when asked for or when stdout is a terminal.

use super::rerun::RerunFlags;
use super::wrap::DEFAULT_WIDTH;
use crate::diagnose::finding::Severity;

#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub color: bool,
    /// How the user invoked the tool when it is not `k3sdoctor` (`kubectl k3s-doctor`).
    pub program: Option<&'static str>,
    /// The connection flags of this run, for the commands it suggests.
    pub rerun: Option<&'static RerunFlags>,
    /// Columns that tables and wrapped text fit into: the terminal's on a TTY, else 80.
    pub width: usize,
}

impl Default for Style {
    fn default() -> Self {
        Style {
            color: false,
            program: None,
            rerun: None,
            width: DEFAULT_WIDTH,
        }
    }
}

impl Style {
    /// A remediation as the user would type it: `k3sdoctor ...` becomes `kubectl k3s-doctor ...`
    /// when run as a kubectl plugin. JSON keeps the canonical name.
    pub fn command(self, text: &str) -> String {
        let text = self.with_flags(text);
        match self.program {
            Some(program) => text.replace("k3sdoctor ", &format!("{program} ")),
            None => text,
        }
    }

    /// The suggested commands in `text` with this run's `--kubeconfig`, `--context` and
    /// `--distro`, so a pasted command targets the same cluster.
    pub fn with_flags(self, text: &str) -> String {
        match self.rerun {
            Some(flags) => flags.apply(text),
            None => text.to_string(),
        }
    }

    /// The severity padded to one width, so that codes line up.
    pub fn severity(self, severity: Severity) -> String {
        self.paint(severity, &format!("{:<7}", severity.label()))
    }

    /// `text` in the colour of `severity`.
    pub fn paint(self, severity: Severity, text: &str) -> String {
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

    pub fn bold(self, text: &str) -> String {
        if self.color {
            format!("\x1b[1m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
}
