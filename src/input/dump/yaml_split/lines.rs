//! Byte offsets for the parser's line and column markers.

use std::ops::Range;

use saphyr_parser::Marker;

use super::line_of;

/// Byte offsets of the walked text's lines, found moving forward as the events do.
pub(super) struct Lines<'t> {
    text: &'t str,
    /// The line (1-based, of the walked text) and byte where the cursor is.
    line: usize,
    byte: usize,
    origin: usize,
    end: usize,
    /// The line of the whole text the walked text starts on, for messages.
    pub(super) first_line: usize,
}

impl<'t> Lines<'t> {
    pub(super) fn new(text: &'t str, walked: &Range<usize>) -> Lines<'t> {
        let origin = walked.start;
        Lines {
            text,
            line: 1,
            byte: origin,
            origin,
            end: walked.end,
            first_line: line_of(text, origin),
        }
    }

    /// The byte where `line` starts.
    pub(super) fn start(&mut self, line: usize) -> usize {
        if line < self.line {
            (self.line, self.byte) = (1, self.origin);
        }
        let bytes = self.text.as_bytes();
        while self.line < line {
            match bytes[self.byte..self.end].iter().position(|&b| b == b'\n') {
                Some(n) => {
                    self.byte += n + 1;
                    self.line += 1;
                }
                // The parser counts a line after a last line that has no newline.
                None => {
                    (self.line, self.byte) = (line, self.end);
                }
            }
        }
        self.byte
    }

    /// What precedes `at` on its line, and the byte `at` is at.
    pub(super) fn before(&mut self, at: Marker) -> (&'t str, usize) {
        let start = self.start(at.line());
        let line = &self.text[start..];
        let offset = line
            .char_indices()
            .nth(at.col())
            .map_or(line.len(), |(i, _)| i);
        (&line[..offset], start + offset)
    }

    /// Where a cut before `at` falls: the start of its line when only blanks precede it there.
    pub(super) fn boundary(&mut self, at: Marker) -> usize {
        let (before, byte) = self.before(at);
        if before.trim().is_empty() {
            byte - before.len()
        } else {
            byte
        }
    }

    /// Where the line of a list item beginning at `at` starts, when the item follows its own
    /// `- ` there and after the item before (`last`); else the item's line, for the refusal.
    pub(super) fn item_start(&mut self, at: Marker, last: Option<usize>) -> Result<usize, usize> {
        let (before, byte) = self.before(at);
        let start = byte - before.len();
        let dash = before.trim_start_matches(' ');
        let block = dash.starts_with('-')
            && dash.len() > 1
            && dash[1..].trim_matches([' ', '\t']).is_empty();
        if !block || last.is_some_and(|last| last >= start) {
            return Err(at.line() + self.first_line - 1);
        }
        Ok(start)
    }
}
