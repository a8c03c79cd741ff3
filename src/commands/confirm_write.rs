//! Asking before a write: the prompt on a terminal, and `--yes` where there is none.

use std::io::Write;

/// `--fix` asks before writing; with no terminal to ask on, only `--yes` may stand in.
pub(crate) fn require_confirmation_means(
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
pub(crate) fn confirm_write(conn: &crate::input::connect::Connection, what: &str) -> bool {
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

pub(super) fn cluster_label(conn: &crate::input::connect::Connection) -> String {
    match &conn.context {
        Some(context) => format!("context {context} ({})", conn.server),
        None => format!("the in-cluster API server ({})", conn.server),
    }
}

#[cfg(test)]
mod tests {
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
