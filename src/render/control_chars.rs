//! Strings from the cluster are printed as text, never as terminal commands: a Lease holder
//! of `\x1b[31m` or with a newline would otherwise recolour the terminal or break a table
//! (issue 18, item 15). Every human rendering passes cluster-sourced text through
//! [`escape_controls`] — table cells, wrapped prose (findings, notes, plans), one-line writes
//! and every stderr line. JSON and YAML need nothing: serde escapes control characters there.

use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every C0 control, DEL and C1 control written as a visible escape (`\e`, `\n`,
/// `\r`, `\t`, `\u{7f}`, `\u{9b}`, …); everything else, non-ASCII letters included, as it is.
/// Escaping twice gives what escaping once gives, so layers may each apply it.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\x1b' => out.push_str("\\e"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_control(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// C0 (U+0000–U+001F), DEL (U+007F) and C1 (U+0080–U+009F): what a terminal may act on.
fn is_control(c: char) -> bool {
    c.is_control()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_become_visible_and_the_rest_stays() {
        assert_eq!(escape_controls("s1\x1b[31mred\nx"), "s1\\e[31mred\\nx");
        assert_eq!(
            escape_controls("a\u{9b}31m\u{7f}\0"),
            "a\\u{9b}31m\\u{7f}\\u{0}"
        );
        assert_eq!(escape_controls("tab\there\r"), "tab\\there\\r");
        assert!(matches!(
            escape_controls("nœud-été-1 ✓"),
            Cow::Borrowed("nœud-été-1 ✓")
        ));
        let once = escape_controls("\x1b\n").into_owned();
        assert_eq!(escape_controls(&once), once);
    }
}
