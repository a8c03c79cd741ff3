//! Dump text to the API objects in it, handed over one at a time: single objects, `List`s
//! (kubectl's `kind: List`, the API's `LeaseList`), bare JSON arrays, multi-document YAML or
//! concatenated JSON, whoever wrote them (kubectl, a collector).
//!
//! A list's items are built one by one and given to an [`ObjectSink`], which keeps what
//! k3sdoctor uses and drops the rest at once, so memory follows what is kept rather than what
//! the file holds: JSON is split into its items' text first ([`super::json_spans`]) and each
//! is parsed on its own, since a `serde_json::Value` of a whole list costs about a hundred
//! times its text. A list's `kind` may come after its `items` (kubectl prints `apiVersion`,
//! `items`, `kind`, `metadata`), which is why the items are read after the rest.

use serde_json::{Map, Value};

use super::dump_parse::{DUMP_HINT, drop_null_strings, not_too_deep, parse_yaml, yaml_values};
use super::json_spans::{Checked, elements, members};
use super::yaml_split::{self, Item, Layout, Limits};
use crate::input::ReadError;

/// How the objects of one file are to be read.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Shape {
    /// (apiVersion, kind) its objects have when they do not say: client-go's typed lists
    /// leave `TypeMeta` empty when marshalled, so a collector's file of them says only by its
    /// name what it holds. A kind the object states wins.
    pub assume: Option<(&'static str, &'static str)>,
    /// support-bundle-kit's `"null"` for every empty value ([`drop_null_strings`]).
    pub null_strings: bool,
}

/// Where the objects go.
pub(crate) trait ObjectSink {
    /// The fields of each document (a list's, or an object's), before a kind is assumed for
    /// it; a list's `items` are left out.
    fn document(&mut self, _fields: &Map<String, Value>) {}
    /// Whether an object that is no list is kept, from its fields other than `items`: a
    /// non-list object with an `items` array is built whole only then.
    fn wants(&self, fields: &Map<String, Value>) -> bool;
    /// One object. What is no JSON object (a number, a nested array) arrives as null: it can
    /// be no API object either way.
    fn object(&mut self, object: Value);
}

/// Reads every object of `text` (the file `file`) into `sink`. A file that does not parse
/// gives its error before any object reaches the sink.
pub(crate) fn read_objects(
    text: &str,
    file: &str,
    shape: Shape,
    sink: &mut impl ObjectSink,
) -> Result<(), ReadError> {
    let bad = |e: &dyn std::fmt::Display| {
        ReadError::new(format!("cannot parse dump file {file}: {e}; {DUMP_HINT}"))
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let trimmed = text.trim_start();
    if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
        if text.len() > Limits::DUMP.whole {
            return read_large_yaml(text, file, Limits::DUMP, shape, sink);
        }
        for value in parse_yaml(text, file)? {
            document(Doc::from_value(value), shape, sink).map_err(|e| bad(&e))?;
        }
        return Ok(());
    }
    // The whole text is checked (and split into documents) without building anything.
    let mut documents = Vec::new();
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Checked>();
    let mut start = 0;
    while let Some(checked) = stream.next() {
        checked.map_err(|e| bad(&e))?;
        let end = stream.byte_offset();
        documents.push(text.get(start..end).unwrap_or_default().trim_start());
        start = end;
    }
    for text in documents {
        // A bare array is a list of documents (troubleshoot's custom resources).
        if text.starts_with('[') {
            for element in elements(text) {
                let doc = Doc::from_json(element).map_err(|e| bad(&e))?;
                document(doc, shape, sink).map_err(|e| bad(&e))?;
            }
        } else {
            let doc = Doc::from_json(text).map_err(|e| bad(&e))?;
            document(doc, shape, sink).map_err(|e| bad(&e))?;
        }
    }
    Ok(())
}

