//! Leader-election records, read from a Lease or from a ConfigMap annotation.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::coordination::v1::Lease;
use serde::{Deserialize, Serialize};

/// Annotation in which client-go's ConfigMap lock keeps its record (client-go
/// `tools/leaderelection/resourcelock`, `LeaderElectionRecordAnnotationKey`).
pub(crate) const LEADER_ANNOTATION: &str = "control-plane.alpha.kubernetes.io/leader";

/// Label that marks the per-apiserver identity leases, which are not elections
/// (kube-apiserver's APIServerIdentity, kubernetes/kubernetes#114586).
pub(crate) const APISERVER_IDENTITY_LABEL: &str = "apiserver.kubernetes.io/identity";

/// wrangler's lease duration (`pkg/leader/leader.go`), used when a record has none.
pub(crate) const WRANGLER_LEASE_DURATION: SignedDuration = SignedDuration::from_secs(45);

/// One copy of client-go's `LeaderElectionRecord`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LockRecord {
    /// `os.Hostname()` of the holding server for k3s/RKE2 locks; `""` once released.
    pub holder_identity: String,
    pub lease_duration_seconds: Option<i64>,
    pub acquire_time: Option<Timestamp>,
    pub renew_time: Option<Timestamp>,
    pub transitions: Option<i64>,
}

/// The JSON shape of the annotation value (`resourcelock.LeaderElectionRecord`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AnnotationRecord {
    #[serde(default)]
    holder_identity: String,
    lease_duration_seconds: Option<i64>,
    acquire_time: Option<String>,
    renew_time: Option<String>,
    leader_transitions: Option<i64>,
}

impl LockRecord {
    /// The record as it was before its holder renewed it (no renewTime).
    pub(crate) fn without_renewal(&self) -> LockRecord {
        LockRecord {
            renew_time: None,
            ..self.clone()
        }
    }

    pub(crate) fn from_lease(lease: &Lease) -> LockRecord {
        let spec = lease.spec.clone().unwrap_or_default();
        LockRecord {
            holder_identity: spec.holder_identity.unwrap_or_default(),
            lease_duration_seconds: spec.lease_duration_seconds.map(i64::from),
            acquire_time: spec.acquire_time.map(|t| t.0),
            renew_time: spec.renew_time.map(|t| t.0),
            transitions: spec.lease_transitions.map(i64::from),
        }
    }

    /// Parses the annotation value; the error says what is wrong with it.
    pub(crate) fn from_annotation(value: &str) -> Result<LockRecord, String> {
        let raw: AnnotationRecord = serde_json::from_str(value).map_err(|e| e.to_string())?;
        let time = |field: &str, text: Option<String>| -> Result<Option<Timestamp>, String> {
            text.filter(|t| !t.is_empty())
                .map(|t| {
                    t.parse::<Timestamp>()
                        .map_err(|e| format!("{field} {t:?} is not an RFC 3339 time: {e}"))
                })
                .transpose()
        };
        Ok(LockRecord {
            holder_identity: raw.holder_identity,
            lease_duration_seconds: raw.lease_duration_seconds,
            acquire_time: time("acquireTime", raw.acquire_time)?,
            renew_time: time("renewTime", raw.renew_time)?,
            transitions: raw.leader_transitions,
        })
    }

    /// A graceful shutdown (`ReleaseOnCancel`) empties the holder.
    pub(crate) fn is_released(&self) -> bool {
        self.holder_identity.is_empty()
    }

    pub(crate) fn duration(&self) -> SignedDuration {
        self.lease_duration_seconds
            .filter(|s| *s > 0)
            .map(SignedDuration::from_secs)
            .unwrap_or(WRANGLER_LEASE_DURATION)
    }

    /// When the record stops being valid if nobody renews it. client-go judges validity on
    /// the time each candidate observed the change, not on `renewTime`; from outside,
    /// `renewTime` is the best available stand-in (client-go `leaderelection.go`, `tryAcquireOrRenew`).
    pub(crate) fn expires_at(&self) -> Option<Timestamp> {
        self.renew_time
            .and_then(|t| t.checked_add(self.duration()).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_annotation_record() {
        let r = LockRecord::from_annotation(
            r#"{"holderIdentity":"server-1","leaseDurationSeconds":45,"acquireTime":"2024-05-31T11:58:01Z","renewTime":"2024-05-31T12:10:33Z","leaderTransitions":2}"#,
        )
        .unwrap();
        assert_eq!(r.holder_identity, "server-1");
        assert_eq!(r.transitions, Some(2));
        assert_eq!(r.expires_at().unwrap().to_string(), "2024-05-31T12:11:18Z");
    }

    #[test]
    fn tolerates_newer_and_missing_fields() {
        let r = LockRecord::from_annotation(
            r#"{"holderIdentity":"","leaseDurationSeconds":1,"strategy":"OldestEmulationVersion"}"#,
        )
        .unwrap();
        assert!(r.is_released());
        assert_eq!(r.renew_time, None);
    }

    #[test]
    fn explains_a_bad_annotation() {
        assert!(LockRecord::from_annotation("not json").is_err());
        let err = LockRecord::from_annotation(r#"{"holderIdentity":"a","renewTime":"yesterday"}"#)
            .unwrap_err();
        assert!(err.contains("renewTime"), "{err}");
    }
}
