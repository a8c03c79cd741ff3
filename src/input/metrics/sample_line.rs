//! One line of the Prometheus text format (version 0.0.4, what kube-apiserver, etcd and kine
//! serve): `name{label="value",…} value [timestamp]`. Comments and blank lines are skipped.
//! Labels are read only when asked, so the many lines k3sdoctor skips cost a name comparison.
//! The scans run over bytes: every delimiter of the format is ASCII, and no byte of a
//! multi-byte UTF-8 character is, so a byte index found here is a character boundary. An
//! apiserver's answer is ~4,000 lines, and `check --rancher-clusters` reads one per cluster.

use std::borrow::Cow;

/// A sample line, borrowed from the text.
#[derive(Debug, PartialEq)]
pub(super) struct Sample<'a> {
    pub name: &'a str,
    /// Between the braces, unparsed.
    labels: &'a str,
    pub value: f64,
}

/// `None` for a comment or a blank line; `Err` for a line that is not a sample.
pub(super) fn parse_sample(line: &str) -> Option<Result<Sample<'_>, String>> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    Some(sample(line).ok_or_else(|| {
        let shown: String = line.chars().take(80).collect();
        format!("not a metrics line: {shown:?}")
    }))
}

fn sample(line: &str) -> Option<Sample<'_>> {
    let name_end = memchr::memchr3(b'{', b' ', b'\t', line.as_bytes()).unwrap_or(line.len());
    let name = &line[..name_end];
    if name.is_empty() {
        return None;
    }
    let (labels, rest) = match line[name_end..].strip_prefix('{') {
        Some(after) => {
            let close = closing_brace(after)?;
            (&after[..close], &after[close + 1..])
        }
        None => ("", &line[name_end..]),
    };
    let value = rest.split_whitespace().next()?;
    Some(Sample {
        name,
        labels,
        value: parse_value(value)?,
    })
}

/// The brace that ends the label set: the first `}` outside a quoted value.
fn closing_brace(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut quoted = false;
    let mut at = 0;
    while let Some(found) = memchr::memchr3(b'\\', b'"', b'}', &bytes[at..]) {
        let here = at + found;
        match bytes[here] {
            // The byte after a backslash is its escaped character (or that character's first
            // byte, whose other bytes match nothing here).
            b'\\' if quoted => at = here + 2,
            b'"' => {
                quoted = !quoted;
                at = here + 1;
            }
            b'}' if !quoted => return Some(here),
            _ => at = here + 1,
        }
        if at >= bytes.len() {
            return None;
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

impl<'a> Sample<'a> {
    /// The value of label `key`, unescaped (borrowed from the line unless it had escapes);
    /// `None` when the sample has no such label.
    pub(super) fn label(&self, key: &str) -> Option<Cow<'a, str>> {
        let mut rest = self.labels.trim_start_matches([',', ' ']);
        while !rest.is_empty() {
            let equals = memchr::memchr(b'=', rest.as_bytes())?;
            let (name, after) = (&rest[..equals], &rest[equals + 1..]);
            let after = after.trim_start().strip_prefix('"')?;
            let (value, end) = quoted_value(after)?;
            if name.trim() == key {
                return Some(value);
            }
            rest = after[end + 1..].trim_start_matches([',', ' ']);
        }
        None
    }
}

/// A label's value up to its closing quote (at the returned index), unescaped.
fn quoted_value(text: &str) -> Option<(Cow<'_, str>, usize)> {
    let first = memchr::memchr2(b'"', b'\\', text.as_bytes())?;
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
