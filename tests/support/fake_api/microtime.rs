//! Go's `time.Parse` for the two layouts the fake needs, with Go's exact error texts.
//!
//! `metav1.MicroTime` (Lease `spec.acquireTime`/`renewTime`) parses with
//! `2006-01-02T15:04:05.000000Z07:00`: exactly six fractional digits, or the apiserver rejects the
//! object (samples 033–039). An offset is accepted and normalised to UTC (sample 040).

/// The MicroTime layout (`metav1.RFC3339Micro`).
pub(crate) const MICRO_LAYOUT: &str = "2006-01-02T15:04:05.000000Z07:00";

/// Parse a MicroTime like Go would and return it re-encoded in UTC with six digits, or the Go
/// error string (`parsing time "…" as "…": cannot parse "…" as "…"`).
pub(crate) fn normalize_micro(value: &str) -> Result<String, String> {
    let parsed = parse(value)?;
    let ts = jiff::Timestamp::from_second(parsed.unix_seconds).map_err(|_| {
        format!(
            "parsing time {}: year out of range",
            super::json::go_quote(value)
        )
    })?;
    Ok(format!(
        "{}.{:06}Z",
        ts.strftime("%Y-%m-%dT%H:%M:%S"),
        parsed.micros
    ))
}

struct Parsed {
    unix_seconds: i64,
    micros: u32,
}

fn cannot_parse(value: &str, rest: &str, elem: &str) -> String {
    let q = super::json::go_quote;
    format!(
        "parsing time {} as {}: cannot parse {} as {}",
        q(value),
        q(MICRO_LAYOUT),
        q(rest),
        q(elem)
    )
}

fn out_of_range(value: &str, what: &str) -> String {
    format!(
        "parsing time {}: {what} out of range",
        super::json::go_quote(value)
    )
}

/// Go's `getnum`: one or two digits (exactly two when `fixed`).
fn getnum(s: &str, fixed: bool) -> Option<(u32, &str)> {
    let b = s.as_bytes();
    if b.is_empty() || !b[0].is_ascii_digit() {
        return None;
    }
    if b.len() < 2 || !b[1].is_ascii_digit() {
        if fixed {
            return None;
        }
        return Some(((b[0] - b'0') as u32, &s[1..]));
    }
    Some((((b[0] - b'0') * 10 + (b[1] - b'0')) as u32, &s[2..]))
}

fn literal<'a>(value: &str, rest: &'a str, lit: &str) -> Result<&'a str, String> {
    rest.strip_prefix(lit)
        .ok_or_else(|| cannot_parse(value, rest, lit))
}

fn parse(value: &str) -> Result<Parsed, String> {
    let rest = value;
    // "2006"
    if rest.len() < 4 || !rest.as_bytes()[..4].iter().all(u8::is_ascii_digit) {
        return Err(cannot_parse(value, rest, "2006"));
    }
    let year: i64 = rest[..4].parse().expect("digits");
    let rest = literal(value, &rest[4..], "-")?;
    let (month, rest) = getnum(rest, true).ok_or_else(|| cannot_parse(value, rest, "01"))?;
    if !(1..=12).contains(&month) {
        return Err(out_of_range(value, "month"));
    }
    let rest = literal(value, rest, "-")?;
    let (day, rest) = getnum(rest, true).ok_or_else(|| cannot_parse(value, rest, "02"))?;
    let rest = literal(value, rest, "T")?;
    let (hour, rest) = getnum(rest, false).ok_or_else(|| cannot_parse(value, rest, "15"))?;
    if hour >= 24 {
        return Err(out_of_range(value, "hour"));
    }
    let rest = literal(value, rest, ":")?;
    let (minute, rest) = getnum(rest, true).ok_or_else(|| cannot_parse(value, rest, "04"))?;
    if minute >= 60 {
        return Err(out_of_range(value, "minute"));
    }
    let rest = literal(value, rest, ":")?;
    let (second, rest) = getnum(rest, true).ok_or_else(|| cannot_parse(value, rest, "05"))?;
    if second >= 60 {
        return Err(out_of_range(value, "second"));
    }
    // ".000000": exactly a separator and six digits.
    let frac = rest.as_bytes();
    if frac.len() < 7
        || !(frac[0] == b'.' || frac[0] == b',')
        || !frac[1..7].iter().all(u8::is_ascii_digit)
    {
        return Err(cannot_parse(value, rest, ".000000"));
    }
    let micros: u32 = rest[1..7].parse().expect("digits");
    let rest = &rest[7..];
    // "Z07:00"
    let (offset_seconds, rest) = if let Some(after) = rest.strip_prefix('Z') {
        (0i64, after)
    } else {
        let b = rest.as_bytes();
        if b.len() < 6 || b[3] != b':' || !(b[0] == b'+' || b[0] == b'-') {
            return Err(cannot_parse(value, rest, "Z07:00"));
        }
        let (hh, _) =
            getnum(&rest[1..3], true).ok_or_else(|| cannot_parse(value, rest, "Z07:00"))?;
        let (mm, _) =
            getnum(&rest[4..6], true).ok_or_else(|| cannot_parse(value, rest, "Z07:00"))?;
        if hh > 24 {
            return Err(out_of_range(value, "time zone offset hour"));
        }
        if mm > 60 {
            return Err(out_of_range(value, "time zone offset minute"));
        }
        let sign = if b[0] == b'-' { -1 } else { 1 };
        (sign * (hh as i64 * 3600 + mm as i64 * 60), &rest[6..])
    };
    if !rest.is_empty() {
        return Err(format!(
            "parsing time {}: extra text: {}",
            super::json::go_quote(value),
            super::json::go_quote(rest)
        ));
    }
    if day < 1 || day > days_in_month(year, month) {
        return Err(out_of_range(value, "day"));
    }
    let days = days_from_civil(year, month, day);
    let seconds = days * 86400 + (hour * 3600 + minute * 60 + second) as i64;
    Ok(Parsed {
        unix_seconds: seconds - offset_seconds,
        micros,
    })
}

fn days_in_month(year: i64, month: u32) -> u32 {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = month as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// Current time as a `metav1.Time` string (whole seconds, UTC).
pub(crate) fn now_seconds() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}
