//! Which of serve's watches are failing, so that each failure is logged once when it starts
//! and once when the watch lists again.

use std::collections::BTreeMap;

use crate::input::watch::ClusterWatch;
use crate::input::watch::watch_failure::WatchFailure;

/// A watch failing since its first failed attempt, until it has listed again.
pub(super) struct FailureEpisode {
    since: std::time::Instant,
    attempts: u32,
}

/// One warning per failure episode of a watch (the first attempt's cause), however often the
/// watch is retried and however the cause is worded on the later attempts.
pub(super) fn report_failure(
    failing: &mut BTreeMap<String, FailureEpisode>,
    failure: WatchFailure,
) {
    if let Some(episode) = failing.get_mut(&failure.resource) {
        episode.attempts += 1;
        return;
    }
    tracing::warn!(
        resource = %failure.resource,
        reason = failure.reason.label(),
        "{}",
        failure.line
    );
    failing.insert(
        failure.resource,
        FailureEpisode {
            since: std::time::Instant::now(),
            attempts: 1,
        },
    );
}

/// Logs the watches that failed and have listed again since; whether there were any.
pub(super) fn report_recoveries(
    failing: &mut BTreeMap<String, FailureEpisode>,
    watch: &ClusterWatch,
) -> bool {
    if failing.is_empty() {
        return false;
    }
    let mut recovered = false;
    for health in watch.health() {
        if health.failing.is_some() || !health.synced {
            continue;
        }
        if let Some(episode) = failing.remove(&health.resource) {
            tracing::info!(
                resource = %health.resource,
                "watch {} works again after {} failed attempt(s) over {} s",
                health.resource,
                episode.attempts,
                episode.since.elapsed().as_secs()
            );
            recovered = true;
        }
    }
    recovered
}
