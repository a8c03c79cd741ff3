//! A linear guard against deeply nested YAML flow collections, run before the YAML parser.
//!
//! The parser (libyaml's algorithm, in unsafe-libyaml under serde_yaml_ng) keeps one
//! "possible simple key" per open flow level and re-checks all of them at every token, so
//! `a: [[[[…` costs time quadratic in the depth before serde_yaml_ng's recursion limit is ever
//! reached: 200,000 levels (400 KB) took over three minutes, 50,000 levels
//! 3.2 s in a release build. Counting the brackets first is linear (64 µs for a mebibyte of
//! `[`), and what it lets through stays fast: a mebibyte of tokens 64 levels deep parses (and
//! fails) in 0.19 s in a release build, where a flat one-level list of that size takes 0.11 s
//! and a mebibyte of nested block sequences 0.16 s. No real object comes near the limit:
//! Kubernetes objects nest a few dozen levels at most.

/// How deep flow collections may nest. serde_yaml_ng refuses anything nested deeper than 128
/// levels anyway; flow collections get half of that, since each open level is paid for at
/// every later token, and kubectl prints objects in block style, with flow only for `{}`, `[]` and the
/// JSON inside annotations, a few levels deep.
pub(super) const MAX_FLOW_NESTING: usize = 64;

/// The 1-based line on which flow collections (`[`, `{`) first nest deeper than
/// [`MAX_FLOW_NESTING`], if they do.
///
/// Brackets are counted wherever they are, inside quoted or plain scalars too: that can only
/// over-count (a string with more than 64 unmatched opening brackets is refused), never let
/// a real nesting through, which a tokenizer of its own that disagreed with the parser could.
/// A `---` or `...` line starts a new document: the scanner ends every flow level there (an
/// unclosed collection before it is a parse error of its own), so the count starts again.
pub(super) fn too_deep(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (index, line) in text.lines().enumerate() {
        if is_document_marker(line) {
            depth = 0;
            continue;
        }
        for byte in line.bytes() {
            match byte {
                b'[' | b'{' => {
                    depth += 1;
                    if depth > MAX_FLOW_NESTING {
                        return Some(index + 1);
                    }
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
    }
    None
}

fn is_document_marker(line: &str) -> bool {
    ["---", "..."].iter().any(|marker| {
        line.strip_prefix(marker)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '\r']))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubernetes_shapes_pass_and_deep_flow_nesting_is_caught() {
        let ok = "metadata:\n  annotations:\n    x: '{\"a\":[{\"b\":[1,2]}]}'\n  labels: {a: b}\n";
        assert_eq!(too_deep(ok), None);
        let deep = format!("a: 1\nb: {}", "[".repeat(MAX_FLOW_NESTING + 1));
        assert_eq!(too_deep(&deep), Some(2));
        let balanced = format!("a: {}{}", "[".repeat(50), "]".repeat(50));
        assert_eq!(too_deep(&balanced.repeat(10)), None);
    }

    #[test]
    fn a_new_document_starts_the_count_again() {
        let half = format!("a: {}\n", "{".repeat(40));
        assert_eq!(too_deep(&format!("{half}---\n{half}")), None);
        assert_eq!(too_deep(&format!("{half}{half}")), Some(2));
    }
}
