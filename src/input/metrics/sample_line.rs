//! One line of the Prometheus text format (version 0.0.4, what kube-apiserver, etcd and kine
//! serve): `name{label="value",…} value [timestamp]`. Comments and blank lines are skipped.
//!
//! Most of an apiserver's ~4,000 lines are of series k3sdoctor does not read, or of request
//! latencies it reads only for single-object operations, and `check --rancher-clusters` reads
//! an answer per cluster. So a line is read only as far as the reader asks: its name first
//! (a line of another series is only checked for the shape of a sample), then a label, then
//! its value.
//!
//! The scans run over bytes: every delimiter of the format is ASCII, and no byte of a
//! multi-byte UTF-8 character is, so a byte index found here is a character boundary. The
//! name's end is found with a vector search; the spans after it (a label, a value), a few
//! dozen bytes each, are scanned one byte at a time.

use std::borrow::Cow;

/// What one line of an answer is, to a reader that reads the series its `wanted` names.
#[derive(Debug, PartialEq)]
pub(super) enum Line<'a> {
    /// A comment or a blank line.
    Blank,
    /// A sample of a series not wanted, by its shape.
    Skipped,
    /// A sample of a series wanted, read no further than its name.
    Sample(Sample<'a>),
}

/// A sample line, borrowed from the text.
#[derive(Debug, PartialEq)]
pub(super) struct Sample<'a> {
    /// The line, trimmed.
    line: &'a str,
    name_end: usize,
}

/// The line, read as far as its name: `Err` for a line that is not a sample.
pub(super) fn read_line(line: &str, wanted: impl Fn(&str) -> bool) -> Result<Line<'_>, String> {
    let line = line.trim_ascii();
    if line.is_empty() || line.starts_with('#') {
        return Ok(Line::Blank);
    }
    // A name runs to about 40 bytes: long enough for a vector search.
    let name_end = memchr::memchr3(b'{', b' ', b'\t', line.as_bytes()).unwrap_or(line.len());
    let sample = Sample { line, name_end };
    if !sample.shaped_as_a_sample() {
        return Err(sample.refusal());
    }
    match wanted(sample.name()) {
        true => Ok(Line::Sample(sample)),
        false => Ok(Line::Skipped),
    }
}

/// The line read whole: `None` for a comment or a blank line; `Err` for a line that is not a
/// sample, or whose value is not a number.
#[cfg(test)]
pub(super) fn parse_sample(line: &str) -> Option<Result<Sample<'_>, String>> {
    match read_line(line, |_| true) {
        Ok(Line::Sample(sample)) => Some(sample.value().map(|_| sample)),
        Ok(_) => None,
        Err(e) => Some(Err(e)),
    }
}

impl<'a> Sample<'a> {
    pub(super) fn name(&self) -> &'a str {
        &self.line[..self.name_end]
    }

    /// A name that starts as metric names do, followed by labels, or by a value that starts
    /// as numbers do: enough to tell an error page or a greeting from the text format, for a
    /// few bytes of each line.
    fn shaped_as_a_sample(&self) -> bool {
        let bytes = self.line.as_bytes();
        let starts_as_a_name = bytes[0].is_ascii_alphabetic() || matches!(bytes[0], b'_' | b':');
        let followed_as_a_sample = match bytes.get(self.name_end) {
            Some(b'{') => true,
            Some(_) => self.line[self.name_end..]
                .trim_ascii_start()
                .bytes()
                .next()
                .is_some_and(|b| {
                    b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'N' | b'I')
                }),
            None => false,
        };
        starts_as_a_name && followed_as_a_sample
    }

    /// The line quoted in the error that refuses it.
    pub(super) fn refusal(&self) -> String {
        let shown: String = self.line.chars().take(80).collect();
        format!("not a metrics line: {shown:?}")
    }

    /// The sample's value (its first field after the labels; a timestamp may follow); `Err`,
    /// quoting the line, when there is none or it is not a number.
    pub(super) fn value(&self) -> Result<f64, String> {
        let after_name = &self.line[self.name_end..];
        let after_labels = match after_name.strip_prefix('{') {
            Some(labels) => closing_brace(labels).map(|close| &labels[close + 1..]),
            None => Some(after_name),
        };
        after_labels
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(parse_value)
            .ok_or_else(|| self.refusal())
    }

    /// The value of label `key`, unescaped (borrowed from the line unless it had escapes);
    /// `None` when the sample has no such label. The labels are read in order up to `key`.
    pub(super) fn label(&self, key: &str) -> Option<Cow<'a, str>> {
        let mut rest = self.line[self.name_end..].strip_prefix('{')?;
        loop {
            rest = after_separators(rest);
            if rest.is_empty() || rest.starts_with('}') {
                return None;
            }
            let equals = rest.bytes().position(|b| b == b'=')?;
            let (name, after) = (&rest[..equals], &rest[equals + 1..]);
            let after = after.trim_ascii_start().strip_prefix('"')?;
            let (value, end) = quoted_value(after)?;
            if name.trim_ascii() == key {
                return Some(value);
            }
            rest = &after[end + 1..];
        }
    }
}

/// The brace that ends the label set: the first `}` outside a quoted value.
fn closing_brace(text: &str) -> Option<usize> {
    let mut quoted = false;
    let mut escaped = false;
    for (at, byte) in text.bytes().enumerate() {
        match byte {
            // The byte after a backslash is its escaped character (or that character's first
            // byte, whose other bytes match nothing here).
            _ if escaped => escaped = false,
            b'\\' if quoted => escaped = true,
            b'"' => quoted = !quoted,
            b'}' if !quoted => return Some(at),
            _ => {}
        }
    }
    None
}

fn parse_value(text: &str) -> Option<f64> {
    match text {
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        "NaN" => Some(f64::NAN),
        _ => text.parse().ok(),
    }
}

/// `text` from its first byte that is not a label set's `,` or space.
fn after_separators(text: &str) -> &str {
    let skipped = text
        .bytes()
        .take_while(|b| matches!(b, b',' | b' '))
        .count();
    &text[skipped..]
}

/// A label's value up to its closing quote (at the returned index), unescaped.
fn quoted_value(text: &str) -> Option<(Cow<'_, str>, usize)> {
    let first = text.bytes().position(|b| matches!(b, b'"' | b'\\'))?;
    if text.as_bytes()[first] == b'"' {
        return Some((Cow::Borrowed(&text[..first]), first));
    }
    let mut value = String::from(&text[..first]);
    let mut chars = text[first..].char_indices();
    loop {
        match chars.next()? {
            (at, '"') => return Some((Cow::Owned(value), first + at)),
            (_, '\\') => match chars.next()?.1 {
                'n' => value.push('\n'),
                other => value.push(other),
            },
            (_, c) => value.push(c),
        }
    }
}

#[cfg(test)]
mod tests;
