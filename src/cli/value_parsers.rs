//! Parsers for flag values that clap has no type for: kubectl's durations and RFC 3339 times.

use std::time::Duration;

use jiff::Timestamp;

use super::RequestTimeout;

/// kubectl's forms: a bare number of seconds, or a duration such as `500ms`, `30s`, `1m30s`, `2h`.
pub fn parse_request_timeout(text: &str) -> Result<RequestTimeout, String> {
    let text = text.trim();
    let invalid = || format!("{text:?} is not a duration; use e.g. 30s, 1m or 0 for no limit");
    let millis: u64 = if let Ok(secs) = text.parse::<u64>() {
        secs.checked_mul(1000).ok_or_else(invalid)?
    } else {
        let mut total: u64 = 0;
        let mut rest = text;
        if rest.is_empty() {
            return Err(invalid());
        }
        while !rest.is_empty() {
            let digits = rest
                .find(|c: char| !c.is_ascii_digit())
                .ok_or_else(invalid)?;
            if digits == 0 {
                return Err(invalid());
            }
            let value: u64 = rest[..digits].parse().map_err(|_| invalid())?;
            rest = &rest[digits..];
            let unit_len = rest
                .find(|c: char| c.is_ascii_digit())
                .unwrap_or(rest.len());
            let factor = match &rest[..unit_len] {
                "ms" => 1,
                "s" => 1000,
                "m" => 60_000,
                "h" => 3_600_000,
                _ => return Err(invalid()),
            };
            rest = &rest[unit_len..];
            total = value
                .checked_mul(factor)
                .and_then(|v| total.checked_add(v))
                .ok_or_else(invalid)?;
        }
        total
    };
    Ok(RequestTimeout(
        (millis > 0).then(|| Duration::from_millis(millis)),
    ))
}

/// `--timeout`: like `--request-timeout`, but it must be a real wait.
pub(super) fn parse_wait(text: &str) -> Result<Duration, String> {
    parse_request_timeout(text)?.0.ok_or_else(|| {
        format!("{text:?}: the timeout must be longer than 0; use --no-wait not to wait")
    })
}

pub(super) fn parse_regex(text: &str) -> Result<regex::Regex, String> {
    regex::Regex::new(text).map_err(|e| {
        // The regex crate's message is a multi-line diagram; its last line says what is wrong.
        let why = e.to_string();
        let why = why
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default()
            .trim()
            .to_string();
        format!(
            "{text:?} is not a regular expression: {}",
            why.trim_start_matches("error: ")
        )
    })
}

pub(super) fn parse_now(text: &str) -> Result<Timestamp, String> {
    text.trim()
        .parse::<Timestamp>()
        .map_err(|e| format!("{text:?} is not an RFC 3339 time such as 2024-05-31T12:10:40Z: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_timeouts_like_kubectl() {
        let ms = |t: &str| parse_request_timeout(t).unwrap().0.map(|d| d.as_millis());
        assert_eq!(ms("0"), None);
        assert_eq!(ms("5"), Some(5000));
        assert_eq!(ms("30s"), Some(30_000));
        assert_eq!(ms("1m30s"), Some(90_000));
        assert_eq!(ms("250ms"), Some(250));
        assert_eq!(ms("2h"), Some(7_200_000));
        for bad in ["", "s", "1x", "-1s", "1.5s", "99999999999999999999"] {
            assert!(parse_request_timeout(bad).is_err(), "{bad}");
        }
    }
}
