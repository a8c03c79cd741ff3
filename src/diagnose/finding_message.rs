//! A finding's message. Where it spells out a list in full (every one of 50,000 missing
//! snapshots), the list is kept once, as the items themselves, and joined with `, ` only where
//! the message is written: as a `String` such a message was megabytes, made again for every
//! finding that named the same snapshots, and again for its table view.

use std::borrow::Cow;
use std::fmt::{self, Display, Write};
use std::sync::Arc;

use super::object_ref::ObjectRef;

/// Items that say themselves only when written: a snapshot whose name does not match its
/// digest says so from the CR it keeps, not from a sentence kept for each.
pub trait SpelledItems: fmt::Debug + Send + Sync {
    fn len(&self) -> usize;
    fn write_item(&self, index: usize, out: &mut dyn Write) -> fmt::Result;
}

/// The list a message spells out.
#[derive(Debug, Clone)]
pub enum Spelled {
    /// Texts as they read.
    Texts(Arc<[String]>),
    /// The names of the finding's objects (the same allocation as its `objectRefs`).
    ObjectNames(Arc<[ObjectRef]>),
    Items(Arc<dyn SpelledItems>),
}

impl Spelled {
    pub fn len(&self) -> usize {
        match self {
            Spelled::Texts(texts) => texts.len(),
            Spelled::ObjectNames(objects) => objects.len(),
            Spelled::Items(items) => items.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Item `index` as the message spells it.
    pub fn item(&self, index: usize) -> Cow<'_, str> {
        match self {
            Spelled::Texts(texts) => Cow::Borrowed(texts[index].as_str()),
            Spelled::ObjectNames(objects) => Cow::Borrowed(objects[index].name.as_str()),
            Spelled::Items(items) => {
                let mut text = String::new();
                // Writing into a String does not fail.
                let _ = items.write_item(index, &mut text);
                Cow::Owned(text)
            }
        }
    }

    fn write_item(&self, index: usize, out: &mut dyn Write) -> fmt::Result {
        match self {
            Spelled::Items(items) => items.write_item(index, out),
            other => out.write_str(&other.item(index)),
        }
    }

    /// Items `range`, `, `-separated.
    fn write_joined(&self, range: std::ops::Range<usize>, out: &mut dyn Write) -> fmt::Result {
        for index in range.clone() {
            if index > range.start {
                out.write_str(", ")?;
            }
            self.write_item(index, out)?;
        }
        Ok(())
    }

    fn same_items(&self, other: &Spelled) -> bool {
        self.len() == other.len() && (0..self.len()).all(|i| self.item(i) == other.item(i))
    }
}

/// The text of a finding's message: `text` with, where it spells out a list, that list's
/// items joined at byte `at`.
#[derive(Debug, Clone, Default)]
pub struct Message {
    text: String,
    spelled: Option<(usize, Spelled)>,
}

impl Message {
    /// `head`, every item of `list` `, `-separated, then `tail`.
    pub fn spelling(head: impl Into<String>, list: Spelled, tail: &str) -> Message {
        let mut text = head.into();
        let at = text.len();
        text.push_str(tail);
        Message {
            text,
            spelled: Some((at, list)),
        }
    }

    /// The list this message spells out, if any.
    pub fn spelled(&self) -> Option<&Spelled> {
        self.spelled.as_ref().map(|(_, list)| list)
    }

    /// A plain message that holds `list` joined becomes one that keeps the list instead.
    pub(super) fn keeping(self, list: Spelled) -> Message {
        if self.spelled.is_some() || list.is_empty() {
            return self;
        }
        let mut joined = String::new();
        let _ = list.write_joined(0..list.len(), &mut joined);
        match self.text.find(&joined) {
            Some(at) => Message {
                text: format!("{}{}", &self.text[..at], &self.text[at + joined.len()..]),
                spelled: Some((at, list)),
            },
            // The list is not in the text: the text is left as it was written.
            None => self,
        }
    }

    /// The whole text; built only when the message spells out a list.
    pub fn to_text(&self) -> Cow<'_, str> {
        match &self.spelled {
            None => Cow::Borrowed(&self.text),
            Some(_) => Cow::Owned(self.to_string()),
        }
    }

    /// The message with its list replaced by `list`.
    pub fn with_list_as(&self, list: &str) -> String {
        match &self.spelled {
            None => self.text.clone(),
            Some((at, _)) => format!("{}{list}{}", &self.text[..*at], &self.text[*at..]),
        }
    }

