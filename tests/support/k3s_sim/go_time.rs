//! `metav1.Time` as k3s round-trips it into a ConfigMap entry (`status.creationTime`,
//! `status.error.time`): `time.Parse(time.RFC3339, …)` on the way in,
//! `t.UTC().Format(time.RFC3339)` (or `null` for the zero time) on the way out.

use serde_json::Value;

/// Seconds between 0001-01-01 and 1970-01-01 (Go's `unixToInternal`).
pub(crate) const UNIX_TO_INTERNAL: i64 = 62_135_596_800;

/// A parsed `metav1.Time`: unix seconds (floor) and nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GoTime {
    pub unix: i64,
    pub nanos: u32,
}

impl GoTime {
    /// `metav1.Time.MarshalJSON`: `null` for the zero time, else the quoted RFC3339 UTC form
    /// with second precision (fractions truncated).
    pub(crate) fn to_json(self) -> String {
        if self.unix == -UNIX_TO_INTERNAL && self.nanos == 0 {
            return "null".to_string();
        }
        let days = self.unix.div_euclid(86_400);
        let secs = self.unix.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        format!(
            "\"{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z\"",
            secs / 3600,
            secs / 60 % 60,
            secs % 60
        )
    }
}

/// `time.Parse(time.RFC3339, s)`: `YYYY-MM-DDTHH:MM:SS[.frac](Z|±hh:mm)`. `None` if invalid.
pub(crate) fn parse_rfc3339(s: &str) -> Option<GoTime> {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let part = b.get(from..from + len)?;
        part.iter()
            .all(u8::is_ascii_digit)
            .then(|| part.iter().fold(0, |n, d| n * 10 + i64::from(d - b'0')))
    };
    let seps = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')];
    if seps.iter().any(|&(i, c)| b.get(i) != Some(&c)) {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let mut pos = 19;
    let mut nanos: u32 = 0;
    if matches!(b.get(pos), Some(b'.') | Some(b',')) {
        let start = pos + 1;
        pos = start;
        while b.get(pos).is_some_and(u8::is_ascii_digit) {
            pos += 1;
        }
        if pos == start {
            return None;
        }
        let frac = &s[start..pos.min(start + 9)];
        nanos = format!("{frac:0<9}").parse().ok()?;
    }
    let offset = match b.get(pos) {
        Some(b'Z') if pos + 1 == b.len() => 0,
        Some(&sign @ (b'+' | b'-')) if pos + 6 == b.len() && b[pos + 3] == b':' => {
            let (h, m) = (num(pos + 1, 2)?, num(pos + 4, 2)?);
            if h > 23 || m > 59 {
                return None;
            }
            let o = h * 3600 + m * 60;
            if sign == b'-' { -o } else { o }
        }
        _ => return None,
    };
    let unix =
        days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset;
    Some(GoTime { unix, nanos })
}

/// `metav1.Time` from a JSON value: a valid RFC3339 string, else `None` (absent, `null`).
pub(crate) fn time_from_json(v: &Value) -> Option<GoTime> {
    v.as_str().and_then(parse_rfc3339)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_round_trip_like_metav1() {
        let t = |s: &str| parse_rfc3339(s).map(GoTime::to_json);
        assert_eq!(
            t("2024-05-31T12:00:05Z").unwrap(),
            "\"2024-05-31T12:00:05Z\""
        );
        assert_eq!(
            t("2024-05-31T12:00:05.999999Z").unwrap(),
            "\"2024-05-31T12:00:05Z\""
        );
        assert_eq!(
            t("2024-05-31T14:00:05+02:00").unwrap(),
            "\"2024-05-31T12:00:05Z\""
        );
        assert_eq!(
            t("2024-01-01T00:30:00+01:00").unwrap(),
            "\"2023-12-31T23:30:00Z\""
        );
        assert_eq!(
            t("1969-12-31T23:59:59.5Z").unwrap(),
            "\"1969-12-31T23:59:59Z\""
        );
        assert_eq!(
            t("2024-02-29T00:00:00Z").unwrap(),
            "\"2024-02-29T00:00:00Z\""
        );
        assert_eq!(t("0001-01-01T00:00:00Z").unwrap(), "null");
        assert_eq!(
            parse_rfc3339("2024-05-31T12:00:05Z").unwrap().unix,
            1_717_156_805
        );
        for bad in [
            "2023-02-29T00:00:00Z",
            "2024-05-31 12:00:05Z",
            "2024-05-31T12:00:05",
            "2024-05-31T24:00:05Z",
            "2024-05-31T12:00:05.Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }
}
