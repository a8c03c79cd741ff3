//! A YAML dump larger than [`WHOLE_LIMIT`], built a run of items at a time. serde_yaml_ng
//! holds every event of a document before it builds any of it, about 150 bytes for each byte
//! of a list of tiny objects, so a large text is first walked with saphyr-parser, whose events
//! are dropped as they come. The walk finds each document and, in a list, the line each of its
//! `items` starts on. serde_yaml_ng then builds the items from the original text, one run of
//! whole items at a time, so memory follows one run rather than the file.
//!
//! Only block style is split (each item on its own `- ` line, as kubectl and every collector
//! write YAML); a large document in any other layout is refused with a way out, never built.

use std::ops::Range;

use serde_json::Value;

use self::walk::{Found, Root, Sequence, walk};

/// Text up to this size is built whole, as it always was. It is twice what etcd stores in one
/// object (`--max-request-bytes`, 1.5 MiB), and building it costs a few hundred MiB at worst.
pub(super) const WHOLE_LIMIT: usize = 3 << 20;

/// How large a text is built whole, and how much text of whole items is built together.
#[derive(Clone, Copy, Debug)]
pub(super) struct Limits {
    pub whole: usize,
    pub run: usize,
}

impl Limits {
    pub(super) const DUMP: Limits = Limits {
        whole: WHOLE_LIMIT,
        run: 64 << 10,
    };
}

/// One document of a large text (or one large item), as it is to be built.
pub(super) enum Layout<'a> {
    /// Small enough to build whole.
    Whole(&'a str),
    /// A mapping whose `items` are a block sequence: its other fields, and the items.
    List { fields: Value, items: Items<'a> },
    /// A block sequence: at the top of a file, each item is a document.
    Sequence(Items<'a>),
    /// A large sequence inside a list, or a scalar: no API object, so nothing is built.
    NoObject,
}

/// The items of a block sequence, by the byte each one's line starts at.
#[derive(Debug)]
pub(super) struct Items<'a> {
    text: &'a str,
    limits: Limits,
    starts: Vec<usize>,
    end: usize,
}

/// Where a run of items, or one item too large to build whole, lies.
enum Piece {
    Run(Range<usize>),
    Large(Range<usize>),
}

impl<'a> Items<'a> {
    /// Each item as a value, or as the layout of an item too large to build whole.
    pub(super) fn pieces(self) -> impl Iterator<Item = Result<Item<'a>, String>> + 'a {
        let (text, limits) = (self.text, self.limits);
        self.runs()
            .flat_map(move |piece| -> Vec<Result<Item<'a>, String>> {
                match piece {
                    Piece::Run(range) => match run_values(&text[range.clone()]) {
                        Ok(values) => values.into_iter().map(|v| Ok(Item::Value(v))).collect(),
                        Err(e) => vec![Err(e.at_line(line_of(text, range.start)))],
                    },
                    Piece::Large(range) => vec![item_layout(text, range, limits).map(Item::Layout)],
                }
            })
    }

    fn runs(self) -> impl Iterator<Item = Piece> {
        let Items {
            starts,
            end,
            limits,
            ..
        } = self;
        let mut at = 0;
        std::iter::from_fn(move || {
            let start = *starts.get(at)?;
            let item_end = |i: usize| starts.get(i + 1).copied().unwrap_or(end);
            if item_end(at) - start > limits.whole {
                at += 1;
                return Some(Piece::Large(start..item_end(at - 1)));
            }
            let mut last = at;
            while last + 1 < starts.len()
                && item_end(last + 1) - start <= limits.run
                && item_end(last + 1) - starts[last + 1] <= limits.whole
            {
                last += 1;
            }
            at = last + 1;
            Some(Piece::Run(start..item_end(last)))
        })
    }
}

/// One item of a split sequence.
pub(super) enum Item<'a> {
    Value(Value),
    Layout(Layout<'a>),
}

/// The documents of `text`, which is larger than `limits.whole`.
pub(super) fn documents(text: &str, limits: Limits) -> Result<Vec<Layout<'_>>, String> {
    if let Some(line) = lone_carriage_return(text) {
        return Err(format!(
            "line {line} ends in a lone carriage return, which a YAML file over {} may not use",
            size(limits.whole)
        ));
    }
    walk(text, 0..text.len(), 0)?
        .into_iter()
        .map(|found| found.layout(text, limits))
        .collect()
}

/// A size for a message: `3 MiB`, `5.2 MiB`, `200 bytes`.
fn size(bytes: usize) -> String {
    if bytes < 1 << 20 {
        return format!("{bytes} bytes");
    }
    let mib = bytes as f64 / f64::from(1 << 20);
    if mib.fract() == 0.0 {
        format!("{mib:.0} MiB")
    } else {
        format!("{mib:.1} MiB")
    }
}