    /// The first `shown` items of the list, `, `-separated.
    pub fn first_items(&self, shown: usize) -> String {
        let mut out = String::new();
        if let Some((_, list)) = &self.spelled {
            let _ = list.write_joined(0..shown.min(list.len()), &mut out);
        }
        out
    }

    pub fn contains(&self, needle: &str) -> bool {
        self.to_text().contains(needle)
    }

    pub fn starts_with(&self, prefix: &str) -> bool {
        self.to_text().starts_with(prefix)
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty() && self.spelled.as_ref().is_none_or(|(_, l)| l.is_empty())
    }
}

impl Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.spelled {
            None => f.write_str(&self.text),
            Some((at, list)) => {
                f.write_str(&self.text[..*at])?;
                list.write_joined(0..list.len(), f)?;
                f.write_str(&self.text[*at..])
            }
        }
    }
}

impl From<String> for Message {
    fn from(text: String) -> Message {
        Message {
            text,
            spelled: None,
        }
    }
}

impl From<&str> for Message {
    fn from(text: &str) -> Message {
        Message::from(text.to_string())
    }
}

/// Equal when they read the same; two messages that keep their lists alike are compared item
/// by item, without building either text.
impl PartialEq for Message {
    fn eq(&self, other: &Message) -> bool {
        match (&self.spelled, &other.spelled) {
            (None, None) => self.text == other.text,
            (Some((a, mine)), Some((b, theirs))) if a == b && self.text == other.text => {
                mine.same_items(theirs)
            }
            _ => self.to_text() == other.to_text(),
        }
    }
}

impl Eq for Message {}

impl PartialEq<str> for Message {
    fn eq(&self, other: &str) -> bool {
        self.to_text() == other
    }
}

impl PartialEq<&str> for Message {
    fn eq(&self, other: &&str) -> bool {
        self.to_text() == *other
    }
}

impl PartialEq<String> for Message {
    fn eq(&self, other: &String) -> bool {
        self.to_text() == other.as_str()
    }
}

/// Written as one JSON string, piece by piece (serde_json escapes each piece as it comes).
impl serde::Serialize for Message {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.spelled {
            None => serializer.serialize_str(&self.text),
            Some(_) => serializer.collect_str(self),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Message {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Message, D::Error> {
        String::deserialize(deserializer).map(Message::from)
    }
}

impl schemars::JsonSchema for Message {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        String::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(items: &[&str]) -> Spelled {
        Spelled::Texts(items.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn a_spelled_message_reads_as_its_joined_text() {
        let m = Message::spelling("missing: ", texts(&["a", "b", "c"]), ". Fix it");
        assert_eq!(m.to_string(), "missing: a, b, c. Fix it");
        assert_eq!(m, "missing: a, b, c. Fix it");
        assert_eq!(m.first_items(2), "a, b");
        assert_eq!(m.with_list_as("3 names"), "missing: 3 names. Fix it");
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            r#""missing: a, b, c. Fix it""#
        );
    }

    #[test]
    fn a_plain_message_keeps_the_list_it_holds_and_reads_the_same() {
        let plain = Message::from("gone: x, y (see above)");
        let kept = plain.clone().keeping(texts(&["x", "y"]));
        assert_eq!(kept.spelled().map(Spelled::len), Some(2));
        assert_eq!(kept, plain);
        assert_eq!(kept.with_list_as("2"), "gone: 2 (see above)");
        let absent = Message::from("nothing listed").keeping(texts(&["x"]));
        assert!(absent.spelled().is_none());
    }

    #[test]
    fn messages_are_equal_when_they_read_the_same_however_they_are_kept() {
        let a = Message::spelling("n: ", texts(&["a", "b"]), "");
        let b = Message::spelling("n: ", texts(&["a", "b"]), "");
        let c = Message::spelling("n: ", texts(&["a", "c"]), "");
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a, Message::from("n: a, b"));
    }

    #[test]
    fn quotes_and_control_characters_are_escaped_across_pieces() {
        let m = Message::spelling("say \"", texts(&["a\nb", "é"]), "\"");
        let json = serde_json::to_string(&m).unwrap();
        assert_eq!(json, serde_json::to_string(&m.to_string()).unwrap());
    }
}
