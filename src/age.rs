//! Durations the way kubectl prints ages: `7s`, `3m12s`, `2h5m`, `4d`.

use jiff::SignedDuration;

pub fn short(d: SignedDuration) -> String {
    let secs = d.as_secs().abs();
    let sign = if d.is_negative() { "-" } else { "" };
    let body = match secs {
        0..120 => format!("{secs}s"),
        120..600 => format!("{}m{}s", secs / 60, secs % 60),
        600..10_800 => format!("{}m", secs / 60),
        10_800..172_800 => match (secs / 3600, secs % 3600 / 60) {
            (h, 0) => format!("{h}h"),
            (h, m) => format!("{h}h{m}m"),
        },
        _ => format!("{}d", secs / 86_400),
    };
    format!("{sign}{body}")
}

/// How long before now something happened: `30s ago`; a time after now reads `in 30s`
/// (a `--now` before the dump, or clocks that disagree), never as a negative age.
pub fn relative(since: SignedDuration) -> String {
    if since.is_negative() {
        format!("in {}", short(since.abs()))
    } else {
        format!("{} ago", short(since))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_after_now_read_as_in() {
        assert_eq!(relative(SignedDuration::from_secs(30)), "30s ago");
        assert_eq!(relative(SignedDuration::from_secs(-30)), "in 30s");
        assert_eq!(
            relative(SignedDuration::from_secs(-1612 * 86_400)),
            "in 1612d"
        );
        assert_eq!(relative(SignedDuration::ZERO), "0s ago");
    }

    #[test]
    fn formats_like_kubectl() {
        let s = |n| short(SignedDuration::from_secs(n));
        assert_eq!(s(7), "7s");
        assert_eq!(s(192), "3m12s");
        assert_eq!(s(900), "15m");
        assert_eq!(s(3 * 3600 + 300), "3h5m");
        assert_eq!(s(5 * 86_400), "5d");
        assert_eq!(s(-4), "-4s");
    }
}
