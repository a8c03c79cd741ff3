//! JSON written the way Go's `encoding/json` writes it, because k3s's ConfigMap values are
//! compared byte for byte: `<`, `>`, `&`, U+2028 and U+2029 are escaped (HTML-safe), `\b` and
//! `\f` use their short forms from Go 1.22 on (`\u0008`, `\u000c` before), other control
//! characters become `\u00XX`, and every other character, non-ASCII included, is written as UTF-8.

use std::collections::BTreeMap;

pub(crate) use crate::version::shapes::GoEscaping;

/// Appends `s` as a Go-encoded JSON string (with quotes).
pub(crate) fn push_string(out: &mut String, s: &str, escaping: GoEscaping) {
    out.reserve(s.len() + 2);
    out.push('"');
    // Runs of characters Go writes as they are are copied whole: a snapshot's metadata is
    // kilobytes of base64 with nothing to escape.
    let mut plain_from = 0;
    for (at, c) in s.char_indices() {
        if let Some(escaped) = escape(c, escaping) {
            out.push_str(&s[plain_from..at]);
            out.push_str(&escaped);
            plain_from = at + c.len_utf8();
        }
    }
    out.push_str(&s[plain_from..]);
    out.push('"');
}

/// How Go's encoding/json writes `c` inside a string, when not as it is.
fn escape(c: char, escaping: GoEscaping) -> Option<std::borrow::Cow<'static, str>> {
    let fixed = |s: &'static str| Some(std::borrow::Cow::Borrowed(s));
    match c {
        '\u{8}' | '\u{c}' if escaping == GoEscaping::BeforeGo122 => {
            Some(format!("\\u{:04x}", c as u32).into())
        }
        '"' => fixed("\\\""),
        '\\' => fixed("\\\\"),
        '\n' => fixed("\\n"),
        '\r' => fixed("\\r"),
        '\t' => fixed("\\t"),
        '\u{8}' => fixed("\\b"),
        '\u{c}' => fixed("\\f"),
        '<' => fixed("\\u003c"),
        '>' => fixed("\\u003e"),
        '&' => fixed("\\u0026"),
        '\u{2028}' => fixed("\\u2028"),
        '\u{2029}' => fixed("\\u2029"),
        c if (c as u32) < 0x20 => Some(format!("\\u{:04x}", c as u32).into()),
        _ => None,
    }
}

/// `json.Marshal(map[string]string)`: keys sorted by their bytes (a `BTreeMap` of `String`
/// sorts the same way).
pub(crate) fn string_map(map: &BTreeMap<String, String>, escaping: GoEscaping) -> String {
    let mut out = String::from("{");
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_string(&mut out, k, escaping);
        out.push(':');
        push_string(&mut out, v, escaping);
    }
    out.push('}');
    out
}

/// A compact JSON object built field by field, in struct order, like a Go struct encodes.
pub(crate) struct ObjectWriter {
    out: String,
    escaping: GoEscaping,
}

impl ObjectWriter {
    pub(crate) fn new(escaping: GoEscaping) -> ObjectWriter {
        ObjectWriter {
            out: String::from("{"),
            escaping,
        }
    }

    fn key(&mut self, key: &str) {
        if self.out.len() > 1 {
            self.out.push(',');
        }
        push_string(&mut self.out, key, self.escaping);
        self.out.push(':');
    }

    pub(crate) fn string(&mut self, key: &str, value: &str) {
        self.key(key);
        push_string(&mut self.out, value, self.escaping);
    }

    /// `omitempty` on a string.
    pub(crate) fn string_omitempty(&mut self, key: &str, value: &str) {
        if !value.is_empty() {
            self.string(key, value);
        }
    }

    pub(crate) fn int_omitempty(&mut self, key: &str, value: i64) {
        if value != 0 {
            self.key(key);
            self.out.push_str(&value.to_string());
        }
    }

    pub(crate) fn bool(&mut self, key: &str, value: bool) {
        self.key(key);
        self.out.push_str(if value { "true" } else { "false" });
    }

    pub(crate) fn bool_omitempty(&mut self, key: &str, value: bool) {
        if value {
            self.bool(key, value);
        }
    }

    /// An already-encoded JSON value.
    pub(crate) fn raw(&mut self, key: &str, json: &str) {
        self.key(key);
        self.out.push_str(json);
    }

    pub(crate) fn finish(mut self) -> String {
        self.out.push('}');
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quoted(s: &str) -> String {
        let mut out = String::new();
        push_string(&mut out, s, GoEscaping::Go122);
        out
    }

    #[test]
    fn escapes_like_go() {
        assert_eq!(quoted("a<b>&c"), r#""a\u003cb\u003e\u0026c""#);
        assert_eq!(quoted("q\"\\"), r#""q\"\\""#);
        assert_eq!(
            quoted("\n\r\t\u{8}\u{c}\u{1}\u{1f}"),
            r#""\n\r\t\b\f\u0001\u001f""#
        );
        assert_eq!(quoted("\u{2028}\u{2029}"), r#""\u2028\u2029""#);
        let mut before = String::new();
        push_string(&mut before, "\u{8}\u{c}\n", GoEscaping::BeforeGo122);
        assert_eq!(before, r#""\u0008\u000c\n""#);
        assert_eq!(quoted("é 雪 🎉 \u{7f}"), "\"é 雪 🎉 \u{7f}\"");
    }

    #[test]
    fn maps_sort_by_key_bytes() {
        let map: BTreeMap<String, String> =
            [("note", "example"), ("cluster", "prod-a"), ("Z", "<")]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        assert_eq!(
            string_map(&map, GoEscaping::Go122),
            r#"{"Z":"\u003c","cluster":"prod-a","note":"example"}"#
        );
    }
}
