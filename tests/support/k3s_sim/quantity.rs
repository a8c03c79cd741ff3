//! `resource.Quantity` → `Value()` (`status.size` of an ETCDSnapshotFile), following
//! apimachinery's `ParseQuantity` fast path (int64 mantissa + scale, with Go's overflow
//! results) and its exact slow path; plus `strconv.ParseInt`, which k3s's pruning uses.

use serde_json::Value;

/// `Quantity.Value()` of a JSON quantity (string or number). `None` when absent, `null` or not a
/// valid quantity (Go would fail to decode the whole object; the simulator just drops the size).
pub(crate) fn quantity_value(v: &Value) -> Option<i64> {
    match v {
        Value::String(s) => parse_quantity_value(s.trim()),
        Value::Number(n) => parse_quantity_value(&n.to_string()),
        _ => None,
    }
}

/// `resource.ParseQuantity(s)` followed by `.Value()` (rounds fractions away from zero).
pub(crate) fn parse_quantity_value(s: &str) -> Option<i64> {
    if s.is_empty() {
        return None;
    }
    let (positive, num, denom, suffix) = split_quantity(s)?;
    let (binary, exponent) = interpret_suffix(suffix)?;
    let digits = format!("{num}{denom}");
    if !binary {
        // DecimalSI / DecimalExponent: int64Amount{num+denom, exponent-len(denom)} when it fits.
        let scale = i64::from(exponent) - denom.len() as i64;
        if 18 >= digits.len() && scale >= -9 {
            let v: i64 = digits.parse().ok()?;
            return Some(int64_amount_value(if positive { v } else { -v }, scale));
        }
    } else if exponent >= 0 && denom.is_empty() {
        let precision = 15 - num.len() as i64 - ((exponent as f32) * 3.0 / 10.0) as i64 - 1;
        if precision >= 0 {
            let v: i64 = num.parse().ok()?;
            if let Some(r) = v.checked_mul(1i64 << exponent) {
                return Some(if positive { r } else { -r });
            }
        }
    }
    Some(slow_value(positive, &digits, denom.len(), binary, exponent))
}

/// `parseQuantityString`: sign, numerator (leading zeros stripped), denominator, suffix.
fn split_quantity(s: &str) -> Option<(bool, &str, &str, &str)> {
    let b = s.as_bytes();
    let end = b.len();
    let (positive, mut pos) = match b[0] {
        b'-' => (false, 1),
        b'+' => (true, 1),
        _ => (true, 0),
    };
    while pos < end && b[pos] == b'0' {
        pos += 1;
    }
    if pos >= end {
        return Some((positive, "0", "", ""));
    }
    let start = pos;
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    let num = if pos == start { "0" } else { &s[start..pos] };
    if pos >= end {
        return Some((positive, num, "", ""));
    }
    let mut denom = "";
    if b[pos] == b'.' {
        pos += 1;
        let d = pos;
        while pos < end && b[pos].is_ascii_digit() {
            pos += 1;
        }
        denom = &s[d..pos];
        if pos >= end {
            return Some((positive, num, denom, ""));
        }
    }
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&b[pos]) {
        pos += 1;
    }
    if pos < end && (b[pos] == b'-' || b[pos] == b'+') {
        pos += 1;
    }
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    (pos >= end).then_some((positive, num, denom, &s[suffix_start..]))
}

/// `quantitySuffixer.interpret`: (binary?, exponent of 10 or of 2).
fn interpret_suffix(suffix: &str) -> Option<(bool, i32)> {
    let decimal = [
        ("", 0),
        ("n", -9),
        ("u", -6),
        ("m", -3),
        ("k", 3),
        ("M", 6),
        ("G", 9),
        ("T", 12),
        ("P", 15),
        ("E", 18),
    ];
    let binary = [
        ("Ki", 10),
        ("Mi", 20),
        ("Gi", 30),
        ("Ti", 40),
        ("Pi", 50),
        ("Ei", 60),
    ];
    if let Some((_, e)) = decimal.iter().find(|(s, _)| *s == suffix) {
        return Some((false, *e));
    }
    if let Some((_, e)) = binary.iter().find(|(s, _)| *s == suffix) {
        return Some((true, *e));
    }
    if suffix.len() > 1 && suffix.starts_with(['e', 'E']) {
        // strconv.ParseInt(suffix[1:], 10, 64), then int32(...)
        return go_parse_int(&suffix[1..]).ok().map(|e| (false, e as i32));
    }
    None
}

/// `int64Amount{value, scale}.AsScaledInt64(0)`: divisions round away from zero; overflowing
/// multiplications give Go's results (wrapped product for scales 1, 2, 3, 6, 9; 0 otherwise).
fn int64_amount_value(value: i64, scale: i64) -> i64 {
    if scale < 0 {
        let mut v = value;
        let mut fraction = false;
        for _ in 0..-scale {
            fraction |= v % 10 != 0;
            v /= 10;
            if v == 0 {
                return match (fraction, value > 0) {
                    (false, _) => 0,
                    (true, true) => 1,
                    (true, false) => -1,
                };
            }
        }
        return match (fraction, value > 0) {
            (false, _) => v,
            (true, true) => v + 1,
            (true, false) => v - 1,
        };
    }
    match scale {
        0 => value,
        1 | 2 | 3 | 6 | 9 => {
            if value == i64::MIN {
                0
            } else {
                value.wrapping_mul(10i64.pow(scale as u32))
            }
        }
        _ => {
            let mut v = value;
            for _ in 0..scale {
                match v.checked_mul(10) {
                    Some(n) => v = n,
                    None => return 0,
                }
            }
            v
        }
    }
}

