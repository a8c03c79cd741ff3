//! Strings from the cluster are printed as text, never as terminal commands: a Lease holder
//! of `\x1b[31m` or with a newline would otherwise recolour the terminal or break a table
//!, and one with U+202E (right-to-left override) or U+200B (zero-width
//! space) would reorder the rest of the line or pass for another name.
//! Every human rendering passes cluster-sourced text through [`escape_controls`] — table
//! cells, wrapped prose (findings, notes, plans), one-line writes and every stderr line.
//! JSON keeps the exact value for programs, with these characters written as `\uXXXX`
//! escapes (`json_escape.rs`); YAML keeps the value as serde_yaml writes it.

use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every C0 control, DEL, C1 control and invisible formatting character (see
/// [`is_control`]) written as a visible escape (`\e`, `\n`, `\r`, `\t`, `\u{7f}`, `\u{9b}`,
/// `\u{202e}`, …); everything else, non-ASCII letters included, as it is. Escaping twice
/// gives what escaping once gives, so layers may each apply it.
pub(crate) fn escape_controls(text: &str) -> Cow<'_, str> {
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

/// What must not reach a terminal raw:
/// - C0 (U+0000–U+001F), DEL (U+007F) and C1 (U+0080–U+009F): what a terminal may act on;
/// - the bidirectional controls, which reorder what follows them on the line ("Trojan
///   Source", CVE-2021-42574): U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069;
/// - characters that show nothing, so `s1\u{200b}` looks like `s1`: U+00AD soft hyphen,
///   U+180E, U+200B–U+200D, U+2060–U+2064, U+206A–U+206F, U+FEFF, U+FFF9–U+FFFB and the
///   tag characters U+E0000–U+E007F (Unicode's format characters, general category Cf,
///   that a name has no use for);
/// - U+2028 and U+2029, line and paragraph separators some terminals and editors break at.
pub(super) fn is_control(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00ad}'
                | '\u{061c}'
                | '\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206f}'
                | '\u{feff}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{e0000}'..='\u{e007f}'
        )
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

    #[test]
    fn bidi_and_invisible_characters_become_visible() {
        assert_eq!(escape_controls("s1\u{202e}lave"), "s1\\u{202e}lave");
        assert_eq!(escape_controls("s\u{200b}1"), "s\\u{200b}1");
        for c in [
            '\u{61c}',
            '\u{200e}',
            '\u{200f}',
            '\u{202a}',
            '\u{202d}',
            '\u{2066}',
            '\u{2069}',
            '\u{200c}',
            '\u{200d}',
            '\u{2028}',
            '\u{2029}',
            '\u{2060}',
            '\u{feff}',
            '\u{ad}',
            '\u{e0041}',
        ] {
            let shown = escape_controls(&c.to_string()).into_owned();
            assert_eq!(shown, format!("\\u{{{:x}}}", c as u32));
            assert_eq!(escape_controls(&shown), shown, "escaping twice");
        }
        // Letters and marks of other scripts, and visible spaces, stay as they are.
        for text in ["שרת-1", "خادم", "ノード", "a\u{a0}b", "e\u{301}"] {
            assert!(matches!(escape_controls(text), Cow::Borrowed(_)), "{text}");
        }
    }
}
