//! Word wrapping for prose under a table: lines break between words, never inside one, and
//! continuation lines hang under the first line's text.

use std::io::Write;

use super::control_chars::escape_controls;
use crate::line_cap::cap_line;

/// Columns used when stdout is not a terminal (or the terminal does not say): a pipe gets
/// the layout of an 80-column terminal, so what a script captures is what a reader sees.
pub(crate) const DEFAULT_WIDTH: usize = 80;

/// Below this, wrapping would leave a word or two per line; wider lines read better.
const NARROWEST: usize = 40;

/// `text` as lines of at most `width` columns (where its words allow): the first starts with
/// `first`, the rest with `rest`. A word longer than a line gets a line of its own rather than
/// being cut, because names and commands must stay copyable.
pub(crate) fn wrap(text: &str, first: &str, rest: &str, width: usize) -> Vec<String> {
    wrap_to(text, first, rest, width.max(NARROWEST))
}

/// [`wrap`] to exactly `width`, however narrow: for table cells.
pub(crate) fn wrap_to(text: &str, first: &str, rest: &str, width: usize) -> Vec<String> {
    // Words are split at whitespace, which a newline in a cluster string is: escape first.
    // Prose quotes the cluster (names, a Job's failure message): one paragraph is bounded.
    let text = escape_controls(text);
    let text = cap_line(&text);
    let mut lines = Vec::new();
    let mut line = first.to_string();
    let mut line_cols = columns(first);
    let mut empty = true;
    for word in text.split_whitespace() {
        let cols = columns(word);
        if !empty && line_cols + 1 + cols > width {
            lines.push(std::mem::replace(&mut line, rest.to_string()));
            line_cols = columns(rest);
            empty = true;
        }
        if !empty {
            line.push(' ');
            line_cols += 1;
        }
        line.push_str(word);
        line_cols += cols;
        empty = false;
    }
    lines.push(line);
    lines
}

/// Writes `text` wrapped as [`wrap`] does.
pub(crate) fn write_wrapped(
    out: &mut dyn Write,
    text: &str,
    first: &str,
    rest: &str,
    width: usize,
) -> std::io::Result<()> {
    for line in wrap(text, first, rest, width) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// Display columns, as a terminal draws them: a CJK character or an emoji takes two, a
/// combining mark none (Unicode East Asian Width, via unicode-width).
pub(crate) fn columns(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn breaks_between_words_with_a_hanging_indent() {
        let text = "k3s is held by prod-k3s-1 but k3s-etcd by prod-k3s-2, so the etcd \
                    controllers never start their informers";
        let lines = wrap(text, "    ", "    ", 40);
        assert_eq!(
            lines,
            [
                "    k3s is held by prod-k3s-1 but",
                "    k3s-etcd by prod-k3s-2, so the etcd",
                "    controllers never start their",
                "    informers",
            ]
        );
        assert!(lines.iter().all(|l| columns(l) <= 40));
    }

    #[test]
    fn a_word_longer_than_the_line_stands_alone_uncut() {
        let long = "local-etcd-snapshot-prod-k3s-1-1716984000-48513c-and-more-and-more";
        let lines = wrap(&format!("missing: {long} here"), "", "  ", 40);
        assert_eq!(lines, ["missing:", &format!("  {long}"), "  here"]);
    }

    #[test]
    fn first_line_prefix_differs_from_the_rest() {
        assert_eq!(
            wrap(
                "fix: aaaa bbbb cccc dddd eeee ffff gggg hhhh",
                "* ",
                "    ",
                40
            ),
            ["* fix: aaaa bbbb cccc dddd eeee ffff", "    gggg hhhh"]
        );
    }

    #[test]
    fn counts_display_columns_not_characters() {
        assert_eq!(columns("节点"), 4);
        assert_eq!(columns("e\u{301}"), 1);
        assert_eq!(columns("—…"), 2);
        let lines = wrap(
            "节点一 节点二 节点三 节点四 节点五 节点六 节点七",
            "",
            "",
            40,
        );
        assert_eq!(lines.len(), 2);
        assert!(lines.iter().all(|l| columns(l) <= 40));
    }
}
