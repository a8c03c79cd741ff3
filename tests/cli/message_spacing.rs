//! Every sentence a user can see — an error, a note, a finding, help — is written as a string
//! literal in `src/`. A line continuation lost in one (a literal broken over two lines without
//! its `\`) leaves a run of spaces in the middle of the sentence; so does a doubled blank. This
//! scans every literal outside the test modules for a run of three or more spaces between
//! words.

use crate::support::harness::{repo_path, rust_files};

/// The contents of the ordinary (not raw) string literals of `code`, each with its line. A
/// newline in the source inside a literal is kept as a newline.
fn literals(code: &str) -> Vec<(usize, String)> {
    let c: Vec<char> = code.chars().collect();
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < c.len() {
        match c[i] {
            '\n' => line += 1,
            // A line comment: skip to its end (a `"` in prose opens no literal).
            '/' if at(i + 1) == '/' => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            // A char literal: `'"'`, `'\''`, `'\"'` (a lifetime has no closing quote there).
            '\'' if at(i + 1) == '\\' && at(i + 3) == '\'' => i += 3,
            '\'' if at(i + 2) == '\'' => i += 2,
            // A raw string, `r"…"` or `r#"…"#`: skipped whole.
            'r' if (at(i + 1) == '"' || at(i + 1) == '#')
                && !at(i.wrapping_sub(1)).is_alphanumeric() =>
            {
                let mut j = i + 1;
                let mut hashes = 0;
                while at(j) == '#' {
                    hashes += 1;
                    j += 1;
                }
                if at(j) == '"' {
                    j += 1;
                    let close: String = std::iter::once('"')
                        .chain(std::iter::repeat_n('#', hashes))
                        .collect();
                    while j < c.len() && !c[j..].iter().collect::<String>().starts_with(&close) {
                        if c[j] == '\n' {
                            line += 1;
                        }
                        j += 1;
                    }
                    i = j + close.len();
                    continue;
                }
            }
            '"' => {
                let start = line;
                let mut text = String::new();
                i += 1;
                while i < c.len() && c[i] != '"' {
                    match c[i] {
                        // A continuation swallows the newline and the indentation after it.
                        '\\' if at(i + 1) == '\n' => {
                            i += 1;
                            while at(i + 1).is_whitespace() {
                                if c[i] == '\n' {
                                    line += 1;
                                }
                                i += 1;
                            }
                            if c[i] == '\n' {
                                line += 1;
                            }
                        }
                        '\\' => {
                            i += 1;
                            text.push(if at(i) == 'n' { '\n' } else { at(i) });
                        }
                        '\n' => {
                            line += 1;
                            text.push('\n');
                        }
                        ch => text.push(ch),
                    }
                    i += 1;
                }
                out.push((start, text));
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// A run of three or more spaces between two words of one line, or a line of a literal broken
/// over source lines that goes on, indented as code, in lower case: a lost `\`. (Help text
/// broken over lines indents by two or four.)
fn gap_between_words(text: &str) -> Option<&str> {
    text.lines().find(|line| {
        let indent = line.len() - line.trim_start_matches(' ').len();
        if indent >= 8 && line[indent..].starts_with(|c: char| c.is_ascii_lowercase()) {
            return true;
        }
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b' ' {
                let start = i;
                while i < bytes.len() && bytes[i] == b' ' {
                    i += 1;
                }
                let word_before = start > 0 && {
                    let before = bytes[start - 1];
                    before.is_ascii_lowercase() || b",;.:)".contains(&before)
                };
                let word_after = i < bytes.len() && (bytes[i] as char).is_ascii_lowercase();
                if i - start >= 3 && word_before && word_after {
                    return true;
                }
            } else {
                i += 1;
            }
        }
        false
    })
}

#[test]
fn no_sentence_a_user_sees_has_a_run_of_spaces_between_words() {
    let files = rust_files(&repo_path("src"));
    let mut found = Vec::new();
    for path in files {
        let name = path.to_string_lossy().into_owned();
        if name.ends_with("tests.rs") || name.ends_with("_tests.rs") {
            continue;
        }
        let code = std::fs::read_to_string(&path).unwrap();
        // Test modules close each file; their fixtures are tables aligned with spaces.
        let code = code.split("#[cfg(test)]").next().unwrap_or_default();
        for (line, text) in literals(code) {
            if let Some(bad) = gap_between_words(&text) {
                found.push(format!("{name}:{line}: {bad:?}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "runs of spaces inside a sentence:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_scan_finds_a_lost_continuation_and_passes_a_kept_one() {
    let lost = "let m = format!(\"cannot read the dump;\n              pass another file\");";
    let (_, text) = &literals(lost)[0];
    assert!(gap_between_words(text).is_some(), "{text:?}");
    let kept = "let m = format!(\"cannot read the dump; \\\n              pass another file\");";
    let (_, text) = &literals(kept)[0];
    assert_eq!(text, "cannot read the dump; pass another file");
    assert!(gap_between_words(text).is_none());
    // Aligned columns of a table start with capitals or digits, and raw strings are skipped.
    assert!(gap_between_words("NAME   HOLDER   AGE").is_none());
    assert!(literals("let x = r\"a    b\";").is_empty());
}
