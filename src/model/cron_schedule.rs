//! `--etcd-snapshot-schedule-cron` (default `0 */12 * * *`), read far enough to know the
//! longest time between two scheduled snapshots. k3s parses it with robfig/cron v3's standard
//! parser: five fields or a descriptor (`@hourly`, `@every 6h`, …). Pure.

use jiff::SignedDuration;

/// k3s's default (`pkg/cli/cmds/server.go`).
pub(crate) const DEFAULT_SCHEDULE: &str = "0 */12 * * *";

/// The longest gap between two runs of `schedule`; `None` when it cannot be told from minute,
/// hour and weekday alone (a day-of-month or month field) or the text is not a schedule.
pub(crate) fn longest_gap(schedule: &str) -> Option<SignedDuration> {
    let mut text = schedule.trim();
    if let Some(rest) = text
        .strip_prefix("CRON_TZ=")
        .or_else(|| text.strip_prefix("TZ="))
    {
        text = rest.split_once(' ')?.1.trim();
    }
    match text {
        "@hourly" => return Some(SignedDuration::from_hours(1)),
        "@daily" | "@midnight" => return Some(SignedDuration::from_hours(24)),
        "@weekly" => return Some(SignedDuration::from_hours(24 * 7)),
        _ => {}
    }
    if let Some(every) = text.strip_prefix("@every ") {
        return super::node_args::parse_go_duration(every).filter(|d| d.is_positive());
    }
    let fields: Vec<&str> = text.split_whitespace().collect();
    let [minute, hour, dom, month, dow] = fields.as_slice() else {
        return None;
    };
    if *dom != "*" && *dom != "?" || *month != "*" {
        return None;
    }
    let minutes = field(minute, 0, 59)?;
    let hours = field(hour, 0, 23)?;
    let days = if *dow == "*" || *dow == "?" {
        vec![true; 7]
    } else {
        let mut d = field(&day_numbers(dow), 0, 7)?;
        if d[7] {
            d[0] = true;
        }
        d.truncate(7);
        d
    };
    let week = 7 * 24 * 60;
    let fires: Vec<i64> = (0..week)
        .filter(|m| {
            let (day, hour, minute) = (m / 1440, (m / 60) % 24, m % 60);
            days[day as usize] && hours[hour as usize] && minutes[minute as usize]
        })
        .collect();
    let first = *fires.first()?;
    let mut longest = first + week - fires.last()?;
    for pair in fires.windows(2) {
        longest = longest.max(pair[1] - pair[0]);
    }
    Some(SignedDuration::from_mins(longest))
}

/// `MON-FRI` → `1-5`.
fn day_numbers(dow: &str) -> String {
    let names = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];
    let mut out = dow.to_ascii_uppercase();
    for (i, n) in names.iter().enumerate() {
        out = out.replace(n, &i.to_string());
    }
    out
}

/// One cron field as a membership table over `min..=max`.
fn field(text: &str, min: usize, max: usize) -> Option<Vec<bool>> {
    let mut set = vec![false; max + 1];
    for item in text.split(',') {
        let (range, step) = match item.split_once('/') {
            Some((r, s)) => (r, s.parse::<usize>().ok().filter(|s| *s > 0)?),
            None => (item, 1),
        };
        let (lo, hi) = if range == "*" || range == "?" {
            (min, max)
        } else if let Some((a, b)) = range.split_once('-') {
            (a.parse().ok()?, b.parse().ok()?)
        } else {
            let a: usize = range.parse().ok()?;
            // robfig: `a/n` runs from a to the end.
            (a, if item.contains('/') { max } else { a })
        };
        if lo < min || hi > max || lo > hi {
            return None;
        }
        for v in (lo..=hi).step_by(step) {
            set[v] = true;
        }
    }
    Some(set)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hours(s: &str) -> Option<i64> {
        longest_gap(s).map(|d| d.as_secs() / 3600)
    }

    #[test]
    fn k3s_default_is_twelve_hours() {
        assert_eq!(hours(DEFAULT_SCHEDULE), Some(12));
    }

    #[test]
    fn uneven_schedules_give_their_longest_gap() {
        // 02:00 and 06:00: the gap from 06:00 to 02:00 is 20 h.
        assert_eq!(hours("0 2,6 * * *"), Some(20));
        assert_eq!(hours("*/30 * * * *").map(|_| ()), Some(()));
        assert_eq!(
            longest_gap("*/30 * * * *"),
            Some(SignedDuration::from_mins(30))
        );
        assert_eq!(hours("0 0 * * 1-5"), Some(72));
        assert_eq!(hours("0 0 * * MON"), Some(168));
        assert_eq!(hours("0 0 * * 7"), Some(168));
        assert_eq!(hours("@hourly"), Some(1));
        assert_eq!(hours("@every 6h"), Some(6));
        assert_eq!(hours("CRON_TZ=UTC 0 */6 * * *"), Some(6));
    }

    #[test]
    fn what_cannot_be_judged_is_none() {
        assert_eq!(longest_gap("0 0 1 * *"), None);
        assert_eq!(longest_gap("0 0 * 6 *"), None);
        assert_eq!(longest_gap("0 25 * * *"), None);
        assert_eq!(longest_gap("nonsense"), None);
        assert_eq!(longest_gap("*/0 * * * *"), None);
        assert_eq!(longest_gap(""), None);
    }
}
