//! Kubernetes resource quantities (`status.size` of an ETCDSnapshotFile): `"8417312"`, a
//! multiple of 1000 canonicalised to `"8417k"`, `"12Mi"`, or a plain JSON number.

/// The integer value as `resource.Quantity.Value()` gives it: fractions round up.
pub(crate) fn parse_quantity(text: &str) -> Result<i64, String> {
    let text = text.trim();
    let bad = || format!("{text:?} is not a Kubernetes quantity");
    if text.is_empty() {
        return Err(bad());
    }
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    // Decimal exponents (`1e3`, `1E3`) count as suffixes in Kubernetes' grammar.
    let (mantissa_exp, multiplier): (i32, i128) = match suffix {
        "" => (0, 1),
        "k" => (3, 1),
        "M" => (6, 1),
        "G" => (9, 1),
        "T" => (12, 1),
        "P" => (15, 1),
        "E" => (18, 1),
        "m" => (-3, 1),
        "n" => (-9, 1),
        "u" => (-6, 1),
        "Ki" => (0, 1 << 10),
        "Mi" => (0, 1 << 20),
        "Gi" => (0, 1 << 30),
        "Ti" => (0, 1 << 40),
        "Pi" => (0, 1 << 50),
        "Ei" => (0, 1 << 60),
        s if s.starts_with(['e', 'E']) => (s[1..].parse::<i32>().map_err(|_| bad())?, 1),
        _ => return Err(bad()),
    };
    let (negative, digits) = match number.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, number.strip_prefix('+').unwrap_or(number)),
    };
    let (int_part, frac_part) = digits.split_once('.').unwrap_or((digits, ""));
    if (int_part.is_empty() && frac_part.is_empty())
        || !int_part.chars().all(|c| c.is_ascii_digit())
        || !frac_part.chars().all(|c| c.is_ascii_digit())
    {
        return Err(bad());
    }
    // value = int.frac × 10^exp × multiplier, computed exactly as a fraction num / 10^scale.
    let all_digits = format!("{int_part}{frac_part}");
    let significant = all_digits.trim_start_matches('0');
    let mut num: i128 = if significant.is_empty() {
        0
    } else {
        significant.parse().map_err(|_| bad())?
    };
    let mut scale: i32 = frac_part.len() as i32 - mantissa_exp;
    num = num.checked_mul(multiplier).ok_or_else(bad)?;
    while scale < 0 {
        num = num.checked_mul(10).ok_or_else(bad)?;
        scale += 1;
    }
    let denominator = 10i128.checked_pow(scale as u32).ok_or_else(bad)?;
    let value = if negative {
        -(num / denominator)
    } else {
        (num + denominator - 1) / denominator
    };
    i64::try_from(value).map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_forms() {
        assert_eq!(parse_quantity("8417312"), Ok(8_417_312));
        assert_eq!(parse_quantity("8417k"), Ok(8_417_000));
        assert_eq!(parse_quantity("12Mi"), Ok(12_582_912));
        assert_eq!(parse_quantity("0"), Ok(0));
        assert_eq!(parse_quantity("1500m"), Ok(2));
        assert_eq!(parse_quantity("1.5k"), Ok(1500));
        assert_eq!(parse_quantity("1e3"), Ok(1000));
        assert_eq!(parse_quantity("2Gi"), Ok(2_147_483_648));
    }

    #[test]
    fn rejects_garbage() {
        for bad in [
            "",
            "12 MB",
            "k",
            "1.2.3",
            "abc",
            "-",
            ".",
            "99999999999999999999999E",
            "1e100",
            "999999999999999999999999999999999999999999",
        ] {
            assert!(parse_quantity(bad).is_err(), "{bad}");
        }
    }
}