/// The inf.Dec path: exact value rounded away from zero to an integer. Values outside int64 are
/// clamped (Go's `big.Int.Int64` result there is unspecified). Binary quantities with more than
/// ~20 significant digits saturate too.
fn slow_value(positive: bool, digits: &str, denom_len: usize, binary: bool, exponent: i32) -> i64 {
    let magnitude = slow_magnitude(digits, denom_len, binary, exponent);
    match (magnitude, positive) {
        (Some(m), true) => i64::try_from(m).unwrap_or(i64::MAX),
        (Some(m), false) => i64::try_from(m).map(|m| -m).unwrap_or(i64::MIN),
        (None, true) => i64::MAX,
        (None, false) => i64::MIN,
    }
}

/// |value| rounded up to an integer; `None` when it does not fit in a u128.
fn slow_magnitude(digits: &str, denom_len: usize, binary: bool, exponent: i32) -> Option<u128> {
    if binary {
        let trimmed = digits.trim_end_matches('0');
        let dropped = digits.len() - trimmed.len();
        let (digits, denom_len) = if dropped >= denom_len {
            (&digits[..digits.len() - denom_len], 0)
        } else {
            (trimmed, denom_len - dropped)
        };
        let d = digits.trim_start_matches('0');
        let d: Option<u128> = if d.is_empty() {
            Some(0)
        } else {
            d.parse().ok()
        };
        let shift = u32::try_from(exponent).unwrap_or(0);
        d.and_then(|d| d.checked_mul(1u128 << shift)).and_then(|n| {
            let div = 10u128.checked_pow(denom_len as u32)?;
            Some(n.div_ceil(div))
        })
    } else {
        let e = i64::from(exponent) - denom_len as i64;
        let d = digits.trim_start_matches('0');
        if d.is_empty() {
            Some(0)
        } else if e >= 0 {
            d.parse::<u128>()
                .ok()
                .and_then(|d| d.checked_mul(10u128.checked_pow(u32::try_from(e).ok()?)?))
        } else {
            let cut = d.len() as i64 + e;
            let (int, frac) = if cut <= 0 {
                ("", d)
            } else {
                d.split_at(cut as usize)
            };
            let int: u128 = if int.is_empty() { 0 } else { int.parse().ok()? };
            Some(int + u128::from(frac.bytes().any(|b| b != b'0')))
        }
    }
}

/// `strconv.ParseInt(s, 10, 64)`: optional sign, digits; out of range → the bound and an error.
pub(crate) fn go_parse_int(s: &str) -> Result<i64, i64> {
    let (negative, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(0);
    }
    let mut v: i128 = 0;
    for b in digits.bytes() {
        v = (v * 10 + i128::from(b - b'0')).min(i128::from(u64::MAX));
    }
    let v = if negative { -v } else { v };
    i64::try_from(v).map_err(|_| if negative { i64::MIN } else { i64::MAX })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quantity_values() {
        let cases = [
            (json!("8417312"), Some(8_417_312)),
            (json!("8417k"), Some(8_417_000)),
            (json!("12Mi"), Some(12_582_912)),
            (json!("0"), Some(0)),
            (json!(5_328_929), Some(5_328_929)),
            (json!("1500m"), Some(2)),
            (json!("1001m"), Some(2)),
            (json!("1000m"), Some(1)),
            (json!("1n"), Some(1)),
            (json!("1.5"), Some(2)),
            (json!("0.5Ki"), Some(512)),
            (json!("1.5Mi"), Some(1_572_864)),
            (json!("1e3"), Some(1000)),
            (json!("1E-3"), Some(1)),
            (json!("2.5e2"), Some(250)),
            (json!("-1500m"), Some(-2)),
            (json!("+007"), Some(7)),
            (json!("5G"), Some(5_000_000_000)),
            (json!(" 42 "), Some(42)),
            (json!("9223372036854775808"), Some(i64::MAX)),
            (json!("9000000000E"), Some(0)),
        ];
        for (input, want) in cases {
            assert_eq!(quantity_value(&input), want, "{input}");
        }
        for bad in [
            json!(""),
            json!("abc"),
            json!("1.5.3"),
            json!("5K"),
            json!(null),
        ] {
            assert_eq!(quantity_value(&bad), None, "{bad}");
        }
    }

    #[test]
    fn parse_int_like_strconv() {
        assert_eq!(go_parse_int("1717156805"), Ok(1_717_156_805));
        assert_eq!(go_parse_int("+5"), Ok(5));
        assert_eq!(go_parse_int(""), Err(0));
        assert_eq!(go_parse_int("12a"), Err(0));
        assert_eq!(go_parse_int("99999999999999999999"), Err(i64::MAX));
    }
}
