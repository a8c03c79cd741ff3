//! YAML with its timestamps in double quotes, as kubectl writes them
//! (`creationTimestamp: "2024-05-31T12:10:40Z"`).
//!
//! serde_yaml_ng leaves them plain, which YAML 1.1 readers (PyYAML, Ruby's Psych, yq v3)
//! turn into dates rather than the strings the JSON schema promises. Quoting changes no value
//! for a YAML 1.2 reader: the scalar is the same string either way.

use std::sync::LazyLock;

use regex::Regex;

use crate::const_regex::const_regex;

/// A plain scalar that is an RFC 3339 timestamp, as a mapping value or a list item. Its
/// characters need no escaping, so quoting is wrapping it in `"`.
static PLAIN_TIMESTAMP: LazyLock<Regex> = LazyLock::new(|| {
    const_regex(
        r##"^(\s*(?:- )*(?:[^\s:'"#\-][^:]*: )?)(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d))$"##,
    )
});

/// The header of a block scalar (`key: |-`, `- >`): the lines under it are text, not YAML.
static BLOCK_SCALAR: LazyLock<Regex> =
    LazyLock::new(|| const_regex(r"(?:^|: |- )[|>][+-]?[0-9]?$"));

pub(crate) fn quote_timestamps(yaml: &str) -> String {
    let mut out = String::with_capacity(yaml.len() + 64);
    // The indentation of a block scalar's header while inside its text.
    let mut block: Option<usize> = None;
    for line in yaml.split_inclusive('\n') {
        let content = line.trim_end_matches('\n');
        let indent = content.len() - content.trim_start().len();
        if let Some(header) = block {
            if content.trim().is_empty() || indent > header {
                out.push_str(line);
                continue;
            }
            block = None;
        }
        if BLOCK_SCALAR.is_match(content) {
            block = Some(indent);
        }
        match PLAIN_TIMESTAMP.captures(content) {
            Some(c) => {
                out.push_str(&format!("{}\"{}\"", &c[1], &c[2]));
                out.push_str(&line[content.len()..]);
            }
            None => out.push_str(line),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_values_and_list_items_but_not_text_in_a_block() {
        let yaml = "now:\n  time: 2024-05-31T12:10:40.271845Z\nlocks:\n- acquireTime: 2024-05-28T03:12:47Z\n  \
                    renewTime: null\n  times:\n  - 2024-01-15T10:02:12+02:00\n  message: |-\n    \
                    renewed at:\n    2024-01-15T10:02:12Z\n  holder: 2024-01-15T10:02:12Z-ish\nlast: 2024-01-15T10:02:12Z\n";
        let quoted = quote_timestamps(yaml);
        assert_eq!(
            quoted,
            "now:\n  time: \"2024-05-31T12:10:40.271845Z\"\nlocks:\n- acquireTime: \"2024-05-28T03:12:47Z\"\n  \
             renewTime: null\n  times:\n  - \"2024-01-15T10:02:12+02:00\"\n  message: |-\n    \
             renewed at:\n    2024-01-15T10:02:12Z\n  holder: 2024-01-15T10:02:12Z-ish\nlast: \"2024-01-15T10:02:12Z\"\n"
        );
        // The same document to a YAML 1.2 reader.
        let before: serde_json::Value = serde_yaml_ng::from_str(yaml).unwrap();
        let after: serde_json::Value = serde_yaml_ng::from_str(&quoted).unwrap();
        assert_eq!(before, after);
    }

    #[test]
    fn leaves_other_scalars_alone() {
        for yaml in [
            "a: 2024-05-31\n",
            "a: '2024-05-31T12:10:40Z'\n",
            "a: x 2024-05-31T12:10:40Z\n",
            "a: 12\n",
        ] {
            assert_eq!(quote_timestamps(yaml), yaml);
        }
    }
}
