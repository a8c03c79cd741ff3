//! Waiting for the target server to take the lock over, with the phase on a spinner and a
//! signal ending the wait with what was written.

use std::io::IsTerminal;
use std::time::Duration;

use crate::commands::Ui;
use crate::commands::repair_events;
use crate::commands::takeover_watch::{Progress, verify_takeover};
use crate::commands::termination::Termination;
use crate::events::repair_event::EventReason;
use crate::exit::Failure;
use crate::follow::follow_event::lock_move_event;
use crate::follow::follow_plan::{FollowPlan, LockCopy};
use crate::follow::lock_objects::{Verification, WrittenCopy};
use crate::follow::repair_result::RepairResult;
use crate::input::connect::Connection;
use crate::render::OutputFormat;
use crate::settings::FollowOptions;

/// The move being made, and who asked for it (for its Event).
pub(super) struct Move<'a> {
    pub(super) conn: &'a Connection,
    pub(super) planned: &'a FollowPlan,
    pub(super) asked_by: &'a str,
}

/// Waits for the target server to take the lock over. A signal while waiting ends the run
/// with what was written and an Event that says the takeover was not verified.
pub(super) async fn await_takeover(
    the_move: Move<'_>,
    written: &[(LockCopy, WrittenCopy)],
    opts: &FollowOptions,
    term: &mut Termination,
    format: OutputFormat,
    result: &RepairResult,
    ui: &mut Ui,
) -> anyhow::Result<Verification> {
    let Move {
        conn,
        planned,
        asked_by,
    } = the_move;
    let spinner = Spinner::new(ui);
    let phase = |line: &str| spinner.set(line);
    let note = |line: &str| spinner.suspend(|| ui.note(line));
    let progress = Progress {
        phase: &phase,
        note: &note,
    };
    let verify = verify_takeover(
        conn,
        &planned.lock,
        written,
        &planned.from_holder,
        &planned.to_identity,
        opts.timeout
            .unwrap_or_else(|| planned.timing.verify_timeout()),
        &progress,
    );
    tokio::select! {
        verification = verify => Ok(verification),
        _ = term.received() => {
            drop(spinner);
            let done: Vec<String> = written
                .iter()
                .map(|(_, w)| format!("{} (resourceVersion {})", w.object, w.resource_version))
                .collect();
            ui.emit_structured(format, result)?;
            let line = format!(
                "interrupted while waiting for the takeover: wrote {} (naming {}); the takeover was not \
                 verified; check it with k3sdoctor leases",
                done.join(" and "),
                planned.to_identity
            );
            let moved = lock_move_event(
                EventReason::LockMoved,
                planned,
                written,
                "The takeover was not verified: interrupted.",
                asked_by,
            );
            repair_events::record(conn, ui, &moved).await;
            Err(Failure::Incomplete(line).into())
        }
    }
}

/// The current phase on stderr while waiting, only on a terminal.
struct Spinner(Option<indicatif::ProgressBar>);

impl Spinner {
    fn new(ui: &Ui) -> Spinner {
        if ui.quiet || !std::io::stderr().is_terminal() {
            return Spinner(None);
        }
        let bar = indicatif::ProgressBar::new_spinner();
        bar.enable_steady_tick(Duration::from_millis(120));
        Spinner(Some(bar))
    }

    fn set(&self, line: &str) {
        if let Some(bar) = &self.0 {
            bar.set_message(line.to_string());
        }
    }

    /// Runs `print` (a line on stderr) with the spinner put aside.
    fn suspend(&self, print: impl FnOnce()) {
        match &self.0 {
            Some(bar) => bar.suspend(print),
            None => print(),
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}
