//! The timings a `<prog>` / `<prog>-etcd` election runs with, as far as its record shows them.
//! wrangler (`pkg/leader/leader.go`) campaigns with 45 s / 30 s / 2 s (lease duration, renew
//! deadline, retry period), 45 h / 30 h with `CATTLE_DEV_MODE`, and — in the wrangler of k3s
//! 1.30 and later — whatever `CATTLE_ELECTION_LEASE_DURATION`, `…_RENEW_DEADLINE` and
//! `…_RETRY_PERIOD` say. Only the lease duration is written into the record; the rest is
//! inferred from it and said to be. Pure.

use std::time::Duration;

use serde::Serialize;

use crate::version::ProductVersion;

const WRANGLER_LEASE: i64 = 45;
const WRANGLER_DEADLINE: i64 = 30;
const WRANGLER_RETRY: i64 = 2;
const DEV_MODE_LEASE: i64 = 45 * 3600;
const DEV_MODE_DEADLINE: i64 = 30 * 3600;

/// The shortest and longest default wait for a takeover.
const MIN_VERIFY: i64 = 30;
const MAX_VERIFY: i64 = 600;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ElectionTiming {
    pub lease_duration_seconds: i64,
    pub renew_deadline_seconds: i64,
    pub retry_period_seconds: i64,
    /// What the numbers mean for the move, in plain words: the plan's text shows this.
    pub summary: String,
    /// Where the numbers come from, in k3s's and wrangler's terms (`-v` and JSON).
    pub source: String,
}

impl ElectionTiming {
    /// The default wait for a takeover: by the lease duration plus the renew deadline after the
    /// write, the old holder has given up and any candidate has had a full round, so the
    /// outcome is decided either way.
    pub(crate) fn verify_timeout(&self) -> Duration {
        let secs = (self.lease_duration_seconds + self.renew_deadline_seconds)
            .clamp(MIN_VERIFY, MAX_VERIFY);
        Duration::from_secs(secs.unsigned_abs())
    }

    /// Lease duration, renew deadline and retry period as the plan's table shows them.
    pub(crate) fn cells(&self) -> [String; 3] {
        [
            seconds(self.lease_duration_seconds),
            seconds(self.renew_deadline_seconds),
            seconds(self.retry_period_seconds),
        ]
    }

    #[cfg(test)]
    pub(crate) fn describe(&self) -> String {
        format!(
            "lease {}, renew deadline {}, retry {} ({})",
            seconds(self.lease_duration_seconds),
            seconds(self.renew_deadline_seconds),
            seconds(self.retry_period_seconds),
            self.source
        )
    }
}

/// `duration`: the record's `leaseDurationSeconds`; `sibling`: the other lock's, used when this
/// record was released (`release()` writes a duration of 1 s).
pub(crate) fn election_timing(
    duration: Option<i64>,
    sibling: Option<i64>,
    version: Option<&ProductVersion>,
) -> ElectionTiming {
    let usable = |d: Option<i64>| d.filter(|d| *d > 1);
    let (lease, from) = match (usable(duration), usable(sibling)) {
        (Some(d), _) => (d, "the record's leaseDurationSeconds"),
        (None, Some(d)) => (
            d,
            "the other lock's leaseDurationSeconds, this record being released",
        ),
        (None, None) => (WRANGLER_LEASE, "no usable record: wrangler's default"),
    };
    let (deadline, source, summary) = match lease {
        WRANGLER_LEASE => (
            WRANGLER_DEADLINE,
            format!("wrangler's defaults; from {from}"),
            "k3s's usual timings".to_string(),
        ),
        DEV_MODE_LEASE => (
            DEV_MODE_DEADLINE,
            format!("CATTLE_DEV_MODE; from {from}"),
            "the very long timings of a server started with CATTLE_DEV_MODE: the old holder may keep \
             its lock for hours"
                .to_string(),
        ),
        _ => {
            let env = if version.is_some_and(|v| v.major == 1 && v.minor >= 30) {
                "CATTLE_ELECTION_LEASE_DURATION"
            } else {
                "a setting this version's wrangler does not read from the environment"
            };
            (
                lease * 2 / 3,
                format!(
                    "not wrangler's default ({env}); the renew deadline is not recorded, two thirds of \
                     the lease assumed as in wrangler's defaults; from {from}"
                ),
                format!(
                    "this cluster's lock lasts {} instead of k3s's usual 45s; how long the old holder keeps \
                     trying before it gives up is not recorded anywhere, so it is estimated",
                    seconds(lease)
                ),
            )
        }
    };
    ElectionTiming {
        lease_duration_seconds: lease,
        renew_deadline_seconds: deadline,
        retry_period_seconds: WRANGLER_RETRY,
        summary,
        source,
    }
}

fn seconds(s: i64) -> String {
    if s >= 3600 && s % 3600 == 0 {
        format!("{}h", s / 3600)
    } else {
        format!("{s}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> ProductVersion {
        ProductVersion::parse(s).unwrap()
    }

    #[test]
    fn wrangler_defaults_from_a_45s_record() {
        let t = election_timing(Some(45), None, Some(&v("v1.29.4+k3s1")));
        assert_eq!(
            (t.lease_duration_seconds, t.renew_deadline_seconds),
            (45, 30)
        );
        assert_eq!(t.verify_timeout(), Duration::from_secs(75));
        assert!(
            t.describe()
                .starts_with("lease 45s, renew deadline 30s, retry 2s (wrangler's defaults")
        );
    }

    #[test]
    fn dev_mode_and_custom_durations() {
        let dev = election_timing(Some(45 * 3600), None, None);
        assert_eq!(dev.renew_deadline_seconds, 30 * 3600);
        assert_eq!(dev.verify_timeout(), Duration::from_secs(600));
        assert!(dev.describe().contains("lease 45h, renew deadline 30h"));
        let custom = election_timing(Some(15), None, Some(&v("v1.30.2+k3s1")));
        assert_eq!(custom.renew_deadline_seconds, 10);
        assert!(custom.source.contains("CATTLE_ELECTION_LEASE_DURATION"));
        assert_eq!(custom.verify_timeout(), Duration::from_secs(30));
        let old = election_timing(Some(15), None, Some(&v("v1.29.4+k3s1")));
        assert!(old.source.contains("does not read from the environment"));
        // The plan's text says it in plain words; the detail stays.
        assert!(
            old.summary.contains("lasts 15s instead of k3s's usual 45s"),
            "{}",
            old.summary
        );
        assert!(!old.summary.contains("wrangler"), "{}", old.summary);
    }

    #[test]
    fn a_released_record_takes_the_other_locks_duration() {
        let t = election_timing(Some(1), Some(45), None);
        assert_eq!(t.lease_duration_seconds, 45);
        assert!(t.source.contains("other lock's"));
        assert_eq!(
            election_timing(Some(1), Some(1), None).lease_duration_seconds,
            45
        );
    }
}
