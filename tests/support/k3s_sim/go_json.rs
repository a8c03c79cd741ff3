//! Just enough of Go's `encoding/json` output (Go ≥ 1.22, `json.Marshal`, HTML escaping on) to
//! write k3s's snapshot ConfigMap values byte for byte, plus the standard padded base64 of
//! `encoding/base64.StdEncoding`. Written by hand on purpose: serde_json escapes differently
//! (`<`, `>`, `&`, U+2028/U+2029, `\u001f`-style hex case).

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends `s` as a JSON string literal, escaped exactly as Go's `appendString` with
/// `escapeHTML = true`: `"` and `\` with a backslash; `\b \f \n \r \t` short forms; other
/// bytes < 0x20 and `<`, `>`, `&` as `\u00XX` (lowercase hex); U+2028/U+2029 as `\u2028`/`\u2029`;
/// everything else (DEL and all other non-ASCII included) raw. Rust strings are valid UTF-8, so
/// Go's `\ufffd` replacement of invalid bytes never applies.
pub(crate) fn push_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{0}'..='\u{1f}' | '<' | '>' | '&' => {
                let b = c as u8;
                out.push_str("\\u00");
                out.push(HEX[(b >> 4) as usize] as char);
                out.push(HEX[(b & 0xf) as usize] as char);
            }
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            _ => out.push(c),
        }
    }
    out.push('"');
}

/// `s` as a Go JSON string literal.
pub(crate) fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    push_string(&mut out, s);
    out
}

/// A compact JSON object written field by field, in the order of the calls (Go writes struct
/// fields in declaration order).
pub(crate) struct Object {
    buf: String,
}

impl Default for Object {
    fn default() -> Object {
        Object::new()
    }
}

impl Object {
    pub(crate) fn new() -> Object {
        Object {
            buf: String::from("{"),
        }
    }

    fn key(&mut self, key: &str) {
        if self.buf.len() > 1 {
            self.buf.push(',');
        }
        push_string(&mut self.buf, key);
        self.buf.push(':');
    }

    /// A field whose value is already JSON text.
    pub(crate) fn raw(&mut self, key: &str, json: &str) -> &mut Object {
        self.key(key);
        self.buf.push_str(json);
        self
    }

    pub(crate) fn string(&mut self, key: &str, value: &str) -> &mut Object {
        self.key(key);
        push_string(&mut self.buf, value);
        self
    }

    /// `string` with `,omitempty`: skipped when empty.
    pub(crate) fn string_omitempty(&mut self, key: &str, value: &str) -> &mut Object {
        if !value.is_empty() {
            self.string(key, value);
        }
        self
    }

    pub(crate) fn bool(&mut self, key: &str, value: bool) -> &mut Object {
        self.raw(key, if value { "true" } else { "false" })
    }

    /// `bool` with `,omitempty`: skipped when false.
    pub(crate) fn bool_omitempty(&mut self, key: &str, value: bool) -> &mut Object {
        if value {
            self.bool(key, true);
        }
        self
    }

    /// `int64` with `,omitempty`: skipped when 0.
    pub(crate) fn int_omitempty(&mut self, key: &str, value: i64) -> &mut Object {
        if value != 0 {
            self.raw(key, &value.to_string());
        }
        self
    }

    pub(crate) fn finish(&mut self) -> String {
        let mut out = std::mem::take(&mut self.buf);
        out.push('}');
        out
    }
}

/// Go's `json.Marshal(map[string]string)`: keys sorted by their bytes, compact. `entries` may be
/// in any order; duplicate keys cannot occur in a Go map and are not expected here.
pub(crate) fn string_map(entries: &[(String, String)]) -> String {
    let mut sorted: Vec<&(String, String)> = entries.iter().collect();
    sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut object = Object::new();
    for (k, v) in sorted {
        object.string(k, v);
    }
    object.finish()
}

/// `base64.StdEncoding.EncodeToString`: standard alphabet, `=` padding.
pub(crate) fn base64_std(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 0x3f) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_like_go_encoding_json() {
        assert_eq!(string(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(string("<a&b>"), r#""\u003ca\u0026b\u003e""#);
        assert_eq!(string("x\u{2028}y\u{2029}z"), r#""x\u2028y\u2029z""#);
        assert_eq!(
            string("\u{8}\u{c}\n\r\t\u{0}\u{1}\u{1f}\u{7f}"),
            "\"\\b\\f\\n\\r\\t\\u0000\\u0001\\u001f\u{7f}\""
        );
        assert_eq!(string("é中🙂'/"), "\"é中🙂'/\"");
        assert_eq!(string(""), r#""""#);
    }

    #[test]
    fn string_maps_sort_keys_by_bytes() {
        let entries = vec![
            ("note".to_string(), "example".to_string()),
            ("Z".to_string(), "upper".to_string()),
            ("é".to_string(), "<&>".to_string()),
            ("cluster".to_string(), "prod-a".to_string()),
        ];
        assert_eq!(
            string_map(&entries),
            r#"{"Z":"upper","cluster":"prod-a","note":"example","é":"\u003c\u0026\u003e"}"#
        );
        assert_eq!(string_map(&[]), "{}");
    }

    #[test]
    fn objects_follow_omitempty() {
        let json = Object::new()
            .string("name", "")
            .string_omitempty("location", "")
            .int_omitempty("size", 0)
            .int_omitempty("n", -3)
            .bool_omitempty("insecure", false)
            .bool("compressed", false)
            .finish();
        assert_eq!(json, r#"{"name":"","n":-3,"compressed":false}"#);
        assert_eq!(Object::new().finish(), "{}");
    }

    #[test]
    fn base64_matches_std_encoding() {
        assert_eq!(base64_std(b""), "");
        assert_eq!(base64_std(b"f"), "Zg==");
        assert_eq!(base64_std(b"fo"), "Zm8=");
        assert_eq!(base64_std(b"foo"), "Zm9v");
        assert_eq!(base64_std(b"\xff\xfe\xfd\xfc"), "//79/A==");
        assert_eq!(
            base64_std(br#"{"cluster":"prod-a","note":"example"}"#),
            "eyJjbHVzdGVyIjoicHJvZC1hIiwibm90ZSI6ImV4YW1wbGUifQ=="
        );
        assert_eq!(
            base64_std(b"context deadline exceeded"),
            "Y29udGV4dCBkZWFkbGluZSBleGNlZWRlZA=="
        );
    }
}