/// [`read_objects`] for YAML over `limits.whole`: its syntax is checked whole before any
/// object reaches the sink, and its lists are built a run of items at a time.
pub(super) fn read_large_yaml(
    text: &str,
    file: &str,
    limits: Limits,
    shape: Shape,
    sink: &mut impl ObjectSink,
) -> Result<(), ReadError> {
    let bad = |e: &dyn std::fmt::Display| {
        ReadError::new(format!("cannot parse dump file {file}: {e}; {DUMP_HINT}"))
    };
    not_too_deep(text, file)?;
    let mut any = false;
    for layout in yaml_split::documents(text, limits).map_err(|e| bad(&e))? {
        let mut one = |doc: Result<Doc<'_>, serde_json::Error>| {
            any = true;
            document(doc?, shape, sink)
        };
        match layout {
            Layout::Whole(text) => {
                for value in yaml_values(text).map_err(|e| bad(&e))? {
                    one(Ok(Doc::from_value(value))).map_err(|e| bad(&e))?;
                }
            }
            // A YAML sequence of objects: troubleshoot's custom resources before v0.76.0.
            Layout::Sequence(items) => {
                for item in items.pieces() {
                    one(Doc::from_item(item)).map_err(|e| bad(&e))?;
                }
            }
            layout => one(Doc::from_layout(layout)).map_err(|e| bad(&e))?,
        }
    }
    if !any {
        return Err(bad(&"no documents found"));
    }
    Ok(())
}

/// A document or item: an object whose `items` array is read apart, or anything else.
enum Doc<'a> {
    Object(Shallow<'a>),
    Other,
}

/// An object's fields, with an `items` array kept out of them.
struct Shallow<'a> {
    fields: Map<String, Value>,
    items: Option<Items<'a>>,
}

