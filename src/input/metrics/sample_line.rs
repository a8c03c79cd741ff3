//! One line of the Prometheus text format (version 0.0.4, what kube-apiserver, etcd and kine
//! serve): `name{label="value",…} value [timestamp]`. Comments and blank lines are skipped.
//! Labels are read only when asked, so the many lines k3sdoctor skips cost a name comparison.

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
    let name_end = line.find(['{', ' ', '\t']).unwrap_or(line.len());
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
    let mut quoted = false;
    let mut escaped = false;
    for (at, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            '}' if !quoted => return Some(at),
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

impl Sample<'_> {
    /// The value of label `key`, unescaped; `None` when the sample has no such label.
    pub(super) fn label(&self, key: &str) -> Option<String> {
        let mut rest = self.labels.trim_start_matches([',', ' ']);
        while !rest.is_empty() {
            let (name, after) = rest.split_once('=')?;
            let after = after.trim_start().strip_prefix('"')?;
            let mut value = String::new();
            let mut chars = after.char_indices();
            let end = loop {
                match chars.next()? {
                    (at, '"') => break at,
                    (_, '\\') => match chars.next()?.1 {
                        'n' => value.push('\n'),
                        other => value.push(other),
                    },
                    (_, c) => value.push(c),
                }
            };
            if name.trim() == key {
                return Some(value);
            }
            rest = after[end + 1..].trim_start_matches([',', ' ']);
        }
        None
    }
}

#[cfg(test)]
mod tests;
