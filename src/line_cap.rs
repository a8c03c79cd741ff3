//! One line of prose stays readable whatever the cluster holds: a refusal quoting a 229 KB
//! answer, a note naming thousands of objects or a Job's failure message of megabytes would
//! otherwise fill a terminal or a log. Lines past [`LONGEST_LINE`] are cut and say how much
//! was left out; `-o json` and `-o yaml` keep every value whole.

use std::borrow::Cow;

/// The most bytes of one line of an error, note or finding: about fifty 80-column lines.
pub(crate) const LONGEST_LINE: usize = 4096;

/// The most bytes of text from elsewhere (an API server's message) quoted inside one of our
/// lines, so that what to do, after it, is never what gets cut.
pub(crate) const LONGEST_QUOTE: usize = 1024;

/// `line` cut to at most [`LONGEST_LINE`] bytes (at a character boundary), ending in
/// `… and N more characters` when it was cut.
pub(crate) fn cap_line(line: &str) -> Cow<'_, str> {
    cap_at(line, LONGEST_LINE)
}

/// `text` cut to at most `most` bytes, as [`cap_line`] cuts.
pub(crate) fn cap_at(line: &str, most: usize) -> Cow<'_, str> {
    if line.len() <= most {
        return Cow::Borrowed(line);
    }
    let mut end = most;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    let more = line[end..].chars().count();
    Cow::Owned(format!("{}… and {more} more characters", &line[..end]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_lines_stay_and_long_ones_say_how_much_was_cut() {
        assert!(matches!(cap_at("short", 10), Cow::Borrowed("short")));
        assert_eq!(
            cap_at("0123456789abc", 10),
            "0123456789… and 3 more characters"
        );
        // Never inside a character: é is two bytes.
        assert_eq!(cap_at("ééééé", 5), "éé… and 3 more characters");
        let long = "x".repeat(229 * 1024);
        let capped = cap_line(&long);
        assert!(capped.len() < LONGEST_LINE + 40, "{}", capped.len());
        assert!(capped.ends_with(&format!(
            "… and {} more characters",
            long.len() - LONGEST_LINE
        )));
    }
}