/// An `items` array: JSON text not parsed yet, YAML already parsed, or the items of a large
/// YAML list, built a run at a time.
enum Items<'a> {
    Text(&'a str),
    Parsed(Vec<Value>),
    Yaml(yaml_split::Items<'a>),
}

impl<'a> Items<'a> {
    fn into_docs(self) -> Box<dyn Iterator<Item = Result<Doc<'a>, serde_json::Error>> + 'a> {
        match self {
            Items::Text(text) => Box::new(elements(text).map(Doc::from_json)),
            Items::Parsed(values) => Box::new(values.into_iter().map(|v| Ok(Doc::from_value(v)))),
            Items::Yaml(items) => Box::new(items.pieces().map(Doc::from_item)),
        }
    }

    fn into_values(self) -> Result<Vec<Value>, serde_json::Error> {
        match self {
            Items::Text(text) => serde_json::from_str(text),
            Items::Parsed(values) => Ok(values),
            // Only an object that is no list gets here, and none k3sdoctor reads has `items`:
            // an item too large to build whole stays null rather than costing its size again.
            Items::Yaml(items) => items
                .pieces()
                .map(|item| match item.map_err(custom)? {
                    Item::Value(value) => Ok(value),
                    Item::Layout(_) => Ok(Value::Null),
                })
                .collect(),
        }
    }
}

fn custom(message: String) -> serde_json::Error {
    serde::de::Error::custom(message)
}

impl<'a> Doc<'a> {
    /// `text` is valid JSON. Only an object's fields are parsed, and never its `items` array.
    fn from_json(text: &'a str) -> Result<Doc<'a>, serde_json::Error> {
        if !text.starts_with('{') {
            return Ok(Doc::Other);
        }
        let mut fields = Map::new();
        let mut items = None;
        // A key given twice keeps its last value, as serde_json's own maps do.
        for (key, value) in members(text) {
            let key: String = serde_json::from_str(key)?;
            if key == "items" && value.starts_with('[') {
                fields.remove(&key);
                items = Some(Items::Text(value));
            } else {
                if key == "items" {
                    items = None;
                }
                fields.insert(key, serde_json::from_str(value)?);
            }
        }
        Ok(Doc::Object(Shallow { fields, items }))
    }

    fn from_item(item: Result<Item<'a>, String>) -> Result<Doc<'a>, serde_json::Error> {
        match item.map_err(custom)? {
            Item::Value(value) => Ok(Doc::from_value(value)),
            Item::Layout(layout) => Doc::from_layout(layout),
        }
    }

    /// A large YAML document or item: a list's fields are built, its items left for later.
    fn from_layout(layout: Layout<'a>) -> Result<Doc<'a>, serde_json::Error> {
        match layout {
            Layout::Whole(text) => Ok(Doc::from_value(
                serde_yaml_ng::from_str(text).map_err(|e| custom(e.to_string()))?,
            )),
            Layout::List {
                fields: Value::Object(mut fields),
                items,
            } => {
                fields.remove("items");
                Ok(Doc::Object(Shallow {
                    fields,
                    items: Some(Items::Yaml(items)),
                }))
            }
            Layout::List { .. } | Layout::Sequence(_) | Layout::NoObject => Ok(Doc::Other),
        }
    }

    fn from_value(value: Value) -> Doc<'a> {
        let Value::Object(mut fields) = value else {
            return Doc::Other;
        };
        let items = match fields.remove("items") {
            Some(Value::Array(items)) => Some(Items::Parsed(items)),
            Some(other) => {
                fields.insert("items".into(), other);
                None
            }
            None => None,
        };
        Doc::Object(Shallow { fields, items })
    }
}

/// One top-level document: its `"null"`s dropped, its kind assumed, then flattened.
fn document(
    doc: Doc<'_>,
    shape: Shape,
    sink: &mut impl ObjectSink,
) -> Result<(), serde_json::Error> {
    let Doc::Object(mut object) = doc else {
        sink.object(Value::Null);
        return Ok(());
    };
    if shape.null_strings {
        drop_null_fields(&mut object.fields);
    }
    sink.document(&object.fields);
    if let Some((api_version, kind)) = shape.assume
        && !object.fields.contains_key("kind")
    {
        let kind = if object.items.is_some() {
            format!("{kind}List")
        } else {
            kind.to_string()
        };
        object.fields.insert("kind".into(), Value::String(kind));
        object
            .fields
            .entry("apiVersion")
            .or_insert_with(|| Value::String(api_version.to_string()));
    }
    flatten(object, shape, sink)
}

/// Expands a `List` into its items, which take the list's kind and apiVersion when they lack
/// them (API lists leave them off); a document's own items also get the assumed kind.
fn flatten(
    object: Shallow<'_>,
    shape: Shape,
    sink: &mut impl ObjectSink,
) -> Result<(), serde_json::Error> {
    let Shallow { mut fields, items } = object;
    let kind = fields
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let items = match items {
        Some(items) if kind.ends_with("List") => items,
        items => return single(fields, items, shape, sink),
    };
    let item_kind = kind
        .strip_suffix("List")
        .filter(|k| !k.is_empty())
        .map(str::to_string);
    let api_version = fields.remove("apiVersion");
    drop(fields);
    for item in items.into_docs() {
        let Doc::Object(mut item) = item? else {
            sink.object(Value::Null);
            continue;
        };
        if shape.null_strings {
            drop_null_fields(&mut item.fields);
        }
        if let Some((api_version, kind)) = shape.assume {
            assume_item(&mut item.fields, api_version, kind);
        }
        if let Some(kind) = &item_kind {
            item.fields
                .entry("kind")
                .or_insert_with(|| Value::String(kind.clone()));
            if let Some(v) = &api_version {
                item.fields.entry("apiVersion").or_insert_with(|| v.clone());
            }
        }
        // Only a document's own items take the assumed kind.
        let inner = Shape {
            assume: None,
            ..shape
        };
        flatten(item, inner, sink)?;
    }
    Ok(())
}

/// An object that is no list; an `items` array it has is built only when the object is kept.
fn single(
    mut fields: Map<String, Value>,
    items: Option<Items<'_>>,
    shape: Shape,
    sink: &mut impl ObjectSink,
) -> Result<(), serde_json::Error> {
    if let Some(items) = items.filter(|_| sink.wants(&fields)) {
        let mut values = items.into_values()?;
        for value in &mut values {
            if shape.null_strings {
                drop_null_strings(value);
            }
            if let (Some((api_version, kind)), Some(item)) = (shape.assume, value.as_object_mut()) {
                assume_item(item, api_version, kind);
            }
        }
        fields.insert("items".into(), Value::Array(values));
    }
    sink.object(Value::Object(fields));
    Ok(())
}

/// An item that does not say its kind gets the kind (and apiVersion) its file holds.
fn assume_item(item: &mut Map<String, Value>, api_version: &str, kind: &str) {
    if !item.contains_key("kind") {
        item.insert("kind".into(), Value::String(kind.to_string()));
        item.insert("apiVersion".into(), Value::String(api_version.to_string()));
    }
}

fn drop_null_fields(fields: &mut Map<String, Value>) {
    let mut object = Value::Object(std::mem::take(fields));
    drop_null_strings(&mut object);
    if let Value::Object(map) = object {
        *fields = map;
    }
}

/// Every object, for tests.
#[cfg(test)]
#[derive(Default)]
pub(crate) struct AllObjects(pub Vec<Value>);

#[cfg(test)]
impl ObjectSink for AllObjects {
    fn wants(&self, _: &Map<String, Value>) -> bool {
        true
    }

    fn object(&mut self, object: Value) {
        self.0.push(object);
    }
}

#[cfg(test)]
mod tests;
