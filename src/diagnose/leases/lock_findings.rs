//! The findings about one lock's record: its copies disagree, it was released, it expired,
//! its ConfigMap annotation is not a record. Each says what clients see and what to do.

use jiff::SignedDuration;

use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::model::lock::{LockRecord, WRANGLER_LEASE_DURATION};

use super::lock_inputs::{CLOCK_SKEW_ALLOWANCE, LockInputs};

pub(super) fn malformed_annotation_finding(
    input: &LockInputs<'_>,
    name: &str,
    why: &str,
) -> Finding {
    Finding::new(
        Severity::Error,
        FindingCode::LeaseRecordMalformed,
        format!("ConfigMap kube-system/{name}"),
        format!("the leader annotation of ConfigMap {name} is not a valid leader record: {why}"),
    )
    .fix(format!(
        "the next renewal rewrites it; if it persists, restart the {} service on the holder",
        input.distro.server_unit()
    ))
}

pub(super) fn copies_disagree_finding(
    name: &str,
    object: &str,
    lease: &LockRecord,
    config_map: &LockRecord,
) -> Finding {
    Finding::new(
        Severity::Error,
        FindingCode::LeaseCopiesDisagree,
        object,
        format!(
            "the ConfigMap copy of {name} names {} but the Lease copy names {}; client-go's multilock then \
             reports the holder as leaderelection.k8s.io/unknown, the current leader exits and the next \
             one is left to chance",
            shown(&config_map.holder_identity),
            shown(&lease.holder_identity)
        ),
    )
    .fix(format!(
        "set holderIdentity to the same server in both Lease kube-system/{name} and the \
         control-plane.alpha.kubernetes.io/leader annotation of ConfigMap kube-system/{name}"
    ))
}

pub(super) fn expired_finding(
    input: &LockInputs<'_>,
    name: &str,
    object: &str,
    record: &LockRecord,
    renewed_seconds_ago: Option<i64>,
) -> Finding {
    let ago = renewed_seconds_ago
        .map(|s| crate::age::short(SignedDuration::from_secs(s)))
        .unwrap_or_default();
    Finding::new(
        Severity::Error,
        FindingCode::LeaseExpired,
        object,
        format!(
            "{name} was last renewed by {} {ago} ago, longer than its {}s duration (+{}s skew allowance): \
             its holder has stopped renewing and no other server has taken over",
            record.holder_identity,
            record.duration().as_secs(),
            CLOCK_SKEW_ALLOWANCE.as_secs()
        ),
    )
    .fix(format!(
        "check the {} service on {} (journalctl -u {}) and that the other servers reach the API server",
        input.distro.server_unit(),
        record.holder_identity,
        input.distro.server_unit()
    ))
}

pub(super) fn released_finding(
    input: &LockInputs<'_>,
    name: &str,
    object: &str,
    record: &LockRecord,
) -> Finding {
    // A released lock is normal for a moment during a graceful restart; it is a problem once
    // candidates have had a full lease duration to take it.
    let since = record.renew_time.map(|t| input.now.duration_since(t));
    let stuck = since.is_none_or(|d| d > WRANGLER_LEASE_DURATION + CLOCK_SKEW_ALLOWANCE);
    let when = since
        .map(|d| format!(" {}", crate::age::relative(d)))
        .unwrap_or_default();
    let (severity, message) = if stuck {
        (
            Severity::Error,
            format!(
                "{name} was released{when} and no server has taken it since: its controllers run nowhere"
            ),
        )
    } else {
        (
            Severity::Warning,
            format!(
                "{name} was released{when} (a graceful restart); a server should take it within seconds"
            ),
        )
    };
    Finding::new(severity, FindingCode::LeaseReleased, object, message).fix(format!(
        "check that the {} service runs on the servers (journalctl -u {})",
        input.distro.server_unit(),
        input.distro.server_unit()
    ))
}

fn shown(holder: &str) -> String {
    if holder.is_empty() {
        "nobody (released)".to_string()
    } else {
        holder.to_string()
    }
}
