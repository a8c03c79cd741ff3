//! One file per subcommand: load → diagnose/plan → render (→ apply). The only layer that
//! prints, through `Ui`.

pub mod check;
pub mod completions;
pub mod configmap_write;
pub mod fleet;
pub mod follow_write;
pub mod heal_move;
pub mod leases;
pub mod leases_follow;
pub mod leases_watch;
pub mod load;
pub mod man;
pub mod options;
pub mod rbac;
pub mod repair_events;
pub mod request_spinner;
pub mod serve;
pub mod serve_heal;
pub mod snapshots;
pub mod snapshots_backfill;
pub mod snapshots_restore;
pub mod suppressions;
pub mod termination;
pub mod verbosity;
pub mod version;

use std::io::Write;
use std::sync::Mutex;

use crate::render::streams::TableOut;
use crate::render::style::Style;

/// Where output goes and how it should look.
pub struct Ui {
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
    pub fn new(
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
    pub fn interactive(&self) -> bool {
        use std::io::IsTerminal;
        std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
    }

    /// A repair's result document, when the output is JSON or YAML (tables say it in prose).
    pub fn emit_structured<T: serde::Serialize>(
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
    pub fn write_after(&mut self, rendered: &[u8]) -> anyhow::Result<()> {
        crate::render::tolerate_closed_pipe(
            self.out
                .write_all(b"\n")
                .and_then(|_| self.out.write_all(rendered))
                .map_err(Into::into),
        )
    }

    /// A line on stderr unless `-q`; a command it suggests carries this run's connection flags.
    pub fn note(&self, line: &str) {
        if !self.quiet {
            self.err_line(&self.style.with_flags(line));
        }
    }

    /// A line on stderr with `-v`.
    pub fn trace(&self, line: &str) {
        if self.verbose > 0 {
            self.err_line(line);
        }
    }

    /// On a terminal (and without `-q`), a spinner names the request being waited for once
    /// one takes longer than a second; never on a pipe, where it would be noise in a log.
    pub fn show_slow_requests(&self, conn: &crate::input::connect::Connection) {
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
    pub fn write_table_report(
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

    pub fn err_line(&self, line: &str) {
        let write = || {
            if let Ok(mut err) = self.err.lock() {
                // stderr going away is no reason to fail the command.
                // Notes and errors quote the cluster (holders, names): never raw controls.
                let _ = writeln!(
                    err,
                    "{}",
                    crate::render::control_chars::escape_controls(line)
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

/// A write that failed before anything changed: a credentials problem (401/403) is exit 3
/// like any refused read; anything else is a repair not completed (exit 4).
pub fn write_failed_nothing_written(e: crate::input::ReadError) -> crate::exit::Failure {
    let message = format!("{}; nothing was written", e.message);
    match e.http_status {
        Some(401 | 403) => crate::exit::Failure::Read(crate::input::ReadError { message, ..e }),
        _ => crate::exit::Failure::Incomplete(message),
    }
}

/// `--fix` asks before writing; with no terminal to ask on, only `--yes` may stand in.
pub fn require_confirmation_means(
    yes: bool,
    interactive: bool,
) -> Result<(), crate::exit::Failure> {
    if yes || interactive {
        return Ok(());
    }
    Err(crate::exit::Failure::Refused(
        "--fix needs a confirmation and there is no terminal to ask on; re-run with --yes to confirm; nothing was written"
            .into(),
    ))
}

/// Which cluster a confirmation prompt is about: the context and the server URL.
/// Asks before a write: "On CLUSTER: WHAT?", answered no unless the person says yes (also
/// when the terminal goes away).
///
/// The question is wrapped between words to the terminal's width, and only its last line is
/// dialoguer's prompt: a prompt longer than the terminal wraps mid-word, and after the answer
/// dialoguer clears one line only, leaving the first part of a wrapped prompt on screen.
pub fn confirm_write(conn: &crate::input::connect::Connection, what: &str) -> bool {
    let question = format!("On {}: {what}?", cluster_label(conn));
    let width = terminal_size::terminal_size_of(std::io::stderr())
        .map(|(terminal_size::Width(w), _)| usize::from(w))
        .filter(|&w| w > 0)
        .unwrap_or(crate::render::wrap::DEFAULT_WIDTH);
    let mut lines = prompt_lines(&question, width);
    let last = lines.pop().unwrap_or_default();
    let mut stderr = std::io::stderr();
    for line in lines {
        if writeln!(stderr, "{line}").is_err() {
            return false;
        }
    }
    dialoguer::Confirm::new()
        .with_prompt(last)
        .default(false)
        .interact()
        .unwrap_or(false)
}

/// Room dialoguer adds after the prompt: ` [y/N] ` and the answer, or ` · no` after it.
const PROMPT_SUFFIX: usize = 8;

/// `question` as lines of at most `width` columns, the last leaving room for the answer.
fn prompt_lines(question: &str, width: usize) -> Vec<String> {
    crate::render::wrap::wrap_to(
        question,
        "",
        "",
        width.saturating_sub(PROMPT_SUFFIX).max(20),
    )
}

pub fn cluster_label(conn: &crate::input::connect::Connection) -> String {
    match &conn.context {
        Some(context) => format!("context {context} ({})", conn.server),
        None => format!("the in-cluster API server ({})", conn.server),
    }
}

/// Saves the ConfigMap a repair is about to change: to `requested` (`--backup`), else to
/// `./<name>.<resourceVersion>.backup.json`; an existing file is never overwritten. The backup
/// records `cluster`'s identity when it is known (`snapshots restore` checks it).
pub fn save_backup(
    requested: Option<&std::path::Path>,
    name: &str,
    cm: &k8s_openapi::api::core::v1::ConfigMap,
    cluster: &crate::input::live::cluster_identity::ClusterIdentity,
) -> Result<std::path::PathBuf, crate::exit::Failure> {
    use crate::snapshots::backup_file::{default_backup_path, write_backup};
    let path = requested.map_or_else(|| default_backup_path(name, cm), |p| p.to_path_buf());
    write_backup(&path, cm, cluster.id()).map_err(|e| {
        crate::exit::Failure::Refused(format!(
            "cannot write the backup {}: {e}; nothing was written; choose another path with --backup",
            path.display()
        ))
    })?;
    Ok(path)
}

/// The note for a backup saved without the cluster's identity: restoring it needs `--force`
/// unless the ConfigMap is still the same object.
pub fn unidentified_backup_note(
    cluster: &crate::input::live::cluster_identity::ClusterIdentity,
) -> Option<String> {
    match cluster {
        crate::input::live::cluster_identity::ClusterIdentity::Known(_) => None,
        crate::input::live::cluster_identity::ClusterIdentity::Unknown(why) => Some(format!(
            "note: the backup records no cluster identity ({why}; the read-only role, `k3sdoctor rbac read-only`, allows it); \
             restoring it onto anything but this very ConfigMap will need --force"
        )),
    }
}

#[cfg(test)]
mod prompt_tests {
    use super::*;
    use crate::render::wrap::columns;

    #[test]
    fn a_long_question_wraps_between_words_leaving_room_for_the_answer() {
        let q = "On context prod (https://10.0.0.1:6443): move lock kube-system/k3s from \
                 server-1 (node ip-10-0-0-11) to the server with hostname server-2 (node ip-10-0-0-12)?";
        let lines = prompt_lines(q, 80);
        assert!(lines.len() > 1);
        assert!(
            lines.iter().all(|l| columns(l) + PROMPT_SUFFIX <= 80),
            "{lines:?}"
        );
        assert_eq!(lines.join(" "), q);
        assert_eq!(prompt_lines("On context x: go?", 80), ["On context x: go?"]);
    }
}
