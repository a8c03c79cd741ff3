//! `--max-bundle-size`: a byte count with a unit, as people write sizes (`2GiB`, `500M`).

/// Parses `2GiB`, `512MiB`, `500M`, `64k`, `1000`: binary units (`KiB`, `MiB`, `GiB`, and
/// `K`, `M`, `G` alone, as `du -h` prints them) and decimal ones (`KB`, `MB`, `GB`).
pub(super) fn parse(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a size; write e.g. 2GiB, 500MiB or 100000"))?;
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "ki" | "kib" => 1 << 10,
        "m" | "mi" | "mib" => 1 << 20,
        "g" | "gi" | "gib" => 1 << 30,
        "t" | "ti" | "tib" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        other => {
            return Err(format!(
                "unknown size unit {other:?}; use B, KiB, MiB, GiB (or KB, MB, GB)"
            ));
        }
    };
    let bytes = number
        .checked_mul(scale)
        .ok_or_else(|| format!("{text:?} is too large"))?;
    if bytes == 0 {
        return Err("the size must be above 0".to_string());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_and_decimal_units() {
        assert_eq!(parse("2GiB"), Ok(2 << 30));
        assert_eq!(parse("500M"), Ok(500 << 20));
        assert_eq!(parse("64 KiB"), Ok(64 << 10));
        assert_eq!(parse("1000"), Ok(1000));
        assert_eq!(parse("5MB"), Ok(5_000_000));
        assert!(parse("0").is_err());
        assert!(parse("lots").is_err());
        assert!(
            parse("3 parsecs")
                .unwrap_err()
                .contains("unknown size unit")
        );
        assert!(parse("99999999999999999999").is_err());
        assert!(parse("99999999999T").is_err());
    }
}
