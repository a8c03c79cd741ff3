//! The text of each value inside JSON that serde_json has already accepted, without building
//! anything from it: a list's items can then be parsed one at a time and dropped at once when
//! k3sdoctor does not use them, where a `serde_json::Value` of the whole list costs about a
//! hundred times its text (three million `{"a":{}}` items, 27 MB, held 2.2 GB).
//!
//! Every function here expects valid JSON (the caller checks the whole text with [`Checked`]
//! first) and only finds boundaries: brackets outside strings and the ends of strings and
//! scalars. On text that is not valid JSON the spans are wrong but never out of bounds.

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// JSON read exactly as serde_json reads a `Value` (its nesting limit of 128, escapes, numbers),
/// keeping nothing: the check before any span is taken. serde_json's own `IgnoredAny` skips
/// values without that limit.
pub(super) struct Checked;

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Checked, D::Error> {
        deserializer.deserialize_any(CheckedVisitor)
    }
}

struct CheckedVisitor;

impl<'de> Visitor<'de> for CheckedVisitor {
    type Value = Checked;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
        while seq.next_element::<Checked>()?.is_some() {}
        Ok(Checked)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
        while map.next_key::<IgnoredAny>()?.is_some() {
            map.next_value::<Checked>()?;
        }
        Ok(Checked)
    }
}

/// JSON's four whitespace bytes.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() && is_space(bytes[at]) {
        at += 1;
    }
    at
}

/// The index just past the string whose opening quote is at `start`.
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut at = start + 1;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            b'"' => return at + 1,
            _ => at += 1,
        }
    }
    bytes.len()
}

/// The index just past the value that starts at `start` (no leading whitespace).
fn value_end(bytes: &[u8], start: usize) -> usize {
    match bytes.get(start) {
        Some(b'"') => string_end(bytes, start),
        Some(b'{' | b'[') => collection_end(bytes, start),
        // A number, `true`, `false` or `null`: up to the next delimiter.
        _ => {
            let mut at = start;
            while at < bytes.len() && !matches!(bytes[at], b',' | b':' | b']' | b'}') {
                if is_space(bytes[at]) {
                    break;
                }
                at += 1;
            }
            at
        }
    }
}

/// The index just past the object or array that opens at `start`.
fn collection_end(bytes: &[u8], start: usize) -> usize {
    let mut depth = 0usize;
    let mut at = start;
    while at < bytes.len() {
        match bytes[at] {
            b'"' => {
                at = string_end(bytes, at);
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return at + 1;
                }
            }
            _ => {}
        }
        at += 1;
    }
    bytes.len()
}

/// The elements of the array `text` (which starts with `[`), each as its own text.
pub(super) fn elements(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut at = skip_space(bytes, 1);
    std::iter::from_fn(move || {
        if at >= bytes.len() || bytes[at] == b']' {
            return None;
        }
        let end = value_end(bytes, at);
        let element = text.get(at..end)?;
        at = skip_space(bytes, end);
        if bytes.get(at) == Some(&b',') {
            at = skip_space(bytes, at + 1);
        }
        Some(element)
    })
}

/// The members of the object `text` (which starts with `{`): each key as JSON text (quotes and
/// escapes included) and its value's text.
pub(super) fn members(text: &str) -> impl Iterator<Item = (&str, &str)> {
    let bytes = text.as_bytes();
    let mut at = skip_space(bytes, 1);
    std::iter::from_fn(move || {
        if at >= bytes.len() || bytes[at] != b'"' {
            return None;
        }
        let key_end = string_end(bytes, at);
        let key = text.get(at..key_end)?;
        at = skip_space(bytes, key_end);
        if bytes.get(at) == Some(&b':') {
            at = skip_space(bytes, at + 1);
        }
        let end = value_end(bytes, at);
        let value = text.get(at..end)?;
        at = skip_space(bytes, end);
        if bytes.get(at) == Some(&b',') {
            at = skip_space(bytes, at + 1);
        }
        Some((key, value))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_refuses_what_a_value_refuses() {
        let check = |text: &str| serde_json::from_str::<Checked>(text).map(|_| ());
        let value = |text: &str| serde_json::from_str::<serde_json::Value>(text).map(|_| ());
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        for text in [
            deep.as_str(),
            r#"["\ud800"]"#,
            r#"{"a":1,}"#,
            "[1e999]",
            "[1,2]",
        ] {
            assert_eq!(
                check(text).map_err(|e| e.to_string()),
                value(text).map_err(|e| e.to_string()),
                "{text}"
            );
        }
    }

    #[test]
    fn arrays_split_into_their_elements_whatever_they_hold() {
        let text = r#"[ {"a":"]},[\"x"}, [1, [2]] ,"s\\",-1.5e3,true,null ,{}]"#;
        let found: Vec<&str> = elements(text).collect();
        assert_eq!(
            found,
            [
                r#"{"a":"]},[\"x"}"#,
                "[1, [2]]",
                r#""s\\""#,
                "-1.5e3",
                "true",
                "null",
                "{}"
            ]
        );
        assert_eq!(elements("[]").count(), 0);
        assert_eq!(elements("[ \n ]").count(), 0);
    }

    #[test]
    fn objects_split_into_keys_and_values() {
        let text = "{ \"kind\" : \"List\",\n\"it\\u0065ms\":[{\"a\":{}}], \"n\":1}";
        let found: Vec<(&str, &str)> = members(text).collect();
        assert_eq!(
            found,
            [
                ("\"kind\"", "\"List\""),
                ("\"it\\u0065ms\"", "[{\"a\":{}}]"),
                ("\"n\"", "1")
            ]
        );
        assert_eq!(members("{}").count(), 0);
    }

    /// Each span is exactly what serde_json reads as that element.
    #[test]
    fn spans_agree_with_serde_json() {
        let value = serde_json::json!([{"kind": "Node", "metadata": {"name": "a\"]}"}},
            [[], {}], "x", 0, -0.25, false, {"items": [1, 2, {"k": [3]}]}]);
        let text = serde_json::to_string_pretty(&value).unwrap();
        let parsed: Vec<serde_json::Value> = elements(&text)
            .map(|e| serde_json::from_str(e).unwrap())
            .collect();
        assert_eq!(serde_json::Value::Array(parsed), value);
    }
}