/// The layout of one large item of a sequence: `range` starts at the line of its `- `.
fn item_layout(text: &str, range: Range<usize>, limits: Limits) -> Result<Layout<'_>, String> {
    let mut found = walk(text, range, 1)?;
    match (found.pop(), found.is_empty()) {
        // A list in a list, or a scalar, is no API object: it is not built.
        (Some(found), true) if !matches!(found.root, Root::Mapping { .. }) => Ok(Layout::NoObject),
        (Some(found), true) => found.layout(text, limits),
        _ => Err("an item of a list holds more than one document".into()),
    }
}

/// Values of a run of whole items, the lines of a block sequence.
fn run_values(run: &str) -> Result<Vec<Value>, RunError> {
    match serde_yaml_ng::from_str(run).map_err(RunError::Parse)? {
        Value::Array(values) => Ok(values),
        _ => Err(RunError::NotAList),
    }
}

/// Why a run of items did not build.
enum RunError {
    Parse(serde_yaml_ng::Error),
    NotAList,
}

impl RunError {
    /// The error for a run that starts on line `first` of the file: serde_yaml_ng counts lines
    /// from the run's start, so its position is moved to the file's.
    fn at_line(&self, first: usize) -> String {
        match self {
            RunError::Parse(e) => match e.location() {
                Some(at) => format!(
                    "{} at line {} column {}",
                    without_position(&e.to_string()),
                    first + at.line() - 1,
                    at.column()
                ),
                None => format!("in the list items from line {first}: {e}"),
            },
            RunError::NotAList => {
                format!("the list items from line {first} did not read as a list")
            }
        }
    }
}

/// serde_yaml_ng's message without the ` at line L column C` it ends with.
fn without_position(message: &str) -> &str {
    message
        .rfind(" at line ")
        .map_or(message, |at| &message[..at])
}

/// saphyr-parser ends a line at a lone `\r` too; the byte offsets here count `\n` only.
fn lone_carriage_return(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let at = (0..bytes.len()).find(|&i| bytes[i] == b'\r' && bytes.get(i + 1) != Some(&b'\n'))?;
    Some(line_of(text, at))
}

/// The 1-based line of byte `at`.
fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

impl Found {
    fn layout(self, text: &str, limits: Limits) -> Result<Layout<'_>, String> {
        let Found {
            range,
            line,
            root,
            properties,
        } = self;
        if range.len() <= limits.whole {
            return Ok(Layout::Whole(&text[range]));
        }
        let refuse = |why: &str| {
            Err(format!(
                "the YAML document at line {line} holds {}, {why}; k3sdoctor reads a document \
                 over {} only as a list written one `- ` item per line, as `kubectl get ... -o \
                 yaml` writes it (or as JSON, with `-o json`)",
                size(range.len()),
                size(limits.whole)
            ))
        };
        if properties {
            return refuse("and uses YAML anchors, aliases or tags");
        }
        let items = match root {
            // Nothing but comments.
            Root::None => return Ok(Layout::Whole("")),
            Root::Scalar => return Ok(Layout::NoObject),
            Root::Sequence(sequence) => {
                return sequence.items(text, line, limits).map(Layout::Sequence);
            }
            Root::Mapping {
                items: Some(items),
                items_keys: 1,
            } => items,
            Root::Mapping { items_keys: 0, .. } => {
                return refuse("more than any one object the API server stores");
            }
            Root::Mapping { .. } => return refuse("and its `items` are not one block list"),
        };
        let items = items.items(text, line, limits)?;
        let (first, end) = (items.starts[0], items.end);
        let rest = format!("{}{}", &text[range.start..first], &text[end..range.end]);
        if rest.len() > limits.whole {
            return refuse("more than any one object the API server stores, beside its items");
        }
        let fields = match serde_yaml_ng::from_str(&rest).map_err(|e| e.to_string())? {
            // A large item's own text starts with its `- `.
            Value::Array(mut one) if one.len() == 1 => one.remove(0),
            fields => fields,
        };
        Ok(Layout::List { fields, items })
    }
}

impl Sequence {
    fn items<'a>(self, text: &'a str, line: usize, limits: Limits) -> Result<Items<'a>, String> {
        if let Some(at) = self.not_block {
            return Err(format!(
                "the YAML document at line {line} holds over {}, and the list item at line {at} \
                 is not on a `- ` line of its own; k3sdoctor reads a document that large only as \
                 a list written one `- ` item per line, as `kubectl get ... -o yaml` writes it \
                 (or as JSON, with `-o json`)",
                size(limits.whole)
            ));
        }
        match (self.starts.first(), self.end) {
            (Some(_), Some(end)) => Ok(Items {
                text,
                limits,
                starts: self.starts,
                end,
            }),
            _ => Err(format!("the list at line {line} has no end")),
        }
    }
}

mod lines;
mod walk;

#[cfg(test)]
mod tests;
