//! JSON whose strings carry no raw control or invisible character. serde_json escapes only
//! what JSON requires (below U+0020, `"` and `\`), so a Lease holder with U+202E (right-to-left
//! override), U+0085 (next line) or another C1 control reached a terminal or log viewer raw
//! through `-o json`, `jq` or `serve`'s `/report`. Here every character the table escapes
//! ([`super::control_chars`]) is written as `\uXXXX` (a surrogate pair above U+FFFF): still
//! valid JSON that decodes to the exact value.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};

use super::control_chars::is_control;

/// A serde_json formatter that escapes what [`is_control`] names inside strings.
struct Escaping<F>(F);

impl<F: Formatter> Formatter for Escaping<F> {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut rest = fragment;
        while let Some((at, c)) = rest.char_indices().find(|&(_, c)| is_control(c)) {
            self.0.write_string_fragment(writer, &rest[..at])?;
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                write!(writer, "\\u{unit:04x}")?;
            }
            rest = &rest[at + c.len_utf8()..];
        }
        self.0.write_string_fragment(writer, rest)
    }

    // Everything else as the wrapped formatter writes it (pretty or compact).
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

/// `value` as pretty JSON (two-space indent, as `serde_json::to_writer_pretty`).
pub(crate) fn to_writer_pretty<W: Write, T: Serialize + ?Sized>(
    writer: W,
    value: &T,
) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(writer, Escaping(PrettyFormatter::new()));
    value.serialize(&mut ser)
}

/// `value` as compact JSON on one line (`-o jsonl`, `leases --watch -o json`).
pub(crate) fn to_writer<W: Write, T: Serialize + ?Sized>(
    writer: W,
    value: &T,
) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(writer, Escaping(CompactFormatter));
    value.serialize(&mut ser)
}

/// [`to_writer_pretty`] into a string.
pub(crate) fn to_string_pretty<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    let mut out = Vec::new();
    to_writer_pretty(&mut out, value)?;
    // serde_json writes UTF-8, and the escapes are ASCII.
    Ok(String::from_utf8(out).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisible_and_c1_characters_are_escaped_and_decode_to_the_same_value() {
        let holder = "s1\u{202e}1s\u{85}\u{9b}31m\u{200b}\u{e0041}é\n\"";
        let value = serde_json::json!({ "holder": holder });
        for json in [
            to_string_pretty(&value).unwrap(),
            String::from_utf8({
                let mut out = Vec::new();
                to_writer(&mut out, &value).unwrap();
                out
            })
            .unwrap(),
        ] {
            assert!(
                json.contains(r#"s1\u202e1s\u0085\u009b31m\u200b\udb40\udc41é\n\""#),
                "{json}"
            );
            // Pretty JSON's own newlines aside.
            assert!(
                !json.chars().any(|c| c != '\n' && is_control(c)),
                "{json:?}"
            );
            let back: serde_json::Value = serde_json::from_str(&json).unwrap();
            assert_eq!(back["holder"], holder);
        }
    }

    #[test]
    fn the_layout_is_serde_jsons() {
        let value = serde_json::json!({ "a": [1, {"b": "c"}], "d": {} });
        assert_eq!(
            to_string_pretty(&value).unwrap(),
            serde_json::to_string_pretty(&value).unwrap()
        );
        let mut compact = Vec::new();
        to_writer(&mut compact, &value).unwrap();
        assert_eq!(compact, serde_json::to_vec(&value).unwrap());
    }
}
