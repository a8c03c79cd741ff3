//! Durations the way kubectl prints ages: `7s`, `3m12s`, `2h5m`, `36h`, `5d23h`, `400d`, `2y3d`.
//!
//! The rules are k8s.io/apimachinery pkg/util/duration/duration.go `HumanDuration`: the
//! coarser the duration, the fewer units, with each step's boundary exactly where kubectl puts
//! it (the unit tests pin every boundary), so an AGE reads the same here as in `kubectl get`.

use jiff::SignedDuration;

pub(crate) fn short(d: SignedDuration) -> String {
    let sign = if d.is_negative() { "-" } else { "" };
    format!("{sign}{}", human(d.as_secs().unsigned_abs()))
}

/// `HumanDuration` on whole seconds (Go truncates each unit toward zero, as `/` does here).
fn human(secs: u64) -> String {
    if secs < 2 * 60 {
        return format!("{secs}s");
    }
    let minutes = secs / 60;
    if minutes < 10 {
        return match secs % 60 {
            0 => format!("{minutes}m"),
            s => format!("{minutes}m{s}s"),
        };
    }
    if minutes < 3 * 60 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        return match minutes % 60 {
            0 => format!("{hours}h"),
            m => format!("{hours}h{m}m"),
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    let days = hours / 24;
    if hours < 24 * 8 {
        return match hours % 24 {
            0 => format!("{days}d"),
            h => format!("{days}d{h}h"),
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{days}d");
    }
    let years = days / 365;
    if hours < 24 * 365 * 8 {
        return match days % 365 {
            0 => format!("{years}y"),
            d => format!("{years}y{d}d"),
        };
    }
    format!("{years}y")
}

/// How long before now something happened: `30s ago`; a time after now reads `in 30s`
/// (a `--now` before the dump, or clocks that disagree), never as a negative age.
pub(crate) fn relative(since: SignedDuration) -> String {
    if since.is_negative() {
        format!("in {}", short(since.abs()))
    } else {
        format!("{} ago", short(since))
    }
}

/// An age for a table cell: one token, as kubectl's AGE column is (`1s`, `5d23h`), so that
/// `awk` counts the same fields on every row. A time after now reads `+30s`
/// (that far ahead of now); the table says why in a note under it.
pub(crate) fn table_age(since: SignedDuration) -> String {
    if since.is_negative() {
        format!("+{}", short(since.abs()))
    } else {
        short(since)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_age_is_one_token() {
        assert_eq!(table_age(SignedDuration::from_secs(1)), "1s");
        assert_eq!(
            table_age(SignedDuration::from_secs(5 * 86_400 + 23 * 3600)),
            "5d23h"
        );
        assert_eq!(table_age(SignedDuration::from_secs(-30)), "+30s");
        assert_eq!(table_age(SignedDuration::ZERO), "0s");
    }

    #[test]
    fn times_after_now_read_as_in() {
        assert_eq!(relative(SignedDuration::from_secs(30)), "30s ago");
        assert_eq!(relative(SignedDuration::from_secs(-30)), "in 30s");
        assert_eq!(
            relative(SignedDuration::from_secs(-1612 * 86_400)),
            "in 4y152d"
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
        assert_eq!(s(36 * 3600), "36h");
        assert_eq!(s(5 * 86_400 + 23 * 3600), "5d23h");
        assert_eq!(s(-4), "-4s");
    }

    /// Each boundary of apimachinery's HumanDuration, from both sides.
    #[test]
    fn every_boundary_of_human_duration() {
        const M: i64 = 60;
        const H: i64 = 3600;
        const D: i64 = 86_400;
        const Y: i64 = 365 * D;
        let s = |n| short(SignedDuration::from_secs(n));
        for (secs, want) in [
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (121, "2m1s"),
            (10 * M - 1, "9m59s"),
            (10 * M, "10m"),
            (3 * H - 1, "179m"),
            (3 * H, "3h"),
            (3 * H + M, "3h1m"),
            (8 * H - 1, "7h59m"),
            (8 * H, "8h"),
            (48 * H - 1, "47h"),
            (48 * H, "2d"),
            (48 * H + H, "2d1h"),
            (8 * D - 1, "7d23h"),
            (8 * D, "8d"),
            (2 * Y - 1, "729d"),
            (2 * Y, "2y"),
            (2 * Y + D, "2y1d"),
            (8 * Y - 1, "7y364d"),
            (8 * Y, "8y"),
            (20 * Y + 100 * D, "20y"),
        ] {
            assert_eq!(s(secs), want, "{secs}s");
        }
    }
}
