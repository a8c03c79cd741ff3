//! The walk over a large YAML text: saphyr-parser's events, each dropped as it comes, give
//! where each document lies and, in a list, the line each item starts on.

use std::ops::Range;

use saphyr_parser::{Event, Marker, Parser, ScanError};

use super::lines::Lines;

/// What the walk found of one document.
pub(super) struct Found {
    pub(super) range: Range<usize>,
    pub(super) line: usize,
    pub(super) root: Root,
    /// Anchors, aliases or tags: an item cut from the rest could lose what they refer to.
    pub(super) properties: bool,
}

pub(super) enum Root {
    None,
    Scalar,
    Mapping {
        items: Option<Sequence>,
        items_keys: usize,
    },
    Sequence(Sequence),
}

/// A block sequence's items, by their lines.
#[derive(Default)]
pub(super) struct Sequence {
    pub(super) starts: Vec<usize>,
    pub(super) end: Option<usize>,
    /// The line of an item not on a line of its own, after a `- `: flow style, or a comment or
    /// property between the dash and the item.
    pub(super) not_block: Option<usize>,
}

/// Finds the documents of `text[range]` and the items of their lists. At `root_depth` 1 the
/// text is one item of a sequence, its own `- ` included, and that item is the root.
impl Sequence {
    fn item(&mut self, start: Result<usize, usize>) {
        match start {
            Ok(start) => self.starts.push(start),
            Err(line) => _ = self.not_block.get_or_insert(line),
        }
    }
}

pub(super) fn walk(
    text: &str,
    range: Range<usize>,
    root_depth: usize,
) -> Result<Vec<Found>, String> {
    let mut walker = Walker {
        lines: Lines::new(text, &range),
        root_depth,
        found: Vec::new(),
        current: None,
        depth: 0,
        state: State::default(),
    };
    let end = range.end;
    for event in Parser::new_from_str(&text[range.clone()]) {
        let (event, span) = event.map_err(|e| syntax(&e))?;
        walker.event(event, span.start);
    }
    walker.finish(end);
    if root_depth == 0
        && let Some(first) = walker.found.first_mut()
    {
        first.range.start = range.start;
    }
    Ok(walker.found)
}

fn syntax(e: &ScanError) -> String {
    let at = e.marker();
    format!("{} at line {} column {}", e.info(), at.line(), at.col() + 1)
}

struct Walker<'t> {
    lines: Lines<'t>,
    root_depth: usize,
    found: Vec<Found>,
    current: Option<Found>,
    /// Collections open at this point.
    depth: usize,
    state: State,
}

/// Where the walk is inside the root mapping.
#[derive(Default)]
struct State {
    /// Nodes begun directly in the root mapping: keys at even counts, values at odd.
    root_nodes: usize,
    /// The last key of the root mapping was `items`.
    items_next: bool,
    /// Inside the root mapping's `items` sequence.
    in_items: bool,
}

impl Walker<'_> {
    fn event(&mut self, event: Event<'_>, at: Marker) {
        match event {
            Event::DocumentStart(_) => {
                let start = self.lines.boundary(at);
                self.finish(start);
                self.current = Some(Found {
                    range: start..start,
                    line: at.line() + self.lines.first_line - 1,
                    root: Root::None,
                    properties: false,
                });
                self.state = State::default();
            }
            Event::Alias(_) => {
                self.mark_properties();
                self.node(Begun::Scalar(None), at);
            }
            Event::Scalar(value, _, anchor, tag) => {
                if anchor != 0 || tag.is_some() {
                    self.mark_properties();
                }
                self.node(Begun::Scalar(Some(&value)), at);
            }
            Event::MappingStart(anchor, ref tag) | Event::SequenceStart(anchor, ref tag) => {
                if anchor != 0 || tag.is_some() {
                    self.mark_properties();
                }
                let begun = if matches!(event, Event::MappingStart(..)) {
                    Begun::Mapping
                } else {
                    Begun::Sequence
                };
                self.node(begun, at);
                self.depth += 1;
            }
            Event::MappingEnd | Event::SequenceEnd => {
                self.depth = self.depth.saturating_sub(1);
                self.collection_ended(at);
            }
            _ => {}
        }
    }

    fn mark_properties(&mut self) {
        if let Some(current) = &mut self.current {
            current.properties = true;
        }
    }

    /// A node begins at the current depth.
    fn node(&mut self, begun: Begun<'_>, at: Marker) {
        let root_depth = self.root_depth;
        let Some(current) = &mut self.current else {
            return;
        };
        let depth = self.depth;
        if depth == root_depth && matches!(current.root, Root::None) {
            current.root = match begun {
                Begun::Scalar(_) => Root::Scalar,
                Begun::Mapping => Root::Mapping {
                    items: None,
                    items_keys: 0,
                },
                Begun::Sequence => Root::Sequence(Sequence::default()),
            };
            return;
        }
        match &mut current.root {
            Root::Sequence(sequence) if depth == root_depth + 1 => {
                sequence.item(self.lines.item_start(at, sequence.starts.last().copied()));
            }
            Root::Mapping { items, items_keys } if depth == root_depth + 1 => {
                let key = self.state.root_nodes.is_multiple_of(2);
                self.state.root_nodes += 1;
                if key {
                    self.state.items_next = matches!(begun, Begun::Scalar(Some("items")));
                    *items_keys += usize::from(self.state.items_next);
                } else if std::mem::take(&mut self.state.items_next)
                    && matches!(begun, Begun::Sequence)
                {
                    *items = Some(Sequence::default());
                    self.state.in_items = true;
                }
            }
            Root::Mapping {
                items: Some(sequence),
                ..
            } if self.state.in_items && depth == root_depth + 2 => {
                sequence.item(self.lines.item_start(at, sequence.starts.last().copied()));
            }
            _ => {}
        }
    }

    /// A collection has ended; `self.depth` is the depth it began at.
    fn collection_ended(&mut self, at: Marker) {
        let Some(current) = &mut self.current else {
            return;
        };
        let depth = self.depth;
        let sequence = match &mut current.root {
            Root::Sequence(sequence) if depth == self.root_depth => sequence,
            Root::Mapping {
                items: Some(sequence),
                ..
            } if self.state.in_items && depth == self.root_depth + 1 => {
                self.state.in_items = false;
                sequence
            }
            _ => return,
        };
        if sequence.end.is_none() {
            sequence.end = Some(self.lines.boundary(at));
        }
    }

    /// The document being walked ends where the next begins, or at the end of the text.
    fn finish(&mut self, end: usize) {
        if let Some(mut current) = self.current.take() {
            current.range.end = end.max(current.range.start);
            self.found.push(current);
        }
    }
}

enum Begun<'v> {
    Scalar(Option<&'v str>),
    Mapping,
    Sequence,
}
